// SPDX-License-Identifier: GPL-2.0
/* CPython's line tables, every format, against the lines CPython itself gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "python/python_lines.h"

#include "python_fixtures.h"

#define LINES_FIXTURE "tests/unit/fixtures/python_lines.tsv"

static enum python_line_format format_of(const char *version)
{
	if (!strcmp(version, "3.9"))
		return PYTHON_LINES_LNOTAB;
	if (!strcmp(version, "3.10"))
		return PYTHON_LINES_3_10;
	return PYTHON_LINES_LOCATIONS;
}

/*
 * Every code object of python_lines.py's sample, compiled by 3.9 to 3.13:
 * each instruction's line as CPython gives it (dis / co_lines()).
 */
static void line_tables_as_cpython_reads_them(void **state)
{
	FILE *f = fopen(LINES_FIXTURE, "r");
	char *line = NULL;
	size_t cap = 0, rows = 0, checked = 0;
	char seen[5] = { 0 };

	(void)state;
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		char *version = strtok(line, "\t"), *name = strtok(NULL, "\t");
		char *first = strtok(NULL, "\t"), *hex = strtok(NULL, "\t");
		char *pairs = strtok(NULL, "\t\n"), *pair;
		uint8_t table[4096];
		size_t size;

		assert_non_null(pairs);
		size = unhex(hex, table, sizeof(table));
		for (pair = strtok(pairs, ","); pair; pair = strtok(NULL, ",")) {
			unsigned int off, want;

			assert_int_equal(sscanf(pair, "%u:%u", &off, &want), 2);
			if (python_lines__line(format_of(version), table, size, atoi(first), off) !=
			    want)
				fail_msg("%s %s: offset %u: line %u, CPython says %u", version,
					 name, off,
					 python_lines__line(format_of(version), table, size,
							    atoi(first), off),
					 want);
			checked++;
		}
		assert_in_range(atoi(version + 2), 9, 13);
		seen[atoi(version + 2) - 9]++;
		rows++;
	}
	free(line);
	fclose(f);
	/* Every version, the 300-line jump, the comprehension's lines going back. */
	assert_true(rows >= 15);
	if (checked < 400)
		fail_msg("%zu offsets checked", checked);
	assert_true(seen[0] && seen[1] && seen[2] && seen[3] && seen[4]);
}

static void line_tables_cut_short_say_no_line(void **state)
{
	/* A long-form entry whose varints run past the end. */
	static const uint8_t cut[] = { 0x80 | (14 << 3), 0x41 };
	static const uint8_t not_an_entry[] = { 0x05 };

	(void)state;
	assert_int_equal(python_lines__line(PYTHON_LINES_LOCATIONS, cut, sizeof(cut), 10, 0), 0);
	assert_int_equal(python_lines__line(PYTHON_LINES_LOCATIONS, not_an_entry, 1, 10, 0), 0);
	assert_int_equal(python_lines__line(PYTHON_LINES_LOCATIONS, NULL, 0, 10, 0), 0);
	assert_int_equal(python_lines__line(PYTHON_LINES_3_10, NULL, 0, 10, 0), 0);
	/* 3.9: no pair yet, the first line. */
	assert_int_equal(python_lines__line(PYTHON_LINES_LNOTAB, NULL, 0, 10, 4), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(line_tables_as_cpython_reads_them),
		cmocka_unit_test(line_tables_cut_short_say_no_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
