// SPDX-License-Identifier: GPL-2.0
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <endian.h>
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/array.h"
#include "lib/hash_table.h"
#include "symbols/debugfile.h"
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "symbols/elf_file.h"

/* One address range of one inlined subroutine, and how deep it is nested. */
struct inline_range {
	uint64_t low;
	uint64_t high;
	Dwarf_Off die;
	uint32_t depth;
};

/*
 * The inlined subroutines of one compile unit. dwarf_getscopes() walks
 * the unit's whole tree for every address (80 us a frame in libc here);
 * walking it once per unit and searching the ranges after costs that once.
 */
struct unit_inlines {
	Dwarf_Off unit;
	struct inline_range *ranges;
	size_t nr;
	size_t cap;
};

/*
 * An ELF file of one 1-byte .debug_line: libdw makes a Dwarf of it, in
 * which nothing is ever found.
 */
struct empty_image {
	Elf64_Ehdr ehdr;
	Elf64_Shdr shdr[3];
	char names[sizeof("\0.shstrtab\0.debug_line")];
	char line[1];
};

struct debuginfo {
	Elf *elf;
	Dwarf *dwarf;
	Dwarf *no_alt; /* the alt file libdw is given instead of one by name */
	Elf *no_alt_elf;
	struct empty_image *no_alt_image;
	bool tried;		  /* dwarf_begin_elf ran */
	struct hash_table *units; /* unit offset -> unit_inlines */
	size_t nr_ranges;	  /* in all of them */
};

/* Deeper inline nesting than this keeps its outer part. */
#define MAX_INLINE_CHAIN 32
#define MAX_DIE_DEPTH 64
/*
 * Inlined ranges kept per unit and per file. libc's largest unit has a
 * few thousand; many DIEs can share one long range list, so a small
 * hostile file could otherwise ask for billions (found by fuzz_elf).
 */
#define MAX_UNIT_RANGES (1 << 18)
#define MAX_FILE_RANGES (1 << 22)

static bool is_dwarf_section(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8) ||
	       !strcmp(name, ".gnu_debugaltlink");
}

/* What libdw will allocate to decompress the section: the size its header gives. */
static uint64_t decompressed_size(Elf_Scn *scn, const GElf_Shdr *shdr, const char *name,
				  const Elf_Data *data)
{
	const unsigned char *p = data->d_buf;
	GElf_Chdr chdr;
	uint64_t size = 0;
	int i;

	if (shdr->sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &chdr) ? chdr.ch_size : UINT64_MAX;
	/* The GNU way before SHF_COMPRESSED: "ZLIB", then the size in big-endian. */
	if (!strncmp(name, ".zdebug_", 8)) {
		if (data->d_size < 12 || memcmp(p, "ZLIB", 4))
			return UINT64_MAX;
		for (i = 4; i < 12; i++)
			size = size << 8 | p[i];
		return size;
	}
	return 0;
}

/*
 * Reads every DWARF section now, paying for it and for what decompressing
 * it will take, so that libdw later needs nothing more from the file.
 */
static int read_dwarf_sections(struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err;

	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_file__section_name(f, &shdr);
		if (!name || !is_dwarf_section(name))
			continue;
		data = elf_file__data(f, scn);
		if (!data)
			return f->budget->exhausted ? -E2BIG : -EINVAL;
		err = read_budget__charge(f->budget, decompressed_size(scn, &shdr, name, data));
		if (err)
			return err;
	}
	return 0;
}

int debuginfo__open_fd(int fd, const struct symbol_limits *limits, struct read_budget *budget,
		       struct debuginfo **out)
{
	struct debuginfo *di;
	struct elf_file f;
	int err = elf_file__open(&f, fd, limits, budget);

	if (err)
		return err;
	err = read_dwarf_sections(&f);
	di = err ? NULL : calloc(1, sizeof(*di));
	if (!di) {
		elf_file__close(&f);
		return err ?: -ENOMEM;
	}
	/*
	 * Read, not mapped, and detached from the fd: the file may be closed,
	 * truncated or replaced before the first lookup, however many stay.
	 */
	di->elf = elf_file__detach(&f);
	*out = di;
	return 0;
}

static uint64_t hash_offset(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(Dwarf_Off), 0);
}

static bool equal_offset(const void *a, const void *b)
{
	return *(const Dwarf_Off *)a == *(const Dwarf_Off *)b;
}

static void add_ranges(struct debuginfo *di, struct unit_inlines *u, Dwarf_Die *die, uint32_t depth)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t at = 0;

	while ((at = dwarf_ranges(die, at, &base, &low, &high)) > 0) {
		if (u->nr == MAX_UNIT_RANGES || di->nr_ranges == MAX_FILE_RANGES)
			return;
		if (u->nr == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;
			struct inline_range *grown = realloc(u->ranges, cap * sizeof(*grown));

			/* Out of memory: the unit's inline frames stay incomplete. */
			if (!grown)
				return;
			u->ranges = grown;
			u->cap = cap;
		}
		u->ranges[u->nr++] =
		    (struct inline_range){ low, high, dwarf_dieoffset(die), depth };
		di->nr_ranges++;
	}
}

/*
 * Every inlined subroutine under die, iteratively: units nest deeply. A
 * walk in order meets each DIE at a higher offset than the one before; a
 * DW_AT_sibling pointing back (a hostile file) would loop it forever.
 */
static void collect(struct debuginfo *di, struct unit_inlines *u, Dwarf_Die *unit)
{
	Dwarf_Die stack[MAX_DIE_DEPTH];
	Dwarf_Off last;
	int depth = 0;

	if (dwarf_child(unit, &stack[0]))
		return;
	for (;;) {
		Dwarf_Die *die = &stack[depth];

		last = dwarf_dieoffset(die);
		if (dwarf_tag(die) == DW_TAG_inlined_subroutine)
			add_ranges(di, u, die, (uint32_t)depth);
		if (depth + 1 < MAX_DIE_DEPTH && dwarf_haschildren(die) &&
		    !dwarf_child(die, &stack[depth + 1])) {
			depth++;
		} else {
			/* No child: the next sibling here, or up until there is one. */
			while (dwarf_siblingof(&stack[depth], &stack[depth]) != 0) {
				if (depth-- == 0)
					return;
			}
		}
		if (dwarf_dieoffset(&stack[depth]) <= last)
			return;
	}
}

static struct unit_inlines *unit_inlines(struct debuginfo *di, Dwarf_Die *unit)
{
	Dwarf_Off offset = dwarf_dieoffset(unit);
	struct unit_inlines *u;

	if (!di->units) {
		di->units = hash_table__new(hash_offset, equal_offset);
		if (!di->units)
			return NULL;
	}
	u = hash_table__find(di->units, &offset);
	if (u)
		return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->unit = offset;
	collect(di, u, unit);
	if (hash_table__insert(di->units, &u->unit, u)) {
		free(u->ranges);
		free(u);
		return NULL;
	}
	return u;
}

static uint32_t attr_udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word value;

	if (!dwarf_attr(die, name, &attr) || dwarf_formudata(&attr, &value) || value > UINT32_MAX)
		return 0;
	return (uint32_t)value;
}

/* The inlined function's name: demangled from its linkage name where it has one. */
static const char *inlined_name(Dwarf_Die *die, struct strpool *strings)
{
	Dwarf_Attribute attr;
	const char *linkage =
	    dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	const char *name = dwarf_diename(die);
	char *demangled;

	if (linkage) {
		demangled = demangle__symbol(linkage);
		if (demangled) {
			name = strpool__intern(strings, demangled);
			free(demangled);
			return name;
		}
	}
	return strpool__intern(strings, name ? name : "??");
}

/* The inlined subroutines holding vaddr, innermost (deepest) first. */
static size_t inlined_at(const struct unit_inlines *u, uint64_t vaddr, Dwarf_Off *dies, size_t max)
{
	uint32_t depths[MAX_INLINE_CHAIN];
	size_t nr = 0, i, j;

	for (i = 0; i < u->nr && nr < max; i++) {
		if (vaddr < u->ranges[i].low || vaddr >= u->ranges[i].high)
			continue;
		for (j = nr; j > 0 && depths[j - 1] < u->ranges[i].depth; j--) {
			depths[j] = depths[j - 1];
			dies[j] = dies[j - 1];
		}
		depths[j] = u->ranges[i].depth;
		dies[j] = u->ranges[i].die;
		nr++;
	}
	return nr;
}

static bool is_string_section(const char *name)
{
	static const char *const names[] = { ".debug_str", ".debug_line_str" };
	size_t i, len;

	name += name[1] == 'z' ? 2 : 1; /* .zdebug_str: the GNU compressed form */
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		len = strlen(names[i]) - 1;
		if (!strncmp(name, names[i] + 1, len) &&
		    (!name[len] || !strcmp(name + len, ".dwo")))
			return true;
	}
	return false;
}

/*
 * libdw (0.188) hands out a string at an offset into .debug_str or
 * .debug_line_str without looking for its end: in a section that does not
 * end with a NUL, the last string runs past it (found by fuzz_elf). Such
 * a file's DWARF is not read. Compressed string sections are decompressed
 * here to be checked, as libdw would have done next.
 */
static bool strings_terminated(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || name[0] != '.' || !is_string_section(name))
			continue;
		if (shdr.sh_flags & SHF_COMPRESSED ? elf_compress(scn, 0, 0) < 0
		    : name[1] == 'z'		   ? elf_compress_gnu(scn, 0, 0) < 0
						   : false)
			return false;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size ||
		    ((const char *)data->d_buf)[data->d_size - 1])
			return false;
	}
	return true;
}

static Dwarf *empty_dwarf(struct debuginfo *di)
{
	struct empty_image *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	memcpy(e->ehdr.e_ident, ELFMAG, SELFMAG);
	e->ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	e->ehdr.e_ident[EI_DATA] = __BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB;
	e->ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	e->ehdr.e_type = ET_REL;
	e->ehdr.e_version = EV_CURRENT;
	e->ehdr.e_shoff = offsetof(struct empty_image, shdr);
	e->ehdr.e_ehsize = sizeof(e->ehdr);
	e->ehdr.e_shentsize = sizeof(e->shdr[0]);
	e->ehdr.e_shnum = 3;
	e->ehdr.e_shstrndx = 1;
	memcpy(e->names, "\0.shstrtab\0.debug_line", sizeof(e->names));
	e->shdr[1] = (Elf64_Shdr){ .sh_name = 1,
				   .sh_type = SHT_STRTAB,
				   .sh_offset = offsetof(struct empty_image, names),
				   .sh_size = sizeof(e->names),
				   .sh_addralign = 1 };
	e->shdr[2] = (Elf64_Shdr){ .sh_name = 11,
				   .sh_type = SHT_PROGBITS,
				   .sh_offset = offsetof(struct empty_image, line),
				   .sh_size = sizeof(e->line),
				   .sh_addralign = 1 };
	di->no_alt_image = e;
	di->no_alt_elf = elf_memory((char *)e, sizeof(*e));
	return di->no_alt_elf ? dwarf_begin_elf(di->no_alt_elf, DWARF_C_READ, NULL) : NULL;
}

/*
 * A file compressed with dwz keeps what its units share in an alt file
 * that its .gnu_debugaltlink names, with the alt file's build ID. libdw
 * opens it at the first reference: by build ID under /usr/lib/debug,
 * root's tree, and failing that by the name, which is the file's to
 * choose: a FIFO there blocked offcpu forever, a device or a file
 * truncated once mapped would be what it reads. So unless root's tree has
 * it, libdw is handed an empty alt file, and the references to it find
 * nothing. false: that could not be done, and the DWARF is not read.
 */
static bool guard_alt(struct debuginfo *di)
{
	char path[DEBUG_BUILD_ID_PATH_MAX];
	const char *name;
	const void *id;
	struct stat st;
	ssize_t len = dwelf_dwarf_gnu_debugaltlink(di->dwarf, &name, &id);

	/* Without a well-formed link libdw never looks for one. */
	if (len <= 0)
		return true;
	/* libdw looks up build IDs of 3 to 64 bytes. */
	if (len >= 3 && !debugfile__build_id_path(id, (size_t)len, path) && !stat(path, &st) &&
	    S_ISREG(st.st_mode))
		return true;
	di->no_alt = empty_dwarf(di);
	if (!di->no_alt)
		return false;
	dwarf_setalt(di->dwarf, di->no_alt);
	return true;
}

void debuginfo__lookup(struct debuginfo *di, uint64_t vaddr, struct strpool *strings,
		       struct inline_pool *inlines, struct source_location *out)
{
	const struct frame_inline *innermost = NULL;
	Dwarf_Off dies[MAX_INLINE_CHAIN];
	struct {
		const char *function;
		const char *file;
		uint32_t line;
	} chain[MAX_INLINE_CHAIN];
	const struct unit_inlines *u;
	Dwarf_Files *files = NULL;
	Dwarf_Die cu, die;
	Dwarf_Line *line;
	const char *file;
	size_t nr_files = 0, nr, i;
	int lineno = 0;

	memset(out, 0, sizeof(*out));
	/*
	 * Read when first asked: a distribution's debug file is compressed, and
	 * opening libc's takes 50 ms here, which offcpu spends only on files
	 * whose frames it shows.
	 */
	if (!di->tried) {
		di->tried = true;
		if (strings_terminated(di->elf))
			di->dwarf = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
		if (di->dwarf && !guard_alt(di)) {
			dwarf_end(di->dwarf);
			di->dwarf = NULL;
		}
	}
	if (!di->dwarf || !dwarf_addrdie(di->dwarf, vaddr, &cu))
		return;
	line = dwarf_getsrc_die(&cu, vaddr);
	file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	if (!file)
		return;
	dwarf_lineno(line, &lineno);
	out->file = strpool__intern(strings, file);
	out->line = lineno > 0 ? (uint32_t)lineno : 0;
	u = unit_inlines(di, &cu);
	nr = u ? inlined_at(u, vaddr, dies, MAX_INLINE_CHAIN) : 0;
	if (nr)
		dwarf_getsrcfiles(&cu, &files, &nr_files);
	/*
	 * From the innermost out: each inlined subroutine's code is at the
	 * current file and line; its call site, in the function around it,
	 * becomes the current one.
	 */
	for (i = 0; i < nr; i++) {
		uint32_t call_file;

		if (!dwarf_offdie(di->dwarf, dies[i], &die)) {
			nr = i;
			break;
		}
		chain[i].function = inlined_name(&die, strings);
		chain[i].file = out->file;
		chain[i].line = out->line;
		call_file = attr_udata(&die, DW_AT_call_file);
		file = files && call_file < nr_files ? dwarf_filesrc(files, call_file, NULL, NULL)
						     : NULL;
		out->file = file ? strpool__intern(strings, file) : NULL;
		out->line = attr_udata(&die, DW_AT_call_line);
	}
	/* Interned from the outermost in: each node points at its caller. */
	for (i = nr; i > 0; i--)
		innermost = inline_pool__intern(inlines, chain[i - 1].function, chain[i - 1].file,
						chain[i - 1].line, innermost);
	out->inlined = innermost;
}

static void free_unit(void *value)
{
	struct unit_inlines *u = value;

	free(u->ranges);
	free(u);
}

void debuginfo__free(struct debuginfo *di)
{
	if (!di)
		return;
	hash_table__free_values(di->units, free_unit);
	if (di->dwarf)
		dwarf_end(di->dwarf);
	/* After the file that used it: dwarf_end leaves an alt file it was given alone. */
	if (di->no_alt)
		dwarf_end(di->no_alt);
	if (di->no_alt_elf)
		elf_end(di->no_alt_elf);
	free(di->no_alt_image);
	if (di->elf)
		elf_end(di->elf);
	free(di);
}
