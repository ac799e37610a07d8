/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CPython code object read from its process's memory: its
 * qualified name, file, first line and line table, and the fields that
 * tell whether the object at that address is still the one read. Memory
 * is read through struct python_memory, so tests feed images they build.
 */
#ifndef OFFCPU_PYTHON_CODE_H
#define OFFCPU_PYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python/python_layout.h"

struct python_memory {
	/* len bytes at addr of the process into buf: 0, or -errno (-EFAULT if short). */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Longest name or file kept, in characters: longer ones are cut there. */
#define PYTHON_NAME_MAX 1024
/* Largest line table read: a function of 100,000 lines has about 300 KB. */
#define PYTHON_LINES_MAX (1 << 20)

/* What changes when the address holds another code object than the one read. */
struct python_code_id {
	uint64_t type, filename, name, qualname, linetable;
	int32_t firstlineno;
};

struct python_code {
	uint64_t addr;
	struct python_code_id id;
	char *qualname; /* UTF-8 */
	char *filename;
	int32_t firstlineno;
	uint8_t *lines;
	size_t lines_size;
};

/*
 * The identity fields of the code object at addr. -EFAULT when it cannot
 * be read; -EINVAL when code_type is known (nonzero) and the object at
 * addr is not of that type; -ESTALE when it is freed (its reference count
 * is not one a live object has).
 */
int python_code__id(const struct python_code_layout *l, const struct python_memory *m,
		    uint64_t addr, uint64_t code_type, struct python_code_id *out);
/*
 * Reads it whole; its strings are freed by python_code__clear. -ESTALE
 * when it is freed, or freed while it was read (its header changed).
 */
int python_code__read(const struct python_code_layout *l, const struct python_memory *m,
		      uint64_t addr, uint64_t code_type, struct python_code *out);
bool python_code__same(const struct python_code_id *a, const struct python_code_id *b);
/*
 * The line of a frame's instruction: instr is the frame's instruction
 * pointer (3.11+), or its f_lasti (frames.instr_is_int); 0 if unknown.
 */
uint32_t python_code__line(const struct python_code *c, const struct python_layout *l,
			   uint64_t instr);
/* The byte offset of the instruction in the code (what python_code__line looks up). */
uint32_t python_code__offset(const struct python_code *c, const struct python_layout *l,
			     uint64_t instr);
void python_code__clear(struct python_code *c);

/*
 * The str object at addr as UTF-8 (a compact str: every name and file a
 * code object holds is one), cut at PYTHON_NAME_MAX characters. -EINVAL
 * for one that is not a compact str; -ENOMEM.
 */
int python_code__string(const struct python_code_layout *l, const struct python_memory *m,
			uint64_t addr, char **out);

#endif
