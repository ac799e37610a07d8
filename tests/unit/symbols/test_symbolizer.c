// SPDX-License-Identifier: GPL-2.0
/* The user-space symbolizer, on this very process. */
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
	assert_non_null(strstr(f.module, "test_symbolizer"));
	/*
	 * Its source line, from the test binary's own DWARF, once asked for:
	 * of a copy (the profile's), after the process is gone.
	 */
	assert_null(f.file);
	memcpy(&copy, &f, sizeof(f));
	symbolizer__exit(s, getpid());
	symbolizer__resolve_lines(s, &f);
	assert_non_null(f.file);
	assert_non_null(strstr(f.file, "test_symbolizer.c"));
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
	assert_non_null(strstr(f.file, "test_symbolizer.c"));
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
		assert_non_null(strstr(f.inlined->file, "test_symbolizer.c"));
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
		cmocka_unit_test(symbolizer_inline_frames),
		cmocka_unit_test(symbolizer_user_frames),
		cmocka_unit_test(symbolizer_frees_unmapped_files),
		cmocka_unit_test(symbolizer_total_spend_cap),
		cmocka_unit_test(symbolizer_vdso),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
