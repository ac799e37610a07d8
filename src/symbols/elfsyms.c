// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bsearch.h"
#include "symbols/debugfile.h"
#include "symbols/ehframe.h"
#include "symbols/elf_file.h"
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
	size_t skipped;				 /* function symbols over a limit */
	bool objects;				 /* syms are variables (elfsyms_opts) */
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

	/* Counted and paid for when the file was opened (elf_file.c). */
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

static bool wanted(const struct elfsyms *es, int type)
{
	if (es->objects)
		return type == STT_OBJECT;
	return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/*
 * The function (or variable) symbols of scn, each name copied without its version. Past
 * the limits (symbols, name length) symbols are skipped; past the budget
 * the reading stops there, with what was read so far.
 */
static int read_symbols(struct elf_file *f, Elf_Scn *scn, struct elfsyms *es)
{
	const struct symbol_limits *limits = f->limits;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t count, i, cap;

	if (!gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0)
		return -EINVAL;
	count = shdr.sh_size / shdr.sh_entsize;
	cap = count < limits->max_symbols ? count : limits->max_symbols;
	if (read_budget__charge(f->budget, (uint64_t)cap * sizeof(*es->syms)))
		return -E2BIG;
	data = elf_file__data(f, scn);
	if (!data)
		return f->budget->exhausted ? -E2BIG : -EINVAL;
	es->syms = calloc(cap ? cap : 1, sizeof(*es->syms));
	if (!es->syms)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name, *version;
		size_t len;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		/* A symbol without a size cannot bound an address. */
		if (!wanted(es, type) || sym.st_value == 0 || sym.st_size == 0 ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_file__string(f, shdr.sh_link, sym.st_name);
		if (!name && f->budget->exhausted)
			break;
		if (!name || !name[0] || name[0] == '@')
			continue;
		/* "clock_nanosleep@@GLIBC_2.17": the version is not part of the name. */
		len = strnlen(name, limits->max_name_len + 1);
		version = memchr(name, '@', len);
		if (version)
			len = (size_t)(version - name);
		if (len > limits->max_name_len || es->nr == cap) {
			es->skipped++;
			continue;
		}
		if (read_budget__charge(f->budget, len + 1))
			break;
		name = strndup(name, len);
		if (!name)
			return -ENOMEM;
		es->syms[es->nr++] = (struct elf_symbol){
			.start = sym.st_value,
			.size = sym.st_size,
			.name = name,
		};
	}
	/* What the budget left unread, counted as skipped too. */
	if (i < count)
		es->skipped += count - i;
	qsort(es->syms, es->nr, sizeof(*es->syms), compare_symbols);
	return 0;
}

/* A stripped file's full symbol table, from its debug file. */
static int read_debug_symbols(int debug_fd, const struct elf_file *f, struct elfsyms *es)
{
	struct elf_file debug;
	Elf_Scn *scn;
	int err = elf_file__open(&debug, debug_fd, f->limits, f->budget);

	if (err)
		return err;
	scn = elf_section__by_type(&debug, SHT_SYMTAB);
	err = scn ? read_symbols(&debug, scn, es) : -ENOENT;
	if (err)
		drop_symbols(es);
	elf_file__close(&debug);
	return err;
}

static int load(struct elf_file *f, const struct elfsyms_opts *opts, struct elfsyms **out)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	struct elfsyms *es;
	size_t id_len, i;
	Elf_Scn *scn;
	int err;

	es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	es->debug_fd = -1;
	es->objects = opts->objects;
	err = read_segments(f->elf, es);
	if (err)
		goto fail;
	id_len = elf_section__build_id(f, id);
	for (i = 0; i < id_len; i++)
		snprintf(es->build_id + 2 * i, 3, "%02x", id[i]);
	/* Only whether there is one: it is read (and paid for) if a line is ever looked up. */
	es->has_dwarf = elf_section__find(f, ".debug_info") != NULL;
	scn = elf_section__by_type(f, SHT_SYMTAB);
	if (!scn || !es->has_dwarf)
		es->debug_fd = debugfile__open(f, opts->pid, opts->path);
	if (!scn) {
		es->from_debug_file = es->debug_fd >= 0 && !read_debug_symbols(es->debug_fd, f, es);
		if (!es->from_debug_file)
			scn = elf_section__by_type(f, SHT_DYNSYM);
	}
	if (scn) {
		err = read_symbols(f, scn, es);
		if (err == -E2BIG || err == -EINVAL) {
			drop_symbols(es);
			err = 0;
		}
		if (err)
			goto fail;
	}
	if (!es->objects) {
		err = ehframe__read_functions(f, &es->functions, &es->nr_functions);
		if (err)
			goto fail;
	}
	*out = es;
	return 0;
fail:
	elfsyms__free(es);
	return err;
}

int elfsyms__open_fd(int fd, const struct elfsyms_opts *opts, struct elfsyms **out)
{
	struct elf_file f;
	int err = elf_file__open(&f, fd, opts->limits, opts->budget);

	if (err)
		return err;
	err = load(&f, opts, out);
	elf_file__close(&f);
	return err;
}

int elfsyms__open_memory(const void *image, size_t size, const struct elfsyms_opts *opts,
			 struct elfsyms **out)
{
	char *copy = malloc(size);
	struct elf_file f;
	int err;

	/* libelf wants a writable buffer; the vdso is read-only. */
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	err = elf_file__open_memory(&f, copy, size, opts->limits, opts->budget);
	if (!err) {
		err = load(&f, opts, out);
		elf_file__close(&f);
	}
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

size_t elfsyms__skipped(const struct elfsyms *es)
{
	return es->skipped;
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
