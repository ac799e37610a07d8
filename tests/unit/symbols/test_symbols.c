// SPDX-License-Identifier: GPL-2.0
/* ELF symbols and the user-space symbolizer, on this very process. */
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
#include "lib/clock.h"
#include "lib/strpool.h"
#include "proc/procmaps.h"
#include "symbols/demangle.h"
#include "symbols/elfsyms.h"
#include "symbols/symbolizer.h"

/* Each *_line is the line of the statement three lines below it. */
static const unsigned int known_line = __LINE__ + 3;
__attribute__((noinline)) int known_function(int x)
{
	return x * 3 + 1;
}

/* DWARF names the inlined helper and the line in calls_inlined that calls it. */
static const unsigned int inlined_line = __LINE__ + 3;
static inline __attribute__((always_inline)) int inlined_helper(volatile int *p)
{
	return *p * 5 + 11;
}

static const unsigned int call_line = __LINE__ + 3;
__attribute__((noinline)) int calls_inlined(volatile int *p)
{
	return inlined_helper(p) + 13;
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

static void demangled_names(void **state)
{
	static const struct {
		const char *raw, *name;
	} cases[] = {
		{ "_ZN11offcpu_test6WaiterIiE5blockEv", "offcpu_test::Waiter<int>::block()" },
		{ "_ZNKSt6vectorIiSaIiEE4sizeEv",
		  "std::vector<int, std::allocator<int> >::size() const" },
		/* Rust, legacy (its hash dropped) and v0. */
		{ "_ZN3std6thread4park17h0123456789abcdefE", "std::thread::park" },
		{ "_RNvMs_NtNtCsalM65ksrrJu_3std6thread6threadNtB4_6Thread12park_timeout",
		  "<std::thread::thread::Thread>::park_timeout" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *name = demangle__symbol(cases[i].raw);

		assert_non_null(name);
		assert_string_equal(name, cases[i].name);
		free(name);
	}
	/* C names and what does not demangle stay as they are. */
	assert_null(demangle__symbol("main"));
	assert_null(demangle__symbol("__lll_lock_wait"));
	assert_null(demangle__symbol("_Znotmangled"));
	assert_null(demangle__symbol("_"));
}

static void symbolizer_user_frames(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	struct symbolizer *s;
	struct frame f, copy;
	uint64_t addr = (uint64_t)(uintptr_t)&known_function;

	(void)state;
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	/* A return address: the call is the byte before. */
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	assert_non_null(f.sym);
	assert_string_equal(f.sym, "known_function");
	assert_int_equal(f.off, 4);
	assert_false(f.kernel);
	assert_non_null(strstr(f.module, "test_symbols"));
	/*
	 * Its source line, from the test binary's own DWARF, once asked for:
	 * of a copy (the profile's), after the process is gone.
	 */
	assert_null(f.file);
	memcpy(&copy, &f, sizeof(f));
	symbolizer__exit(s, getpid());
	symbolizer__resolve_lines(s, &f);
	assert_non_null(f.file);
	assert_non_null(strstr(f.file, "test_symbols.c"));
	/* A prologue byte (ASan builds have one) is on the line of the braces. */
	assert_in_range(f.line, known_line - 2, known_line + 1);
	assert_null(f.inlined);
	/* The same code in another copy: the same line, looked up once. */
	symbolizer__resolve_lines(s, &copy);
	assert_ptr_equal(copy.file, f.file);
	assert_int_equal(copy.line, f.line);
	/* A frame the symbolizer never named is left as it is. */
	copy.module_off++;
	copy.file = NULL;
	copy.line = 0;
	symbolizer__resolve_lines(s, &copy);
	assert_null(copy.file);
	assert_int_equal(copy.line, 0);
	/* The function's first byte as a return address belongs to what precedes it. */
	symbolizer__user(s, getpid(), addr, false, clock__monotonic_ns(), &f);
	assert_true(f.sym == NULL || strcmp(f.sym, "known_function") != 0);
	/* Unmapped memory: no module, no symbol. */
	symbolizer__user(s, getpid(), 0x10, true, clock__monotonic_ns(), &f);
	assert_null(f.sym);
	assert_null(f.module);
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
}

/*
 * offcpu serve's memory held flat: a file no process maps is freed; the
 * lines a window open then may need are looked up first and kept until it
 * has closed; with no window open they go with it. Without
 * symbolizer__free_unmapped (offcpu record) the files stay.
 */
static void symbolizer_frees_unmapped_files(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	uint64_t addr = (uint64_t)(uintptr_t)&known_function;
	struct symbolizer_stats st;
	struct symbolizer *s;
	struct frame f;

	(void)state;
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	symbolizer__exit(s, getpid());
	symbolizer__stats(s, &st);
	assert_true(st.files > 0);
	assert_int_equal(st.processes, 0);
	symbolizer__free(s);

	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	symbolizer__free_unmapped(s);
	/* A window open since now. */
	symbolizer__lines_needed_since(s, clock__monotonic_ns());
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	assert_string_equal(f.sym, "known_function");
	symbolizer__stats(s, &st);
	assert_true(st.files > 0);
	assert_int_equal(st.lines, 1);
	assert_int_equal(st.dead_lines, 0);
	symbolizer__exit(s, getpid());
	symbolizer__stats(s, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.lines, 1);
	assert_int_equal(st.dead_lines, 1);
	/* Its line, looked up before its DWARF went. */
	symbolizer__resolve_lines(s, &f);
	assert_non_null(f.file);
	assert_non_null(strstr(f.file, "test_symbols.c"));
	assert_in_range(f.line, known_line - 2, known_line + 1);
	/* The window still open: named again, the line lives with the new file. */
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	symbolizer__stats(s, &st);
	assert_true(st.files > 0);
	assert_int_equal(st.dead_lines, 0);
	symbolizer__exit(s, getpid());
	/* Every window closed: the lines of the files freed go. */
	symbolizer__lines_needed_since(s, UINT64_MAX);
	symbolizer__stats(s, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.lines, 0);
	/* No window open: a file's lines go with it, unlooked-up. */
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	symbolizer__exit(s, getpid());
	symbolizer__stats(s, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.lines, 0);
	f.file = NULL;
	symbolizer__resolve_lines(s, &f);
	assert_null(f.file);
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
}

/*
 * The budget across files: no file is read while all files together hold
 * what they may (max_total_spend_bytes), and its frames stay unnamed; once
 * there is more room, the next frame in it has the file read.
 */
static void symbolizer_total_spend_cap(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	uint64_t addr = (uint64_t)(uintptr_t)&known_function;
	struct symbol_limits limits;
	struct symbolizer_stats st;
	struct symbolizer *s;
	struct frame f;

	(void)state;
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	limits__defaults(&limits);
	limits.max_total_spend_bytes = 0;
	symbolizer__set_limits(s, &limits);
	/* offcpu record frees no file: no room comes back, the stack may be kept as it is. */
	assert_false(symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f));
	assert_null(f.sym);
	assert_non_null(f.module);
	symbolizer__stats(s, &st);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.file_bytes, 0);
	/* Room again (offcpu serve frees the files no process maps). */
	limits__defaults(&limits);
	symbolizer__set_limits(s, &limits);
	symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f);
	assert_non_null(f.sym);
	assert_string_equal(f.sym, "known_function");
	symbolizer__stats(s, &st);
	assert_true(st.files > 0);
	assert_true(st.file_bytes > 0);
	assert_true(st.file_bytes <= limits.max_total_spend_bytes);
	symbolizer__free(s);
	/* offcpu serve frees files: the frame may be named later. */
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	symbolizer__free_unmapped(s);
	limits.max_total_spend_bytes = 0;
	symbolizer__set_limits(s, &limits);
	assert_true(symbolizer__user(s, getpid(), addr + 4, false, clock__monotonic_ns(), &f));
	assert_null(f.sym);
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
}

static void symbolizer_inline_frames(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	uint64_t addr = (uint64_t)(uintptr_t)&calls_inlined;
	struct symbolizer *s;
	struct frame f;
	unsigned int i, found = 0;

	(void)state;
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	for (i = 0; i < 64; i++) {
		symbolizer__user(s, getpid(), addr + i, true, clock__monotonic_ns(), &f);
		if (!f.sym || strcmp(f.sym, "calls_inlined"))
			break;
		symbolizer__resolve_lines(s, &f);
		if (!f.inlined)
			continue;
		/* The helper at its own line, called from calls_inlined's line. */
		assert_string_equal(f.inlined->function, "inlined_helper");
		assert_non_null(strstr(f.inlined->file, "test_symbols.c"));
		assert_int_equal(f.inlined->line, inlined_line);
		assert_null(f.inlined->caller);
		assert_int_equal(f.line, call_line);
		found++;
	}
	assert_true(found > 0);
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
}

static void symbolizer_vdso(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *inlines = inline_pool__new();
	struct symbolizer *s;
	struct proc_maps maps;
	struct frame f;
	size_t i;
	const struct proc_map *vdso = NULL;

	(void)state;
	assert_int_equal(procmaps__read_pid(getpid(), &maps), 0);
	for (i = 0; i < maps.nr; i++) {
		if (!strcmp(maps.maps[i].path, "[vdso]"))
			vdso = &maps.maps[i];
	}
	assert_non_null(vdso);
	assert_int_equal(symbolizer__new(strings, inlines, NULL, &s), 0);
	/* Some byte of the vdso text is inside a named function. */
	for (i = 0; i < vdso->end - vdso->start; i += 16) {
		symbolizer__user(s, getpid(), vdso->start + i, true, clock__monotonic_ns(), &f);
		if (f.sym)
			break;
	}
	assert_non_null(f.sym);
	assert_string_equal(f.module, "[vdso]");
	symbolizer__free(s);
	inline_pool__free(inlines);
	strpool__free(strings);
	procmaps__free(&maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_binary_symbols),
		cmocka_unit_test(names_only_inside_symbols),
		cmocka_unit_test(stripped_library_uses_its_debug_file),
		cmocka_unit_test(sorted_table_bounds),
		cmocka_unit_test(demangled_names),
		cmocka_unit_test(stripped_binary_keeps_function_ranges),
		cmocka_unit_test(symbolizer_inline_frames),
		cmocka_unit_test(symbolizer_user_frames),
		cmocka_unit_test(symbolizer_frees_unmapped_files),
		cmocka_unit_test(symbolizer_total_spend_cap),
		cmocka_unit_test(symbolizer_vdso),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
