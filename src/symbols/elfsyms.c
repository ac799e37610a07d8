// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/array.h"
#include "lib/bsearch.h"
#include "symbols/elfsyms.h"
#include "symbols/proc_root.h"

/* Where Debian's -dbg and -dbgsym packages put separate debug files. */
#define DEBUG_ROOT "/usr/lib/debug"
#define BUILD_ID_MAX 64

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
	char build_id[2 * BUILD_ID_MAX + 1]; /* hex; empty when the file has none */
	bool has_dwarf;			     /* .debug_info in the file itself */
	int debug_fd;			     /* its verified separate debug file, or -1 */
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

static Elf_Scn *find_section(Elf *elf, unsigned int type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return scn;
	}
	return NULL;
}

/* The NT_GNU_BUILD_ID note; 0 when there is none. */
static size_t read_build_id(Elf *elf, unsigned char *id)
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
			    note.n_descsz <= BUILD_ID_MAX) {
				memcpy(id, (char *)data->d_buf + desc_at, note.n_descsz);
				return note.n_descsz;
			}
		}
	}
	return 0;
}

static Elf_Data *section_named(Elf *elf, const char *name, uint64_t *addr);

static bool is_debug_file_of(Elf *debug, const unsigned char *id, size_t id_len)
{
	unsigned char debug_id[BUILD_ID_MAX];

	return debug && elf_kind(debug) == ELF_K_ELF && read_build_id(debug, debug_id) == id_len &&
	       !memcmp(id, debug_id, id_len);
}

/* The CRC32 .gnu_debuglink asks of a file without a build ID to match. */
static bool crc_matches(int fd, uint32_t expected)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	return n == 0 && (uint32_t)crc == expected;
}

/*
 * A candidate debug file, kept only if it is the one: the same build ID, or
 * for a file without one, the CRC32 its .gnu_debuglink gives. Else closed.
 */
static int verified(int fd, const unsigned char *id, size_t id_len, uint32_t crc)
{
	Elf *debug;
	bool ok;

	if (fd < 0)
		return fd;
	debug = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = id_len ? is_debug_file_of(debug, id, id_len) : crc_matches(fd, crc);
	elf_end(debug);
	if (ok)
		return fd;
	close(fd);
	return -ENOENT;
}

/* By build ID: /usr/lib/debug/.build-id/ab/cdef....debug. */
static int open_debug_by_build_id(const unsigned char *id, size_t len)
{
	char path[sizeof(DEBUG_ROOT) + 2 * BUILD_ID_MAX + 32];
	size_t at, i;
	int fd;

	if (len < 2)
		return -ENOENT;
	at = (size_t)snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		at += (size_t)snprintf(path + at, sizeof(path) - at, "%02x", id[i]);
	snprintf(path + at, sizeof(path) - at, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return verified(fd < 0 ? -errno : fd, id, len, 0);
}

/* A file by name: inside the process's root when there is a process. */
static int open_named(uint32_t pid, const char *path)
{
	int fd;

	if (pid)
		return proc_root__open(pid, path, O_RDONLY);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * By .gnu_debuglink, where GDB looks: beside the file, in .debug/ beside it,
 * and under /usr/lib/debug with the file's directory.
 */
static int open_debug_by_link(Elf *elf, uint32_t pid, const char *file_path,
			      const unsigned char *id, size_t id_len)
{
	static const char *const formats[] = { "%.*s/%s", "%.*s/.debug/%s", DEBUG_ROOT "%.*s/%s" };
	uint64_t unused;
	Elf_Data *link = section_named(elf, ".gnu_debuglink", &unused);
	const char *name, *slash;
	char path[PATH_MAX];
	uint32_t crc;
	size_t name_len, i;
	int dir_len, fd;

	if (!link || !file_path || link->d_size < 8)
		return -ENOENT;
	name = link->d_buf;
	name_len = strnlen(name, link->d_size);
	/* The name, NUL-padded to 4 bytes, then its CRC32. */
	if (name_len == 0 || name_len >= link->d_size || strchr(name, '/') ||
	    ((name_len + 4) & ~3UL) + 4 > link->d_size)
		return -ENOENT;
	memcpy(&crc, (const char *)link->d_buf + ((name_len + 4) & ~3UL), sizeof(crc));
	slash = strrchr(file_path, '/');
	dir_len = slash ? (int)(slash - file_path) : 0;
	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		if ((size_t)snprintf(path, sizeof(path), formats[i], dir_len, file_path, name) >=
		    sizeof(path))
			continue;
		fd = verified(open_named(pid, path), id, id_len, crc);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

/* The separate debug file of a stripped file: by build ID, else by .gnu_debuglink. */
static int open_debug_file(Elf *elf, uint32_t pid, const char *file_path, const unsigned char *id,
			   size_t id_len)
{
	int fd = open_debug_by_build_id(id, id_len);

	return fd >= 0 ? fd : open_debug_by_link(elf, pid, file_path, id, id_len);
}

/* A stripped file's full symbol table, from its debug file. */
static int read_debug_symbols(int debug_fd, struct elfsyms *es)
{
	Elf *debug = elf_begin(debug_fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = debug ? find_section(debug, SHT_SYMTAB) : NULL;
	int err = scn ? read_symbols(debug, scn, es) : -ENOENT;

	if (err)
		drop_symbols(es);
	elf_end(debug);
	return err;
}

/* DWARF pointer encodings (LSB Core, "DWARF Extensions"). */
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

static Elf_Data *section_named(Elf *elf, const char *name, uint64_t *addr)
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
			*addr = shdr.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

static int32_t read_s32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t read_uleb(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/*
 * The pc_begin/pc_range encoding of the CIE at offset cie in .eh_frame:
 * the 'R' augmentation. -1 for anything but the 4-byte encodings GCC and
 * clang emit, which the caller then skips rather than guesses.
 */
static int fde_encoding(const unsigned char *frame, size_t size, size_t cie)
{
	const unsigned char *p, *end;
	const char *aug;
	uint32_t len;

	/* cie comes from the file: checked before it makes a pointer (fuzz_elf). */
	if (cie > size || size - cie < 9)
		return -1;
	p = frame + cie;
	memcpy(&len, p, 4);
	if (len == 0xffffffffU || cie + 4 + len > size || read_s32(p + 4) != 0)
		return -1;
	end = p + 4 + len;
	p += 9; /* length, CIE id, version */
	aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p++ >= end || aug[0] != 'z')
		return -1;
	read_uleb(&p, end); /* code alignment */
	read_uleb(&p, end); /* data alignment (sleb: only skipped) */
	read_uleb(&p, end); /* return address register */
	read_uleb(&p, end); /* augmentation data length */
	for (aug++; *aug && p < end; aug++) {
		if (*aug == 'R')
			return (*p & 0x0f) == DW_EH_PE_sdata4 || (*p & 0x0f) == DW_EH_PE_udata4
				   ? *p
				   : -1;
		if (*aug == 'L')
			p++;
		else if (*aug == 'P')
			return -1; /* a personality pointer before R: not worth decoding */
	}
	return -1;
}

/*
 * Function ranges from .eh_frame_hdr's sorted table and each FDE's range:
 * what groups the frames of one function that no symbol names. Only the
 * encodings GNU ld writes (table datarel|sdata4) are read.
 */
static int read_function_ranges(Elf *elf, struct elfsyms *es)
{
	uint64_t hdr_addr = 0, frame_addr = 0;
	Elf_Data *hdr = section_named(elf, ".eh_frame_hdr", &hdr_addr);
	Elf_Data *frame = section_named(elf, ".eh_frame", &frame_addr);
	const unsigned char *h, *f;
	uint32_t count, i;

	if (!hdr || !frame || !hdr->d_buf || !frame->d_buf || hdr->d_size < 12)
		return 0;
	h = hdr->d_buf;
	f = frame->d_buf;
	if (h[0] != 1 || h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return 0;
	memcpy(&count, h + 8, 4);
	if (12 + (uint64_t)count * 8 > hdr->d_size)
		return 0;
	es->functions = calloc(count ? count : 1, sizeof(*es->functions));
	if (!es->functions)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		uint64_t start = hdr_addr + read_s32(h + 12 + 8 * i);
		uint64_t fde = hdr_addr + read_s32(h + 16 + 8 * i) - frame_addr;
		uint32_t len;
		int enc;

		/* Offsets from the file wrap around: compare without adding (fuzz_elf). */
		if (fde > frame->d_size || frame->d_size - fde < 16)
			continue;
		memcpy(&len, f + fde, 4);
		if (len == 0xffffffffU || len < 12)
			continue;
		enc = fde_encoding(f, frame->d_size, fde + 4 - read_s32(f + fde + 4));
		if (enc < 0)
			continue;
		es->functions[es->nr_functions++] = (struct elf_symbol){
			.start = start,
			.size = (uint32_t)read_s32(f + fde + 12),
			.name = NULL,
		};
	}
	return 0;
}

static int load(Elf *elf, uint32_t pid, const char *path, struct elfsyms **out)
{
	unsigned char id[BUILD_ID_MAX];
	struct elfsyms *es;
	size_t id_len, i;
	Elf_Scn *scn;
	uint64_t unused;
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
	id_len = read_build_id(elf, id);
	for (i = 0; i < id_len; i++)
		snprintf(es->build_id + 2 * i, 3, "%02x", id[i]);
	es->has_dwarf = section_named(elf, ".debug_info", &unused) != NULL;
	scn = find_section(elf, SHT_SYMTAB);
	if (!scn || !es->has_dwarf)
		es->debug_fd = open_debug_file(elf, pid, path, id, id_len);
	if (!scn) {
		es->from_debug_file = es->debug_fd >= 0 && !read_debug_symbols(es->debug_fd, es);
		if (!es->from_debug_file)
			scn = find_section(elf, SHT_DYNSYM);
	}
	if (scn) {
		err = read_symbols(elf, scn, es);
		if (err)
			goto fail;
	}
	err = read_function_ranges(elf, es);
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
