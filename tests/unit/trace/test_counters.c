// SPDX-License-Identifier: GPL-2.0
/*
 * The health counters' text: every counter named, once, its value in one
 * column past the longest name (python_walks_at_switch_out, 26 characters,
 * ran into its value in a 24-wide column).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offcpu.h"
#include "trace/counters.h"

static void every_counter_named_values_in_one_column(void **state)
{
	uint64_t values[OFFCPU_CNT_MAX];
	char *text = NULL, *line, *save = NULL;
	size_t size = 0, longest = 0, lines = 0;
	long column = -1;
	unsigned int i;
	FILE *out;

	(void)state;
	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		values[i] = 1000 + i;
		assert_non_null(counters__name(i));
		assert_string_not_equal(counters__name(i), "unknown");
		if (strlen(counters__name(i)) > longest)
			longest = strlen(counters__name(i));
	}
	out = open_memstream(&text, &size);
	assert_non_null(out);
	counters__print(out, values, "  ");
	assert_int_equal(fclose(out), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *value = strrchr(line, ' ') + 1;
		char name[64];

		assert_int_equal(sscanf(line, " %63s", name), 1);
		assert_string_equal(name, counters__name(lines));
		assert_int_equal(strtoull(value, NULL, 10), 1000 + lines);
		if (column < 0)
			column = value - line;
		assert_int_equal(value - line, column);
		lines++;
	}
	assert_int_equal(lines, OFFCPU_CNT_MAX);
	/* Two of indent, the longest name, one space at least. */
	assert_true((size_t)column >= 2 + longest + 1);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_counter_named_values_in_one_column),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
