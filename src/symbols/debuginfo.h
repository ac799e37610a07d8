/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source lines and inline frames of one ELF file's DWARF (libdw): the
 * file itself when built with -g, or its separate debug file.
 */
#ifndef OFFCPU_DEBUGINFO_H
#define OFFCPU_DEBUGINFO_H

#include <stdint.h>

#include "lib/inline_pool.h"
#include "lib/strpool.h"
#include "symbols/limits.h"

struct debuginfo;

struct source_location {
	const char *file; /* interned; NULL when DWARF does not cover the address */
	uint32_t line;
	const struct frame_inline *inlined; /* interned; NULL: not in inlined code */
};

/*
 * Reads fd's DWARF sections into memory now, within the budget (paying
 * for their decompressed size too); they are parsed at the first lookup.
 * The fd may be closed afterwards, the file truncated: nothing is mapped.
 * Errors are elf_file__open's (elf_file.h), -E2BIG past the budget.
 */
int debuginfo__open_fd(int fd, const struct symbol_limits *limits, struct read_budget *budget,
		       struct debuginfo **out);
/*
 * The source line of vaddr (an ELF virtual address) in the function the
 * symbol table names, and the functions inlined there, innermost first.
 */
void debuginfo__lookup(struct debuginfo *di, uint64_t vaddr, struct strpool *strings,
		       struct inline_pool *inlines, struct source_location *out);
void debuginfo__free(struct debuginfo *di);

#endif
