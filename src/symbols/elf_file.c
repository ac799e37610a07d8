// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/elf_file.h"

/*
 * What libelf allocates per section header, its own struct and a copy of
 * the header: 5,000,000 sections cost 1.66 GB.
 */
#define SECTION_COST 384

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* Where the headers are read from: a file, or an image in memory. */
struct source {
	int fd;
	const unsigned char *image;
	uint64_t size;
};

static int read_at(const struct source *src, void *buf, size_t len, uint64_t offset)
{
	ssize_t n;

	if (offset > src->size || len > src->size - offset)
		return -EINVAL;
	if (src->image) {
		memcpy(buf, src->image + offset, len);
		return 0;
	}
	n = pread(src->fd, buf, len, (off_t)offset);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EINVAL;
}

/* How many section and program headers, read as the gABI says, before libelf counts them. */
struct header_counts {
	uint64_t sections;
	uint64_t segments;
};

static bool table_inside(uint64_t offset, uint64_t nr, uint64_t entry, uint64_t size)
{
	return offset <= size && nr <= (size - offset) / entry;
}

static int read_counts(const struct source *src, struct header_counts *out)
{
	unsigned char ident[EI_NIDENT];
	uint64_t shoff, phoff, shdr_size, phdr_size;
	uint16_t shentsize, phentsize;
	int err = read_at(src, ident, sizeof(ident), 0);

	if (err)
		return err == -EINVAL ? -ENOEXEC : err;
	/* Another byte order is no code this machine runs: not worth libelf's conversions. */
	if (memcmp(ident, ELFMAG, SELFMAG) || ident[EI_DATA] != NATIVE_DATA)
		return -ENOEXEC;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr e;
		Elf64_Shdr s0;

		if (read_at(src, &e, sizeof(e), 0))
			return -ENOEXEC;
		shoff = e.e_shoff;
		phoff = e.e_phoff;
		shentsize = e.e_shentsize;
		phentsize = e.e_phentsize;
		out->sections = e.e_shnum;
		out->segments = e.e_phnum;
		shdr_size = sizeof(Elf64_Shdr);
		phdr_size = sizeof(Elf64_Phdr);
		/* 65,280 sections or more: the count is in section 0, as is a large segment count.
		 */
		if (shoff && (e.e_shnum == 0 || e.e_phnum == PN_XNUM)) {
			if (read_at(src, &s0, sizeof(s0), shoff))
				return -EINVAL;
			if (e.e_shnum == 0)
				out->sections = s0.sh_size;
			if (e.e_phnum == PN_XNUM)
				out->segments = s0.sh_info;
		}
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr e;
		Elf32_Shdr s0;

		if (read_at(src, &e, sizeof(e), 0))
			return -ENOEXEC;
		shoff = e.e_shoff;
		phoff = e.e_phoff;
		shentsize = e.e_shentsize;
		phentsize = e.e_phentsize;
		out->sections = e.e_shnum;
		out->segments = e.e_phnum;
		shdr_size = sizeof(Elf32_Shdr);
		phdr_size = sizeof(Elf32_Phdr);
		if (shoff && (e.e_shnum == 0 || e.e_phnum == PN_XNUM)) {
			if (read_at(src, &s0, sizeof(s0), shoff))
				return -EINVAL;
			if (e.e_shnum == 0)
				out->sections = s0.sh_size;
			if (e.e_phnum == PN_XNUM)
				out->segments = s0.sh_info;
		}
	} else {
		return -ENOEXEC;
	}
	if ((out->sections && (shentsize != shdr_size ||
			       !table_inside(shoff, out->sections, shdr_size, src->size))) ||
	    (out->segments &&
	     (phentsize != phdr_size || !table_inside(phoff, out->segments, phdr_size, src->size))))
		return -EINVAL;
	return 0;
}

/* Every section's data inside the file: then no read of one can be larger than the file. */
static int check_sections(struct elf_file *f, uint64_t counted)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrnum(f->elf, &f->nr_sections) || f->nr_sections > counted)
		return -EINVAL;
	if (f->nr_sections && elf_getshdrstrndx(f->elf, &f->shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return -EINVAL;
		if (shdr.sh_type != SHT_NOBITS &&
		    (shdr.sh_offset > f->size || shdr.sh_size > f->size - shdr.sh_offset))
			return -EINVAL;
	}
	return 0;
}

static int open_source(struct elf_file *f, const struct source *src, Elf *(*begin)(const void *),
		       const void *arg, const struct symbol_limits *limits,
		       struct read_budget *budget)
{
	struct header_counts counts;
	int err;

	f->elf = NULL;
	f->charged = NULL;
	f->limits = limits;
	f->budget = budget;
	f->size = src->size;
	f->nr_sections = 0;
	f->shstrndx = 0;
	err = read_counts(src, &counts);
	if (err)
		return err;
	if (counts.sections > limits->max_sections || counts.segments > limits->max_sections)
		return -EFBIG;
	err = read_budget__charge(budget, counts.sections * SECTION_COST +
					      counts.segments * sizeof(GElf_Phdr) +
					      (counts.sections + 63) / 64 * sizeof(uint64_t));
	if (err)
		return err;
	f->charged = calloc((counts.sections + 63) / 64 + 1, sizeof(uint64_t));
	if (!f->charged)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	f->elf = begin(arg);
	err =
	    f->elf && elf_kind(f->elf) == ELF_K_ELF ? check_sections(f, counts.sections) : -ENOEXEC;
	if (err)
		elf_file__close(f);
	return err;
}

static Elf *begin_fd(const void *arg)
{
	return elf_begin(*(const int *)arg, ELF_C_READ, NULL);
}

int elf_file__open(struct elf_file *f, int fd, const struct symbol_limits *limits,
		   struct read_budget *budget)
{
	struct stat st;
	struct source src = { .fd = fd };

	f->elf = NULL;
	f->charged = NULL;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((uint64_t)st.st_size > limits->max_file_bytes)
		return -EFBIG;
	src.size = (uint64_t)st.st_size;
	f->uid = st.st_uid;
	return open_source(f, &src, begin_fd, &fd, limits, budget);
}

struct memory {
	void *image;
	size_t size;
};

static Elf *begin_memory(const void *arg)
{
	const struct memory *m = arg;

	return elf_memory(m->image, m->size);
}

int elf_file__open_memory(struct elf_file *f, void *image, size_t size,
			  const struct symbol_limits *limits, struct read_budget *budget)
{
	struct source src = { .fd = -1, .image = image, .size = size };
	struct memory m = { image, size };

	f->uid = 0;
	return open_source(f, &src, begin_memory, &m, limits, budget);
}

Elf_Data *elf_file__data(struct elf_file *f, Elf_Scn *scn)
{
	size_t index = scn ? elf_ndxscn(scn) : 0;
	GElf_Shdr shdr;

	if (!scn || index >= f->nr_sections || !gelf_getshdr(scn, &shdr))
		return NULL;
	if (!(f->charged[index / 64] & (1ULL << (index % 64)))) {
		if (shdr.sh_type != SHT_NOBITS && read_budget__charge(f->budget, shdr.sh_size))
			return NULL;
		f->charged[index / 64] |= 1ULL << (index % 64);
	}
	return elf_getdata(scn, NULL);
}

const char *elf_file__string(struct elf_file *f, size_t section, size_t offset)
{
	if (!elf_file__data(f, elf_getscn(f->elf, section)))
		return NULL;
	return elf_strptr(f->elf, section, offset);
}

const char *elf_file__section_name(struct elf_file *f, const GElf_Shdr *shdr)
{
	return f->nr_sections ? elf_file__string(f, f->shstrndx, shdr->sh_name) : NULL;
}

Elf *elf_file__detach(struct elf_file *f)
{
	Elf *elf = f->elf;

	elf_cntl(elf, ELF_C_FDDONE);
	f->elf = NULL;
	elf_file__close(f);
	return elf;
}

void elf_file__close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	f->elf = NULL;
	free(f->charged);
	f->charged = NULL;
}
