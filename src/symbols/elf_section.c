// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "symbols/elf_section.h"

/*
 * A build ID note is 36 bytes, in a section of its own or among a few
 * others; larger note sections (SystemTap's probes) never hold it.
 */
#define NOTE_SECTION_MAX (64 << 10)

Elf_Scn *elf_section__by_type(struct elf_file *f, unsigned int type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return scn;
	}
	return NULL;
}

Elf_Scn *elf_section__find(struct elf_file *f, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		n = elf_file__section_name(f, &shdr);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

Elf_Data *elf_section__by_name(struct elf_file *f, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = elf_section__find(f, name);
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr))
		return NULL;
	if (addr)
		*addr = shdr.sh_addr;
	return elf_file__data(f, scn);
}

size_t elf_section__build_id(struct elf_file *f, unsigned char id[ELF_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr note;
		size_t offset = 0, name_at, desc_at;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
		    shdr.sh_size > NOTE_SECTION_MAX)
			continue;
		data = elf_file__data(f, scn);
		while (data && (offset = gelf_getnote(data, offset, &note, &name_at, &desc_at))) {
			if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_at, "GNU", 4) && note.n_descsz > 0 &&
			    note.n_descsz <= ELF_BUILD_ID_MAX) {
				memcpy(id, (char *)data->d_buf + desc_at, note.n_descsz);
				return note.n_descsz;
			}
		}
	}
	return 0;
}
