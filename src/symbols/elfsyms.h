/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the symbolizer knows of one ELF file (libelf): its function symbols
 * (from .symtab, else its separate debug file's, else .dynsym) or, asked
 * for, its variables, its load
 * segments to turn file offsets into addresses, the function ranges of its
 * unwind tables (ehframe.c), its build ID, and where its DWARF is: in the
 * file, or in the debug file debugfile.c found.
 */
#ifndef OFFCPU_ELFSYMS_H
#define OFFCPU_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_symbol.h"
#include "symbols/limits.h"

struct elfsyms;

/* Whose file it is, and what reading it may cost. */
struct elfsyms_opts {
	uint32_t pid;	  /* its debug link is looked up in this process's root (0: offcpu's) */
	const char *path; /* under the file's name there; NULL: no debug link is followed */
	const struct symbol_limits *limits;
	struct read_budget *budget; /* for the file and its debug file */
	/*
	 * Its variables (STT_OBJECT) instead of its functions, and no unwind
	 * tables: what names the lock at an address (src/objects/).
	 */
	bool objects;
};

/*
 * Reads .symtab; a stripped file's from its separate debug file (see
 * debugfile.h), else its .dynsym. Symbols over the limits are skipped
 * (elfsyms__skipped), and so is the rest of the table once the budget is
 * spent (which then says exhausted). The fd may be closed afterwards.
 * Errors are elf_file__open's (elf_file.h), and -ENOMEM.
 */
int elfsyms__open_fd(int fd, const struct elfsyms_opts *opts, struct elfsyms **out);
/* An ELF image in memory, such as the vdso. */
int elfsyms__open_memory(const void *image, size_t size, const struct elfsyms_opts *opts,
			 struct elfsyms **out);
/* A file offset of a mapped page to the ELF virtual address; -ENOENT if unloaded. */
int elfsyms__offset_to_vaddr(const struct elfsyms *es, uint64_t file_offset, uint64_t *vaddr);
/* Only a symbol whose [start, start + size) holds vaddr; else NULL. */
const struct elf_symbol *elfsyms__find(const struct elfsyms *es, uint64_t vaddr);
size_t elfsyms__count(const struct elfsyms *es);
/* Function symbols not kept: over the limits, or past the budget. */
size_t elfsyms__skipped(const struct elfsyms *es);
/*
 * In a table sorted by start whose ranges do not overlap, the entry whose
 * [start, start + size) holds addr; NULL if none does.
 */
const struct elf_symbol *elfsyms__symbol_containing(const struct elf_symbol *sorted, size_t nr,
						    uint64_t addr);
/*
 * The function holding vaddr by the unwind tables (.eh_frame), for code
 * no symbol names: name is NULL. NULL when no FDE covers vaddr.
 */
const struct elf_symbol *elfsyms__find_function(const struct elfsyms *es, uint64_t vaddr);
/* The file has DWARF of its own (.debug_info). */
bool elfsyms__has_dwarf(const struct elfsyms *es);
/*
 * Its verified separate debug file, still open from the lookup (not found
 * again by name, where it could have been swapped since): the caller owns
 * it now. -1 if it has none, or it was taken.
 */
int elfsyms__take_debug_fd(struct elfsyms *es);
/* The GNU build ID in hex; "" when the file has none. */
const char *elfsyms__build_id(const struct elfsyms *es);
/* Its symbols came from a separate debug file. */
bool elfsyms__from_debug_file(const struct elfsyms *es);
void elfsyms__free(struct elfsyms *es);

#endif
