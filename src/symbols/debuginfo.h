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

struct debuginfo;

struct source_location {
	const char *file; /* interned; NULL when DWARF does not cover the address */
	uint32_t line;
	const struct frame_inline *inlined; /* interned; NULL: not in inlined code */
};

/*
 * The DWARF itself is read at the first lookup. -ENOENT when fd is no ELF
 * file. The fd may be closed afterwards.
 */
int debuginfo__open_fd(int fd, struct debuginfo **out);
/*
 * The source line of vaddr (an ELF virtual address) in the function the
 * symbol table names, and the functions inlined there, innermost first.
 */
void debuginfo__lookup(struct debuginfo *di, uint64_t vaddr, struct strpool *strings,
		       struct inline_pool *inlines, struct source_location *out);
void debuginfo__free(struct debuginfo *di);

#endif
