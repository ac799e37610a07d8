// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "symbols/elf_section.h"

Elf_Scn *elf_section__by_type(Elf *elf, unsigned int type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return scn;
	}
	return NULL;
}

Elf_Data *elf_section__by_name(Elf *elf, const char *name, uint64_t *addr)
{
	size_t strndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		n = elf_strptr(elf, strndx, shdr.sh_name);
		if (n && !strcmp(n, name)) {
			if (addr)
				*addr = shdr.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

size_t elf_section__build_id(Elf *elf, unsigned char id[ELF_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr note;
		size_t offset = 0, name_at, desc_at;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
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
