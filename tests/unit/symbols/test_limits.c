// SPDX-License-Identifier: GPL-2.0
/*
 * What a hostile ELF file may cost: small generated files (in memfds)
 * against limits set low, the way a traced process would hand them over.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbols/debuginfo.h"
#include "symbols/elf_file.h"
#include "symbols/elfsyms.h"
#include "symbols/limits.h"

static void parse_limits(void **state)
{
	struct symbol_limits limits, before;
	const char *bad = NULL;

	(void)state;
	limits__defaults(&limits);
	assert_int_equal(limits__parse(&limits, "max_sections=64,max_file_spend_bytes=1000", &bad),
			 0);
	assert_int_equal(limits.max_sections, 64);
	assert_int_equal(limits.max_file_spend_bytes, 1000);
	/* The budget across files: 1 GiB at most (a quarter of RAM on a small host). */
	assert_true(limits.max_total_spend_bytes > 0);
	assert_true(limits.max_total_spend_bytes <= 1ULL << 30);
	assert_int_equal(limits__parse(&limits, "max_total_spend_bytes=5000000000", &bad), 0);
	assert_int_equal(limits.max_total_spend_bytes, 5000000000ULL);
	before = limits;
	static const char *const wrong[] = {
		"max_sections",
		"max_sections=",
		"max_sections=-1",
		"max_sections=1x",
		"max_sections=4294967296",
		"no_such_limit=1",
		"max_sections=1,",
		"",
	};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		assert_int_equal(limits__parse(&limits, wrong[i], &bad), -EINVAL);
		/* Nothing set by a text that fails, even in part. */
		assert_memory_equal(&limits, &before, sizeof(limits));
	}
	assert_int_equal(limits__parse(&limits, "max_name_len=8,bogus=1", &bad), -EINVAL);
	assert_string_equal(bad, "bogus=1");
	assert_int_equal(limits.max_name_len, before.max_name_len);
}

static const struct symbol_limits *low_limits(void)
{
	static struct symbol_limits limits;

	limits__defaults(&limits);
	limits.max_sections = 16;
	limits.max_symbols = 100;
	limits.max_name_len = 32;
	limits.max_file_spend_bytes = 1 << 20;
	return &limits;
}

static int memfd_of(const void *data, size_t size)
{
	int fd = memfd_create("test-elf", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	return fd;
}

/*
 * An ELF64 file mapped whole at 0 by one PT_LOAD, with nr 16-byte
 * function symbols from 0x1000 on, named by strtab offsets (NULL: each
 * its own "fnNNNNN").
 */
static int elf_with_symbols(size_t nr, const uint32_t *names, const char *strtab,
			    size_t strtab_size)
{
	static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t text = 0x1000, symtab_at = text + 16 * nr;
	size_t symtab_size = (nr + 1) * sizeof(Elf64_Sym);
	char *own = NULL;
	size_t strtab_at, shstrtab_at, shoff, size, i;
	unsigned char *image;
	Elf64_Ehdr *e;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	Elf64_Sym *sym;
	int fd;

	if (!strtab) {
		own = calloc(nr + 1, 8);
		assert_non_null(own);
		for (i = 0; i < nr; i++)
			snprintf(own + 1 + 8 * i, 8, "fn%05u", (unsigned int)(i % 100000));
		strtab = own;
		strtab_size = 1 + 8 * nr;
	}
	strtab_at = symtab_at + symtab_size;
	shstrtab_at = strtab_at + strtab_size;
	shoff = (shstrtab_at + sizeof(shstrtab) + 7) & ~7UL;
	size = shoff + 5 * sizeof(Elf64_Shdr);
	image = calloc(1, size);
	assert_non_null(image);
	e = (Elf64_Ehdr *)image;
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_phoff = sizeof(*e);
	e->e_shoff = shoff;
	e->e_ehsize = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = 1;
	e->e_shentsize = sizeof(*sh);
	e->e_shnum = 5;
	e->e_shstrndx = 4;
	ph = (Elf64_Phdr *)(image + sizeof(*e));
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD,
			    .p_flags = PF_R | PF_X,
			    .p_filesz = size,
			    .p_memsz = size,
			    .p_align = 0x1000 };
	sym = (Elf64_Sym *)(image + symtab_at);
	for (i = 0; i < nr; i++)
		sym[i + 1] = (Elf64_Sym){
			.st_name = names ? names[i] : (uint32_t)(1 + 8 * i),
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = 1,
			.st_value = text + 16 * i,
			.st_size = 16,
		};
	memcpy(image + strtab_at, strtab, strtab_size);
	memcpy(image + shstrtab_at, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(image + shoff);
	sh[1] =
	    (Elf64_Shdr){ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text, text, 16 * nr, 0, 0, 16,
			  0 };
	sh[2] =
	    (Elf64_Shdr){ 7, SHT_SYMTAB, 0, 0, symtab_at, symtab_size, 3, 1, 8, sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ 15, SHT_STRTAB, 0, 0, strtab_at, strtab_size, 0, 0, 1, 0 };
	sh[4] = (Elf64_Shdr){ 23, SHT_STRTAB, 0, 0, shstrtab_at, sizeof(shstrtab), 0, 0, 1, 0 };
	fd = memfd_of(image, size);
	free(image);
	free(own);
	return fd;
}

static int open_with(int fd, const struct symbol_limits *limits, struct read_budget *budget,
		     struct elfsyms **es)
{
	struct elfsyms_opts opts = { .limits = limits, .budget = budget };

	return elfsyms__open_fd(fd, &opts, es);
}

static void symbols_within_limits(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	struct elfsyms *es;
	int fd = elf_with_symbols(50, NULL, NULL, 0);

	(void)state;
	assert_int_equal(open_with(fd, limits, &budget, &es), 0);
	assert_int_equal(elfsyms__count(es), 50);
	assert_int_equal(elfsyms__skipped(es), 0);
	assert_string_equal(elfsyms__find(es, 0x1000 + 16 * 7 + 3)->name, "fn00007");
	assert_false(budget.exhausted);
	elfsyms__free(es);
	close(fd);
}

/* More function symbols than max_symbols: the first ones kept, the rest counted. */
static void symbols_over_the_count(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	struct elfsyms *es;
	int fd = elf_with_symbols(250, NULL, NULL, 0);

	(void)state;
	assert_int_equal(open_with(fd, limits, &budget, &es), 0);
	assert_int_equal(elfsyms__count(es), 100);
	assert_int_equal(elfsyms__skipped(es), 150);
	assert_non_null(elfsyms__find(es, 0x1000));
	assert_null(elfsyms__find(es, 0x1000 + 16 * 200));
	elfsyms__free(es);
	close(fd);
}

/* 2,000 symbols naming one long string: skipped, not copied 2,000 times. */
static void one_long_name_for_all(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	size_t nr = 2000, long_len = 64 << 10, i;
	uint32_t *names = calloc(nr, sizeof(*names));
	char *strtab = calloc(1, long_len + 2 + 8);
	struct elfsyms *es;
	int fd;

	(void)state;
	assert_non_null(names);
	assert_non_null(strtab);
	memset(strtab + 1, 'n', long_len);
	/* One short name too, after the long one: it is still read. */
	strcpy(strtab + long_len + 2, "short");
	for (i = 0; i < nr; i++)
		names[i] = i == 5 ? (uint32_t)(long_len + 2) : 1;
	fd = elf_with_symbols(nr, names, strtab, long_len + 2 + 8);
	assert_int_equal(open_with(fd, limits, &budget, &es), 0);
	assert_int_equal(elfsyms__count(es), 1);
	assert_int_equal(elfsyms__skipped(es), nr - 1);
	assert_string_equal(elfsyms__find(es, 0x1000 + 16 * 5)->name, "short");
	/* What was spent: the file's tables once, the short name; no long name. */
	assert_true(limits->max_file_spend_bytes - budget.left < 3 * long_len);
	elfsyms__free(es);
	close(fd);
	free(names);
	free(strtab);
}

/* A budget too small for the string table: no symbols, the budget says so, never overdrawn. */
static void symbols_over_the_budget(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { 4000, false };
	struct elfsyms *es;
	int fd = elf_with_symbols(100, NULL, NULL, 0);

	(void)state;
	assert_int_equal(open_with(fd, limits, &budget, &es), 0);
	assert_int_equal(elfsyms__count(es), 0);
	assert_true(budget.exhausted);
	assert_true(budget.left <= 4000);
	elfsyms__free(es);
	close(fd);
}

static void write_at(int fd, const void *data, size_t size, off_t offset)
{
	assert_int_equal(pwrite(fd, data, size, offset), (ssize_t)size);
}

/*
 * e_shnum 0 and section 0's sh_size 5,000,000, in a sparse file that holds
 * their headers: refused before libelf allocates 1.66 GB for them.
 */
static void section_count_in_section_zero(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	Elf64_Ehdr e = { .e_type = ET_DYN,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_shoff = sizeof(e),
			 .e_ehsize = sizeof(e),
			 .e_shentsize = sizeof(Elf64_Shdr) };
	Elf64_Shdr zero = { .sh_size = 5000000 };
	struct elf_file f;
	int fd = memfd_create("sections", MFD_CLOEXEC);

	(void)state;
	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ident[EI_DATA] = ELFDATA2LSB;
	e.e_ident[EI_VERSION] = EV_CURRENT;
	write_at(fd, &e, sizeof(e), 0);
	write_at(fd, &zero, sizeof(zero), sizeof(e));
	assert_int_equal(ftruncate(fd, (off_t)(sizeof(e) + 5000000 * sizeof(Elf64_Shdr))), 0);
	assert_int_equal(elf_file__open(&f, fd, limits, &budget), -EFBIG);
	assert_int_equal(budget.left, limits->max_file_spend_bytes);
	/* Fewer of them, but a table past the end of the file. */
	zero.sh_size = 10;
	write_at(fd, &zero, sizeof(zero), sizeof(e));
	assert_int_equal(ftruncate(fd, (off_t)(sizeof(e) + 5 * sizeof(Elf64_Shdr))), 0);
	assert_int_equal(elf_file__open(&f, fd, limits, &budget), -EINVAL);
	close(fd);
}

/* A section whose data lies past the end of the file, and a file cut to nothing. */
static void sections_outside_the_file(void **state)
{
	const struct symbol_limits *limits = low_limits();
	struct read_budget budget = { limits->max_file_spend_bytes, false };
	Elf64_Shdr big = { 15, SHT_STRTAB, 0, 0, 0x100, 1ULL << 40, 0, 0, 1, 0 };
	Elf64_Ehdr e;
	struct elf_file f;
	int fd = elf_with_symbols(4, NULL, NULL, 0);

	(void)state;
	assert_int_equal(elf_file__open(&f, fd, limits, &budget), 0);
	elf_file__close(&f);
	assert_int_equal(pread(fd, &e, sizeof(e), 0), (ssize_t)sizeof(e));
	write_at(fd, &big, sizeof(big), (off_t)(e.e_shoff + 3 * sizeof(big)));
	assert_int_equal(elf_file__open(&f, fd, limits, &budget), -EINVAL);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(elf_file__open(&f, fd, limits, &budget), -ENOEXEC);
	close(fd);
}

/* Larger than max_file_bytes, if only by a hole: not read at all. */
static void file_over_the_size_limit(void **state)
{
	struct symbol_limits limits = *low_limits();
	struct read_budget budget = { limits.max_file_spend_bytes, false };
	struct elf_file f;
	int fd = elf_with_symbols(4, NULL, NULL, 0);

	(void)state;
	limits.max_file_bytes = 1 << 20;
	assert_int_equal(ftruncate(fd, (off_t)(limits.max_file_bytes + 1)), 0);
	assert_int_equal(elf_file__open(&f, fd, &limits, &budget), -EFBIG);
	close(fd);
}

/*
 * DWARF is read when it is opened, so a file truncated afterwards (it was
 * mapped: SIGBUS at the first lookup) is no matter; and it is paid for.
 */
static void dwarf_read_before_truncation(void **state)
{
	struct symbol_limits limits;
	struct read_budget budget, small = { 1000, false };
	struct inline_pool *inlines = inline_pool__new();
	struct strpool *strings = strpool__new();
	struct source_location where;
	struct debuginfo *di;
	unsigned char *copy;
	Dl_info here;
	ssize_t size;
	int self = open("/proc/self/exe", O_RDONLY), fd;

	(void)state;
	limits__defaults(&limits);
	budget = (struct read_budget){ limits.max_file_spend_bytes, false };
	assert_true(self >= 0);
	copy = malloc(64 << 20);
	assert_non_null(copy);
	size = read(self, copy, 64 << 20);
	assert_true(size > 0 && size < (64 << 20));
	close(self);
	fd = memfd_of(copy, (size_t)size);
	free(copy);
	assert_int_equal(debuginfo__open_fd(fd, &limits, &small, &di), -E2BIG);
	assert_int_equal(debuginfo__open_fd(fd, &limits, &budget, &di), 0);
	assert_int_equal(ftruncate(fd, 0), 0);
	close(fd);
	/* This very function's line, from DWARF that must be in memory by now. */
	assert_true(dladdr((void *)&dwarf_read_before_truncation, &here));
	debuginfo__lookup(
	    di, (uint64_t)((uintptr_t)&dwarf_read_before_truncation - (uintptr_t)here.dli_fbase),
	    strings, inlines, &where);
	assert_non_null(where.file);
	assert_non_null(strstr(where.file, "test_limits.c"));
	debuginfo__free(di);
	inline_pool__free(inlines);
	strpool__free(strings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_limits),
		cmocka_unit_test(symbols_within_limits),
		cmocka_unit_test(symbols_over_the_count),
		cmocka_unit_test(one_long_name_for_all),
		cmocka_unit_test(symbols_over_the_budget),
		cmocka_unit_test(section_count_in_section_zero),
		cmocka_unit_test(sections_outside_the_file),
		cmocka_unit_test(file_over_the_size_limit),
		cmocka_unit_test(dwarf_read_before_truncation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
