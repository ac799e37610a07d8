// SPDX-License-Identifier: GPL-2.0
/* The hash table: removing the entries a callback picks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/hash_table.h"

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
		cmocka_unit_test(remove_if_drops_what_it_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
