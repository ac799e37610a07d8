// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bsearch.h"
#include "symbols/debugfile.h"
#include "symbols/ehframe.h"
#include "symbols/elf_section.h"
#include "symbols/elfsyms.h"

struct load_segment {
	uint64_t file_offset;
	uint64_t vaddr;
	uint64_t size;
};

struct elfsyms {
	struct elf_symbol *syms;
	size_t nr;
	bool from_debug_file;
	struct elf_symbol *functions; /* .eh_frame ranges, unnamed, sorted */
	size_t nr_functions;
	struct load_segment *segments;
	size_t nr_segments;
	char build_id[2 * ELF_BUILD_ID_MAX + 1]; /* hex; empty when the file has none */
	bool has_dwarf;				 /* .debug_info in the file itself */
	int debug_fd;				 /* its verified separate debug file, or -1 */
};

/* Aliases and nested symbols share addresses; look back this far for one that holds the address. */
#define OVERLAP_LOOKBACK 16

static int compare_symbols(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static int read_segments(Elf *elf, struct elfsyms *es)
{
	size_t nr, i;

	if (elf_getphdrnum(elf, &nr))
		return -EINVAL;
	es->segments = calloc(nr ? nr : 1, sizeof(*es->segments));
	if (!es->segments)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		es->segments[es->nr_segments++] = (struct load_segment){
			.file_offset = phdr.p_offset,
			.vaddr = phdr.p_vaddr,
			.size = phdr.p_filesz,
		};
	}
	return 0;
}

static void drop_symbols(struct elfsyms *es)
{
	size_t i;

	for (i = 0; i < es->nr; i++)
		free((char *)es->syms[i].name);
	free(es->syms);
	es->syms = NULL;
	es->nr = 0;
}

static int read_symbols(Elf *elf, Elf_Scn *scn, struct elfsyms *es)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t count, i, cap;

	if (!gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	count = shdr.sh_size / shdr.sh_entsize;
	cap = count ? count : 1;
	es->syms = calloc(cap, sizeof(*es->syms));
	if (!es->syms)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		/* A symbol without a size cannot bound an address. */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0 ||
		    sym.st_size == 0 || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !name[0] || name[0] == '@')
			continue;
		/* "clock_nanosleep@@GLIBC_2.17": the version is not part of the name. */
		name = strndup(name, strcspn(name, "@"));
		if (!name)
			return -ENOMEM;
		es->syms[es->nr++] = (struct elf_symbol){
			.start = sym.st_value,
			.size = sym.st_size,
			.name = name,
		};
	}
	qsort(es->syms, es->nr, sizeof(*es->syms), compare_symbols);
	return 0;
}

/* A stripped file's full symbol table, from its debug file. */
static int read_debug_symbols(int debug_fd, struct elfsyms *es)
{
	Elf *debug = elf_begin(debug_fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = debug ? elf_section__by_type(debug, SHT_SYMTAB) : NULL;
	int err = scn ? read_symbols(debug, scn, es) : -ENOENT;

	if (err)
		drop_symbols(es);
	elf_end(debug);
	return err;
}

static int load(Elf *elf, uint32_t pid, const char *path, struct elfsyms **out)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	struct elfsyms *es;
	size_t id_len, i;
	Elf_Scn *scn;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	es->debug_fd = -1;
	err = read_segments(elf, es);
	if (err)
		goto fail;
	id_len = elf_section__build_id(elf, id);
	for (i = 0; i < id_len; i++)
		snprintf(es->build_id + 2 * i, 3, "%02x", id[i]);
	es->has_dwarf = elf_section__by_name(elf, ".debug_info", NULL) != NULL;
	scn = elf_section__by_type(elf, SHT_SYMTAB);
	if (!scn || !es->has_dwarf)
		es->debug_fd = debugfile__open(elf, pid, path);
	if (!scn) {
		es->from_debug_file = es->debug_fd >= 0 && !read_debug_symbols(es->debug_fd, es);
		if (!es->from_debug_file)
			scn = elf_section__by_type(elf, SHT_DYNSYM);
	}
	if (scn) {
		err = read_symbols(elf, scn, es);
		if (err)
			goto fail;
	}
	err = ehframe__read_functions(elf, &es->functions, &es->nr_functions);
	if (err)
		goto fail;
	*out = es;
	return 0;
fail:
	elfsyms__free(es);
	return err;
}

int elfsyms__open_fd(int fd, uint32_t pid, const char *path, struct elfsyms **out)
{
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = load(elf, pid, path, out);
	elf_end(elf);
	return err;
}

int elfsyms__open_memory(const void *image, size_t size, struct elfsyms **out)
{
	char *copy = malloc(size);
	Elf *elf;
	int err;

	/* libelf wants a writable buffer; the vdso is read-only. */
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	err = load(elf, 0, NULL, out);
	elf_end(elf);
	free(copy);
	return err;
}

int elfsyms__offset_to_vaddr(const struct elfsyms *es, uint64_t file_offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < es->nr_segments; i++) {
		const struct load_segment *s = &es->segments[i];

		if (file_offset >= s->file_offset && file_offset < s->file_offset + s->size) {
			*vaddr = file_offset - s->file_offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_symbol *elfsyms__find(const struct elfsyms *es, uint64_t vaddr)
{
	const struct elf_symbol *last = BSEARCH_FLOOR(es->syms, es->nr, start, vaddr);
	size_t at_or_below = last ? (size_t)(last - es->syms) + 1 : 0, i;

	for (i = at_or_below; i > 0 && at_or_below - i < OVERLAP_LOOKBACK; i--) {
		const struct elf_symbol *s = &es->syms[i - 1];

		if (vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

size_t elfsyms__count(const struct elfsyms *es)
{
	return es->nr;
}

bool elfsyms__has_dwarf(const struct elfsyms *es)
{
	return es->has_dwarf;
}

int elfsyms__take_debug_fd(struct elfsyms *es)
{
	int fd = es->debug_fd;

	es->debug_fd = -1;
	return fd;
}

const char *elfsyms__build_id(const struct elfsyms *es)
{
	return es->build_id;
}

bool elfsyms__from_debug_file(const struct elfsyms *es)
{
	return es->from_debug_file;
}

const struct elf_symbol *elfsyms__symbol_containing(const struct elf_symbol *sorted, size_t nr,
						    uint64_t addr)
{
	const struct elf_symbol *s = BSEARCH_FLOOR(sorted, nr, start, addr);

	return s && addr - s->start < s->size ? s : NULL;
}

const struct elf_symbol *elfsyms__find_function(const struct elfsyms *es, uint64_t vaddr)
{
	return elfsyms__symbol_containing(es->functions, es->nr_functions, vaddr);
}

void elfsyms__free(struct elfsyms *es)
{
	if (!es)
		return;
	drop_symbols(es);
	if (es->debug_fd >= 0)
		close(es->debug_fd);
	free(es->functions);
	free(es->segments);
	free(es);
}
