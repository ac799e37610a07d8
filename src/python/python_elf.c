// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "python/python_elf.h"
#include "symbols/elf_file.h"

/* Dynamic symbols only: every CPython exports these, stripped or not. */
static void find_symbols(struct elf_file *f, struct python_elf *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		Elf_Data *data;
		size_t i, nr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !shdr.sh_entsize)
			continue;
		data = elf_file__data(f, scn);
		if (!data)
			continue;
		nr = data->d_size / shdr.sh_entsize;
		for (i = 0; i < nr; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
				continue;
			name = elf_file__string(f, shdr.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_PyRuntime"))
				out->runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				out->version = sym.st_value;
			else if (!strcmp(name, "PyCode_Type"))
				out->code_type = sym.st_value;
		}
	}
}

static void find_loads(struct elf_file *f, struct python_elf *out)
{
	size_t i, nr;
	GElf_Phdr ph;

	if (elf_getphdrnum(f->elf, &nr))
		return;
	for (i = 0; i < nr && out->nr_loads < PYTHON_ELF_MAX_LOADS; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->loads[out->nr_loads].vaddr = ph.p_vaddr;
		out->loads[out->nr_loads].offset = ph.p_offset;
		out->loads[out->nr_loads].filesz = ph.p_filesz;
		out->nr_loads++;
	}
}

int python_elf__read(int fd, const struct symbol_limits *limits, struct python_elf *out)
{
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	struct elf_file f;
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_file__open(&f, fd, limits, &budget);
	if (err)
		return err;
	find_symbols(&f, out);
	find_loads(&f, out);
	elf_file__close(&f);
	return out->runtime ? 0 : -ENOENT;
}

int python_elf__vaddr(const struct python_elf *e, uint64_t file_offset, uint64_t *vaddr)
{
	unsigned int i;

	for (i = 0; i < e->nr_loads; i++) {
		/* A mapping starts at a page boundary at or below the segment's offset. */
		uint64_t page_offset = e->loads[i].offset & ~0xfffULL;

		if (file_offset >= page_offset &&
		    file_offset < e->loads[i].offset + e->loads[i].filesz) {
			*vaddr = e->loads[i].vaddr - (e->loads[i].offset - file_offset);
			return 0;
		}
	}
	return -ENOENT;
}
