// SPDX-License-Identifier: GPL-2.0
/* The text report's name column: padded or cut to its width, by characters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/text_column.h"

static char *cell(const char *s, size_t width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	text_column__print(out, s, width);
	assert_int_equal(fclose(out), 0);
	return text;
}

static void check_cell(const char *s, size_t width, const char *expect)
{
	char *text = cell(s, width);

	assert_string_equal(text, expect);
	assert_int_equal(text_column__width(text), width);
	free(text);
}

static void pads_or_cuts_to_the_width(void **state)
{
	(void)state;
	check_cell("idle", 6, "idle  ");
	check_cell("idle", 4, "idle");
	check_cell("postgres: idle", 8, "postgre" TEXT_COLUMN_ELLIPSIS);
	check_cell("ab", 1, TEXT_COLUMN_ELLIPSIS);
	check_cell("", 3, "   ");
}

/* "é" and "€" are one column each, of two and three bytes: never cut inside. */
static void counts_characters_not_bytes(void **state)
{
	(void)state;
	assert_int_equal(text_column__width("caf\xc3\xa9"), 4);
	assert_int_equal(text_column__width("\xe2\x82\xac\xe2\x82\xac"), 2);
	check_cell("caf\xc3\xa9", 5, "caf\xc3\xa9 ");
	check_cell("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, "\xc3\xa9\xc3\xa9" TEXT_COLUMN_ELLIPSIS);
	check_cell("a\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 3,
		   "a\xe2\x82\xac" TEXT_COLUMN_ELLIPSIS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pads_or_cuts_to_the_width),
		cmocka_unit_test(counts_characters_not_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
