// SPDX-License-Identifier: GPL-2.0
/* Interned strings and inline frames, and offcpu serve's mark and sweep of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/hash_table.h"
#include "lib/inline_pool.h"
#include "lib/strpool.h"

static void equal_strings_share_one_pointer(void **state)
{
	struct strpool *pool = strpool__new();
	char text[] = "libc.so.6";
	unsigned long strings, bytes;
	const char *a, *b;

	(void)state;
	assert_non_null(pool);
	a = strpool__intern(pool, text);
	text[0] = 'L';
	b = strpool__intern(pool, "libc.so.6");
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, text);
	assert_string_equal(a, "libc.so.6");
	assert_ptr_not_equal(strpool__intern(pool, text), a);
	strpool__stats(pool, &strings, &bytes);
	assert_int_equal(strings, 2);
	assert_int_equal(bytes, 2 * sizeof("libc.so.6"));
	strpool__free(pool);
}

static void sweep_frees_what_was_not_marked(void **state)
{
	struct strpool *pool = strpool__new();
	unsigned long strings, bytes, freed, freed_bytes;
	const char *kept, *title;

	(void)state;
	kept = strpool__intern(pool, "[kernel.kallsyms]");
	title = strpool__intern(pool, "sh -c sleep 1 # 4242");
	strpool__intern(pool, "x");
	strpool__mark(pool, kept);
	strpool__sweep(pool, &freed, &freed_bytes);
	assert_int_equal(freed, 2);
	assert_int_equal(freed_bytes, strlen("sh -c sleep 1 # 4242") + 1 + 2);
	strpool__stats(pool, &strings, &bytes);
	assert_int_equal(strings, 1);
	assert_int_equal(bytes, sizeof("[kernel.kallsyms]"));
	/* Kept where it was, and found there again. */
	assert_string_equal(kept, "[kernel.kallsyms]");
	assert_ptr_equal(strpool__intern(pool, "[kernel.kallsyms]"), kept);
	/* A swept string comes back as a new one, with its text. */
	title = strpool__intern(pool, "sh -c sleep 1 # 4242");
	assert_string_equal(title, "sh -c sleep 1 # 4242");
	strpool__stats(pool, &strings, &bytes);
	assert_int_equal(strings, 2);
	strpool__free(pool);
}

static void a_sweep_clears_the_marks(void **state)
{
	struct strpool *pool = strpool__new();
	unsigned long strings, bytes, freed, freed_bytes;
	const char *a = strpool__intern(pool, "a");

	(void)state;
	strpool__mark(pool, a);
	strpool__mark(pool, a);
	strpool__sweep(pool, &freed, &freed_bytes);
	assert_int_equal(freed, 0);
	assert_int_equal(freed_bytes, 0);
	/* Not marked again: the next sweep frees it. */
	strpool__sweep(pool, &freed, &freed_bytes);
	assert_int_equal(freed, 1);
	assert_int_equal(freed_bytes, 2);
	strpool__stats(pool, &strings, &bytes);
	assert_int_equal(strings, 0);
	assert_int_equal(bytes, 0);
	strpool__free(pool);
}

/* metrics' static "other", a copy of an interned string, NULL: none of them keeps anything. */
static void strings_not_the_pools_are_left_alone(void **state)
{
	static const char other[] = "other";
	struct strpool *pool = strpool__new();
	unsigned long freed, freed_bytes;
	char *copy;

	(void)state;
	strpool__intern(pool, "other");
	copy = strdup(strpool__intern(pool, "comm"));
	strpool__mark(pool, other);
	strpool__mark(pool, copy);
	strpool__mark(pool, "not interned");
	strpool__mark(pool, NULL);
	strpool__sweep(pool, &freed, &freed_bytes);
	assert_int_equal(freed, 2);
	assert_string_equal(copy, "comm");
	assert_string_equal(other, "other");
	free(copy);
	strpool__free(pool);
}

static void sweep_of_many_keeps_exactly_the_marked(void **state)
{
	struct strpool *pool = strpool__new();
	const char *s[2000];
	unsigned long strings, bytes, freed, freed_bytes;
	char text[32];
	int i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		snprintf(text, sizeof(text), "title %d", i);
		s[i] = strpool__intern(pool, text);
	}
	for (i = 0; i < 2000; i += 3)
		strpool__mark(pool, s[i]);
	strpool__sweep(pool, &freed, &freed_bytes);
	assert_int_equal(freed, 2000 - 667);
	strpool__stats(pool, &strings, &bytes);
	assert_int_equal(strings, 667);
	for (i = 0; i < 2000; i += 3) {
		snprintf(text, sizeof(text), "title %d", i);
		assert_string_equal(s[i], text);
		assert_ptr_equal(strpool__intern(pool, text), s[i]);
	}
	strpool__free(pool);
}

static void inline_frames_marked_with_their_callers(void **state)
{
	struct strpool *strings = strpool__new();
	struct inline_pool *pool = inline_pool__new();
	const char *fn_a = strpool__intern(strings, "memcpy_inlined");
	const char *fn_b = strpool__intern(strings, "helper");
	const char *fn_c = strpool__intern(strings, "unused");
	const char *file = strpool__intern(strings, "a.c");
	const struct frame_inline *outer, *inner, *other;
	struct frame_inline copy;
	unsigned long freed, freed_bytes;

	(void)state;
	outer = inline_pool__intern(pool, fn_b, file, 10, NULL);
	inner = inline_pool__intern(pool, fn_a, file, 20, outer);
	other = inline_pool__intern(pool, fn_c, file, 30, NULL);
	assert_non_null(other);
	assert_ptr_equal(inline_pool__intern(pool, fn_a, file, 20, outer), inner);
	/* A copy is not the pool's: it marks nothing. */
	copy = *other;
	inline_pool__mark(pool, &copy, strings);
	inline_pool__mark(pool, NULL, strings);
	inline_pool__mark(pool, inner, strings);
	assert_int_equal(inline_pool__sweep(pool), 1);
	strpool__sweep(strings, &freed, &freed_bytes);
	assert_int_equal(freed, 1);
	assert_int_equal(freed_bytes, sizeof("unused"));
	assert_string_equal(inner->function, "memcpy_inlined");
	assert_string_equal(inner->caller->function, "helper");
	assert_string_equal(inner->caller->file, "a.c");
	assert_ptr_equal(inline_pool__intern(pool, fn_a, file, 20, outer), inner);
	/* The marks are cleared: nothing marked, everything goes. */
	assert_int_equal(inline_pool__sweep(pool), 2);
	inline_pool__free(pool);
	strpool__free(strings);
}

static bool drop_odd(void *ctx, const void *key, void *value)
{
	int *dropped = ctx;

	(void)key;
	if (*(int *)value % 2 == 0)
		return false;
	(*dropped)++;
	free(value);
	return true;
}

static void remove_if_drops_what_it_says(void **state)
{
	struct hash_table *t = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	static const char *const keys[] = { "a", "b", "c", "d", "e" };
	int dropped = 0, i, *v;

	(void)state;
	for (i = 0; i < 5; i++) {
		v = malloc(sizeof(*v));
		*v = i;
		assert_int_equal(hash_table__insert(t, keys[i], v), 0);
	}
	assert_int_equal(hash_table__remove_if(t, drop_odd, &dropped), 2);
	assert_int_equal(dropped, 2);
	assert_int_equal(hash_table__size(t), 3);
	assert_null(hash_table__find(t, "b"));
	assert_null(hash_table__find(t, "d"));
	assert_int_equal(*(int *)hash_table__find(t, "e"), 4);
	hash_table__free_values(t, free);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_share_one_pointer),
		cmocka_unit_test(sweep_frees_what_was_not_marked),
		cmocka_unit_test(a_sweep_clears_the_marks),
		cmocka_unit_test(strings_not_the_pools_are_left_alone),
		cmocka_unit_test(sweep_of_many_keeps_exactly_the_marked),
		cmocka_unit_test(inline_frames_marked_with_their_callers),
		cmocka_unit_test(remove_if_drops_what_it_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
