/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ELF readers look up in a file: a section by type or by name,
 * and the GNU build ID note, which names the build a file came from. Data
 * is read through elf_file.h, so it is paid for and never mapped.
 */
#ifndef OFFCPU_ELF_SECTION_H
#define OFFCPU_ELF_SECTION_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_file.h"

/* The longest build ID read; GNU ld writes 20 bytes (SHA-1). */
#define ELF_BUILD_ID_MAX 64

/* The first section of that type (SHT_SYMTAB...); NULL if none. */
Elf_Scn *elf_section__by_type(struct elf_file *f, unsigned int type);
/* The SHT_PROGBITS section so named, its data unread; NULL if none. */
Elf_Scn *elf_section__find(struct elf_file *f, const char *name);
/* The SHT_PROGBITS section so named: its data (NULL: none), its address in addr (may be NULL). */
Elf_Data *elf_section__by_name(struct elf_file *f, const char *name, uint64_t *addr);
/* The NT_GNU_BUILD_ID note's bytes, copied to id; how many, 0 when the file has none. */
size_t elf_section__build_id(struct elf_file *f, unsigned char id[ELF_BUILD_ID_MAX]);

#endif
