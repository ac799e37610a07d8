// SPDX-License-Identifier: GPL-2.0
/* Interned strings, and offcpu serve's mark and sweep of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equal_strings_share_one_pointer),
		cmocka_unit_test(sweep_frees_what_was_not_marked),
		cmocka_unit_test(a_sweep_clears_the_marks),
		cmocka_unit_test(strings_not_the_pools_are_left_alone),
		cmocka_unit_test(sweep_of_many_keeps_exactly_the_marked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
