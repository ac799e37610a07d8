// SPDX-License-Identifier: GPL-2.0
/* ELF symbols: this very process's, libc's through its debug file, a stripped copy. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/array.h"
#include "proc/procmaps.h"
#include "symbols/elfsyms.h"

/* The function whose symbol the tests look up. */
__attribute__((noinline)) int known_function(int x)
{
	return x * 3 + 1;
}

/* fd's symbols under the default limits, offcpu's own file: no debug link followed. */
static int open_elf(int fd, struct elfsyms **out)
{
	struct symbol_limits limits;
	struct read_budget budget;
	struct elfsyms_opts opts = { .limits = &limits, .budget = &budget };

	limits__defaults(&limits);
	budget = (struct read_budget){ limits.max_file_spend_bytes, false };
	return elfsyms__open_fd(fd, &opts, out);
}

/* This test binary's symbols, and known_function's ELF virtual address in it. */
static struct elfsyms *open_self(uint64_t *known_vaddr)
{
	uint64_t addr = (uint64_t)(uintptr_t)&known_function;
	const struct proc_map *m;
	struct proc_maps maps;
	struct elfsyms *es;
	int fd;

	assert_int_equal(procmaps__read_pid(getpid(), &maps), 0);
	m = procmaps__find(&maps, addr);
	assert_non_null(m);
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(open_elf(fd, &es), 0);
	close(fd);
	assert_int_equal(
	    elfsyms__offset_to_vaddr(es, addr - m->start + m->file_offset, known_vaddr), 0);
	procmaps__free(&maps);
	return es;
}

static void own_binary_symbols(void **state)
{
	const struct elf_symbol *s;
	uint64_t vaddr;
	struct elfsyms *es = open_self(&vaddr);

	(void)state;
	s = elfsyms__find(es, vaddr);
	assert_non_null(s);
	assert_string_equal(s->name, "known_function");
	assert_true(vaddr >= s->start && vaddr < s->start + s->size);
	elfsyms__free(es);
}

/* Never a wrong name: every address named lies inside that symbol. */
static void names_only_inside_symbols(void **state)
{
	struct elfsyms *es;
	uint64_t vaddr, named = 0, unnamed = 0;
	int fd = open("/usr/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);

	(void)state;
	if (fd < 0)
		fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(open_elf(fd, &es), 0);
	close(fd);
	assert_true(elfsyms__count(es) > 0);
	for (vaddr = 0; vaddr < 0x200000; vaddr += 7) {
		const struct elf_symbol *s = elfsyms__find(es, vaddr);

		if (!s) {
			unnamed++;
			continue;
		}
		named++;
		if (vaddr < s->start || vaddr >= s->start + s->size)
			fail_msg("0x%llx named %s [0x%llx, +0x%llx)", (unsigned long long)vaddr,
				 s->name, (unsigned long long)s->start,
				 (unsigned long long)s->size);
	}
	assert_true(named > 0);
	assert_true(unnamed > 0);
	elfsyms__free(es);
}

/*
 * Debian's libc has no .symtab; libc6-dbg (make deps) holds it in a file
 * named by libc's build ID. Its names come without symbol versions.
 */
static void stripped_library_uses_its_debug_file(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&clock_nanosleep, vaddr;
	const struct proc_map *m;
	const struct elf_symbol *s;
	struct proc_maps maps;
	struct elfsyms *es;
	char path[128];
	int fd;

	(void)state;
	assert_int_equal(procmaps__read_pid(getpid(), &maps), 0);
	m = procmaps__find(&maps, addr);
	assert_non_null(m);
	assert_non_null(strstr(m->path, "libc.so"));
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)m->start,
		 (unsigned long)m->end);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(open_elf(fd, &es), 0);
	close(fd);
	if (!elfsyms__from_debug_file(es))
		fail_msg("no debug file for %s: is libc6-dbg installed (make deps)?", m->path);
	assert_int_equal(elfsyms__offset_to_vaddr(es, addr - m->start + m->file_offset, &vaddr), 0);
	s = elfsyms__find(es, vaddr);
	assert_non_null(s);
	assert_string_equal(s->name, "clock_nanosleep");
	elfsyms__free(es);
	procmaps__free(&maps);
}

/* Stripped of every symbol, a function is still found by its unwind table entry. */
static void stripped_binary_keeps_function_ranges(void **state)
{
	const struct elf_symbol *named, *unnamed;
	struct elfsyms *full, *stripped;
	uint64_t vaddr;
	char cmd[256];
	int fd;

	(void)state;
	full = open_self(&vaddr);
	named = elfsyms__find(full, vaddr + 1);
	assert_non_null(named);
	assert_string_equal(named->name, "known_function");

	snprintf(cmd, sizeof(cmd), "strip -s -o /tmp/offcpu-stripped-%d /proc/%d/exe", getpid(),
		 getpid());
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "/tmp/offcpu-stripped-%d", getpid());
	fd = open(cmd, O_RDONLY);
	unlink(cmd);
	assert_true(fd >= 0);
	assert_int_equal(open_elf(fd, &stripped), 0);
	close(fd);
	assert_null(elfsyms__find(stripped, vaddr + 1));
	unnamed = elfsyms__find_function(stripped, vaddr + 1);
	assert_non_null(unnamed);
	assert_true(unnamed->start == named->start && unnamed->size == named->size);
	assert_null(unnamed->name);
	/* Just past the function's end belongs to no FDE of it. */
	unnamed = elfsyms__find_function(stripped, named->start + named->size);
	assert_true(!unnamed || unnamed->start == named->start + named->size ||
		    unnamed->start > named->start);
	elfsyms__free(full);
	elfsyms__free(stripped);
}

/* The one binary search behind every sorted table: its edges. */
static void sorted_table_bounds(void **state)
{
	static const struct elf_symbol table[] = {
		{ .start = 0x1000, .size = 0x10, .name = "first" },
		{ .start = 0x1010, .size = 0x20, .name = "adjacent" },
		{ .start = 0x2000, .size = 0x8, .name = "after_a_gap" },
		{ .start = UINT64_MAX - 0xf, .size = 0x10, .name = "at_the_top" },
	};
	static const struct {
		uint64_t addr;
		const char *name; /* NULL: no symbol holds addr */
	} cases[] = {
		{ 0, NULL },
		{ 0xfff, NULL },
		{ 0x1000, "first" },
		{ 0x100f, "first" },
		{ 0x1010, "adjacent" },
		{ 0x102f, "adjacent" },
		{ 0x1030, NULL },
		{ 0x1fff, NULL },
		{ 0x2000, "after_a_gap" },
		{ 0x2008, NULL },
		{ UINT64_MAX - 0x10, NULL },
		{ UINT64_MAX - 0xf, "at_the_top" },
		{ UINT64_MAX, "at_the_top" },
	};
	size_t i, nr;

	(void)state;
	assert_null(elfsyms__symbol_containing(NULL, 0, 0x1000));
	for (nr = 1; nr <= ARRAY_SIZE(table); nr++) {
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			const struct elf_symbol *s =
			    elfsyms__symbol_containing(table, nr, cases[i].addr);
			const struct elf_symbol *want = NULL;
			size_t j;

			/* Of the first nr entries, the one whose range holds addr. */
			for (j = 0; j < nr && cases[i].name; j++) {
				if (!strcmp(table[j].name, cases[i].name))
					want = &table[j];
			}
			if (s != want)
				fail_msg("0x%llx in %zu entries: %s, not %s",
					 (unsigned long long)cases[i].addr, nr,
					 s ? s->name : "none", want ? want->name : "none");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_binary_symbols),
		cmocka_unit_test(names_only_inside_symbols),
		cmocka_unit_test(stripped_library_uses_its_debug_file),
		cmocka_unit_test(sorted_table_bounds),
		cmocka_unit_test(stripped_binary_keeps_function_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
