/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One function's range of addresses and its name, as each source of them
 * gives it: a file's symbol table (elfsyms.c), its unwind tables' function
 * ranges (ehframe.c, unnamed) and a JIT's perf map (perfmap.c). A header
 * of its own, so that ehframe.h, which elfsyms.c includes, need not
 * include elfsyms.h back.
 */
#ifndef OFFCPU_ELF_SYMBOL_H
#define OFFCPU_ELF_SYMBOL_H

#include <stdint.h>

struct elf_symbol {
	uint64_t start; /* ELF virtual address */
	uint64_t size;
	const char *name;
};

#endif
