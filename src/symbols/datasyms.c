// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "symbols/datasyms.h"
#include "symbols/elf_file.h"
#include "symbols/limits.h"

unsigned int datasyms__parse_version(const char *text, size_t len)
{
	unsigned int v = 0;
	size_t i;

	for (i = 0; i < len && text[i] >= '0' && text[i] <= '9' && v < 100000; i++)
		v = v * 10 + (unsigned int)(text[i] - '0');
	return v;
}

static void find_names(struct elf_file *f, Elf_Scn *scn, const GElf_Shdr *shdr,
		       const char *const *names, size_t nr, struct datasyms *out)
{
	Elf_Data *data = elf_file__data(f, scn);
	size_t count, i, j;

	if (!data || !shdr->sh_entsize)
		return;
	count = data->d_size / shdr->sh_entsize;
	for (i = 0; i < count; i++) {
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_name)
			continue;
		name = elf_file__string(f, shdr->sh_link, sym.st_name);
		if (!name)
			continue;
		for (j = 0; j < nr; j++) {
			if (!out->found[j] && !strcmp(name, names[j])) {
				out->found[j] = true;
				out->vaddr[j] = sym.st_value;
			}
		}
	}
}

static void find_version(struct elf_file *f, Elf_Scn *scn, const char *prefix, struct datasyms *out)
{
	Elf_Data *data = elf_file__data(f, scn);
	size_t plen = strlen(prefix);
	const char *p, *end;

	if (!data || !data->d_buf || !plen)
		return;
	p = data->d_buf;
	end = p + data->d_size;
	while (p < end && !out->version) {
		const char *hit = memmem(p, (size_t)(end - p), prefix, plen);

		const char *num;

		if (!hit || hit + plen + 1 >= end)
			return;
		/* "PREFIX 15.20 ...": one blank, then the number (a prefix has none: it is a
		 * token). */
		num = hit + plen + 1;
		/* A string that starts there: the section's start or a NUL before it. */
		if ((hit == data->d_buf || hit[-1] == '\0') && hit[plen] == ' ' && *num >= '0' &&
		    *num <= '9')
			out->version = datasyms__parse_version(num, (size_t)(end - num));
		p = hit + 1;
	}
}

int datasyms__lookup(int fd, const char *const *names, size_t nr, const char *version_prefix,
		     struct datasyms *out)
{
	struct symbol_limits limits;
	struct read_budget budget;
	struct elf_file f;
	Elf_Scn *scn = NULL;
	size_t i, phnum;
	int err;

	memset(out, 0, sizeof(*out));
	if (nr > DATASYMS_MAX)
		return -EINVAL;
	limits__defaults(&limits);
	budget.left = limits.max_file_spend_bytes;
	budget.exhausted = false;
	err = elf_file__open(&f, fd, &limits, &budget);
	if (err)
		return err;
	if (!elf_getphdrnum(f.elf, &phnum)) {
		for (i = 0; i < phnum && out->nr_loads < DATASYMS_MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(f.elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			out->loads[out->nr_loads].vaddr = ph.p_vaddr;
			out->loads[out->nr_loads].offset = ph.p_offset;
			out->loads[out->nr_loads].filesz = ph.p_filesz;
			out->nr_loads++;
		}
	}
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_DYNSYM || shdr.sh_type == SHT_SYMTAB) {
			find_names(&f, scn, &shdr, names, nr, out);
			continue;
		}
		name = elf_file__section_name(&f, &shdr);
		if (version_prefix && name && !strcmp(name, ".rodata") &&
		    shdr.sh_type == SHT_PROGBITS)
			find_version(&f, scn, version_prefix, out);
	}
	elf_file__close(&f);
	return 0;
}

bool datasyms__offset_to_vaddr(const struct datasyms *d, uint64_t offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < d->nr_loads; i++) {
		/* Mapped pages start at the segment's page-aligned offset. */
		uint64_t start = d->loads[i].offset & ~4095ULL;

		if (offset >= start && offset < d->loads[i].offset + d->loads[i].filesz) {
			*vaddr = d->loads[i].vaddr - (d->loads[i].offset - offset);
			return true;
		}
	}
	return false;
}
