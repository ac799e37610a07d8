/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ELF file a traced process points offcpu at (what it maps, and their
 * debug files), opened so that it cannot hurt offcpu:
 *
 * - read (libelf's ELF_C_READ: pread), never mapped: a file truncated
 *   under offcpu is a short read, where a mapping of it was SIGBUS;
 * - only a regular file no larger than the limit, its headers checked
 *   against its size as opened (fstat) and against the limits before
 *   libelf allocates anything for them;
 * - every section's data charged to a read budget before it is read.
 */
#ifndef OFFCPU_ELF_FILE_H
#define OFFCPU_ELF_FILE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/limits.h"

struct elf_file {
	Elf *elf;
	uint64_t size; /* st_size as opened */
	uid_t uid;     /* its owner (0 for an image in memory) */
	size_t nr_sections;
	size_t shstrndx;
	const struct symbol_limits *limits;
	struct read_budget *budget;
	uint64_t *charged; /* a bit per section: its data is paid for */
};

/*
 * Opens fd (which must stay open until elf_file__close or
 * elf_file__detach). -ENOEXEC: not an ELF file this machine reads;
 * -EFBIG: over a limit; -E2BIG: over the budget; -EINVAL: a header
 * points outside the file.
 */
int elf_file__open(struct elf_file *f, int fd, const struct symbol_limits *limits,
		   struct read_budget *budget);
/* The same checks on an image in memory, which must outlive f (libelf writes to it). */
int elf_file__open_memory(struct elf_file *f, void *image, size_t size,
			  const struct symbol_limits *limits, struct read_budget *budget);
/* The section's data, read once and paid for once; NULL if it cannot be read or paid for. */
Elf_Data *elf_file__data(struct elf_file *f, Elf_Scn *scn);
/* The string at offset of string table section (its whole data paid for first); NULL if none. */
const char *elf_file__string(struct elf_file *f, size_t section, size_t offset);
/* The section's name; NULL if it has none. */
const char *elf_file__section_name(struct elf_file *f, const GElf_Shdr *shdr);
/*
 * Keeps the Elf (returned, the caller ends it) with what was read so far,
 * and lets go of the fd: libelf reads nothing more from it.
 */
Elf *elf_file__detach(struct elf_file *f);
void elf_file__close(struct elf_file *f);

#endif
