// SPDX-License-Identifier: GPL-2.0
/* The per-pid and per-tid records' table: found, or added zeroed with their key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/hash_table.h"
#include "lib/u32_key.h"

struct record {
	uint64_t ns;
	uint32_t tid; /* not first: the key is where its offset says */
};

static void found_or_added_with_its_key(void **state)
{
	struct hash_table *t = hash_table__new(u32_key__hash, u32_key__equal);
	struct record *a, *b;
	uint32_t tid;
	bool added;

	(void)state;
	assert_non_null(t);
	a = u32_key__find_or_add(t, 7, sizeof(*a), offsetof(struct record, tid), &added);
	assert_non_null(a);
	assert_true(added);
	assert_int_equal(a->tid, 7);
	assert_int_equal(a->ns, 0);
	a->ns = 5;
	assert_ptr_equal(u32_key__find_or_add(t, 7, sizeof(*a), offsetof(struct record, tid),
					      &added),
			 a);
	assert_false(added);
	assert_int_equal(a->ns, 5);
	b = u32_key__find_or_add(t, 8, sizeof(*b), offsetof(struct record, tid), NULL);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	tid = 7;
	assert_ptr_equal(hash_table__find(t, &tid), a);
	assert_int_equal(hash_table__size(t), 2);
	hash_table__free_values(t, free);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(found_or_added_with_its_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
