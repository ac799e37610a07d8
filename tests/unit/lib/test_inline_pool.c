// SPDX-License-Identifier: GPL-2.0
/* Inline frames interned, and offcpu serve's mark and sweep of them with their strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/inline_pool.h"
#include "lib/strpool.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inline_frames_marked_with_their_callers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
