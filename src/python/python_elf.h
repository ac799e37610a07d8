/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Is this ELF file CPython (the interpreter with the runtime
 * linked in, or libpython)? Its _PyRuntime, Py_Version and PyCode_Type,
 * which every CPython exports, and its load segments.
 */
#ifndef OFFCPU_PYTHON_ELF_H
#define OFFCPU_PYTHON_ELF_H

#include <stdint.h>

#include "symbols/limits.h"

#define PYTHON_ELF_MAX_LOADS 16

struct python_elf {
	uint64_t runtime;   /* ELF virtual addresses; 0: not exported */
	uint64_t version;   /* Py_Version (3.11+) */
	uint64_t code_type; /* PyCode_Type */
	struct {
		uint64_t vaddr, offset, filesz;
	} loads[PYTHON_ELF_MAX_LOADS];
	unsigned int nr_loads;
};

/* -ENOENT for a file without _PyRuntime; elf_file__open's errors. */
int python_elf__read(int fd, const struct symbol_limits *limits, struct python_elf *out);
/* The ELF virtual address mapped at file_offset; -ENOENT if no load segment has it. */
int python_elf__vaddr(const struct python_elf *e, uint64_t file_offset, uint64_t *vaddr);

#endif
