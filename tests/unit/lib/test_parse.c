// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/array.h"
#include "lib/parse.h"

static void durations_with_units(void **state)
{
	uint64_t ns;

	(void)state;
	assert_int_equal(parse__duration_ns("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(parse__duration_ns("7ns", &ns), 0);
	assert_int_equal(ns, 7);
	assert_int_equal(parse__duration_ns("500us", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(parse__duration_ns("5ms", &ns), 0);
	assert_int_equal(ns, 5000000);
	assert_int_equal(parse__duration_ns("2s", &ns), 0);
	assert_int_equal(ns, 2000000000ULL);
	assert_int_equal(parse__duration_ns("3m", &ns), 0);
	assert_int_equal(ns, 180000000000ULL);
	assert_int_equal(parse__duration_ns("0ms", &ns), 0);
	assert_int_equal(ns, 0);
}

/* Durations as offcpu.1 writes them: decimals allowed, exact to the nanosecond. */
static void durations_with_decimals(void **state)
{
	static const struct {
		const char *text;
		uint64_t ns;
	} good[] = {
		{ "1.5s", 1500000000ULL }, { "0.25ms", 250000 },
		{ "1.5ms", 1500000 },	   { "2.000001ms", 2000001 },
		{ "0.000000001s", 1 },	   { "1.0ns", 1 },
		{ "1.500us", 1500 },	   { "0.5m", 30000000000ULL },
		{ "0.0000000001m", 6 },	   { "18446744073.709551615s", UINT64_MAX },
	};
	static const char *const inexact[] = {
		"1.5ns",   "0.0001us", "0.0000000001s",	 "1.", ".5ms", "1..5ms",
		"1.5.0ms", "1.5",      "0.00000000001m",
	};
	uint64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ns = 42;
		assert_int_equal(parse__duration_ns(good[i].text, &ns), 0);
		assert_true(ns == good[i].ns);
	}
	for (i = 0; i < ARRAY_SIZE(inexact); i++) {
		ns = 42;
		assert_int_equal(parse__duration_ns(inexact[i], &ns), -EINVAL);
		assert_int_equal(ns, 42);
	}
	assert_int_equal(parse__duration_ns("18446744073.709551616s", &ns), -ERANGE);
}

static void durations_rejected(void **state)
{
	static const char *const bad[] = {
		"",   "5",     "-5ms", "+5ms",	 "5 ms", " 5ms", "5ms ",  "5xs",
		"ms", "1,5ms", "5MS",  "0x10ms", "5h",	 "s5",	 "5msms",
	};
	uint64_t ns = 42;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(parse__duration_ns(bad[i], &ns), -EINVAL);
		assert_int_equal(ns, 42);
	}
	assert_int_equal(parse__duration_ns("99999999999999999999ns", &ns), -ERANGE);
	assert_int_equal(parse__duration_ns("18446744073709551615m", &ns), -ERANGE);
	assert_int_equal(parse__duration_ns("18446744073709551615ns", &ns), 0);
	assert_true(ns == UINT64_MAX);
}

static void id_lists(void **state)
{
	struct id_list list = { 0 };

	(void)state;
	assert_int_equal(id_list__parse("1", &list), 0);
	assert_int_equal(id_list__parse("20,300,4000", &list), 0);
	assert_int_equal(list.nr, 4);
	assert_int_equal(list.ids[0], 1);
	assert_int_equal(list.ids[1], 20);
	assert_int_equal(list.ids[3], 4000);
	id_list__free(&list);
	assert_null(list.ids);
}

static void id_lists_rejected(void **state)
{
	static const char *const bad[] = {
		"",   ",", "1,",  ",1", "1,,2",	      "a",
		"-1", "0", "1 2", " 1", "2147483648", "99999999999999999999999",
	};
	struct id_list list = { 0 };
	size_t i;

	(void)state;
	assert_int_equal(id_list__parse("7", &list), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_not_equal(id_list__parse(bad[i], &list), 0);
		/* A bad list leaves the earlier ones as they were. */
		assert_int_equal(list.nr, 1);
		assert_int_equal(list.ids[0], 7);
	}
	id_list__free(&list);
}

static void unsigned_numbers(void **state)
{
	uint64_t n;

	(void)state;
	assert_int_equal(parse__uint("127", 1, 127, &n), 0);
	assert_int_equal(n, 127);
	assert_int_equal(parse__uint("128", 1, 127, &n), -ERANGE);
	assert_int_equal(parse__uint("0", 1, 127, &n), -ERANGE);
	assert_int_equal(parse__uint("", 1, 127, &n), -EINVAL);
	assert_int_equal(parse__uint("-1", 1, 127, &n), -EINVAL);
	assert_int_equal(parse__uint("12k", 1, 127, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_with_units), cmocka_unit_test(durations_with_decimals),
		cmocka_unit_test(durations_rejected),	cmocka_unit_test(id_lists),
		cmocka_unit_test(id_lists_rejected),	cmocka_unit_test(unsigned_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
