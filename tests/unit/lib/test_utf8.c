// SPDX-License-Identifier: GPL-2.0
/* UTF-8 decoding as every output does it: characters, and U+FFFD for what is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/array.h"
#include "lib/utf8.h"

/* The code points s decodes to, UTF8_INVALID for each U+FFFD. */
static size_t decode(const char *s, uint32_t *cps, size_t max)
{
	size_t nr = 0, len;

	for (; *s && nr < max; s += len) {
		len = utf8__next(s, &cps[nr++]);
		assert_true(len >= 1 && len <= 4);
	}
	return nr;
}

static void characters(void **state)
{
	static const struct {
		const char *text;
		uint32_t cp;
	} cases[] = {
		{ "a", 'a' },
		{ "\x1b", 0x1b },
		{ "\x7f", 0x7f },
		{ "\xc2\x80", 0x80 },
		{ "\xc2\x9b", 0x9b },
		{ "\xc3\xa9", 0xe9 },
		{ "\xe0\xa0\x80", 0x800 },
		{ "\xe2\x80\xa8", 0x2028 },
		{ "\xed\x9f\xbf", 0xd7ff },
		{ "\xee\x80\x80", 0xe000 },
		{ "\xef\xbf\xbe", 0xfffe },
		{ "\xef\xbf\xbf", 0xffff },
		{ "\xf0\x90\x80\x80", 0x10000 },
		{ "\xf4\x8f\xbf\xbf", 0x10ffff },
	};
	char buf[4];
	uint32_t cp;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(utf8__next(cases[i].text, &cp), strlen(cases[i].text));
		assert_int_equal(cp, cases[i].cp);
		assert_int_equal(utf8__put(cp, buf), strlen(cases[i].text));
		assert_memory_equal(buf, cases[i].text, strlen(cases[i].text));
	}
}

/*
 * One U+FFFD per maximal subpart, as Python's
 * bytes.decode("utf-8", "replace") counts them (checked there).
 */
static void maximal_subparts(void **state)
{
	static const struct {
		const char *text;
		size_t replacements; /* and nothing else */
	} cases[] = {
		{ "\xff", 1 },
		{ "\xff\xfe", 2 },
		{ "\x80", 1 },		   /* a continuation alone */
		{ "\xc0\x80", 2 },	   /* overlong NUL */
		{ "\xc1\xbf", 2 },	   /* overlong */
		{ "\xe0\x80\x80", 3 },	   /* overlong */
		{ "\xed\xa0\x80", 3 },	   /* a surrogate */
		{ "\xed\xbf\xbf", 3 },	   /* a surrogate */
		{ "\xe2\x82", 1 },	   /* cut short */
		{ "\xf0\x9f\x98", 1 },	   /* cut short */
		{ "\xf0\x80\x80\x80", 4 }, /* overlong */
		{ "\xf4\x90\x80\x80", 4 }, /* above U+10FFFF */
		{ "\xf5\x80", 2 },
		{ "\xf8\x88\x80\x80\x80", 5 }, /* five-byte forms are gone */
	};
	uint32_t cps[8];
	size_t i, k, nr;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		nr = decode(cases[i].text, cps, ARRAY_SIZE(cps));
		if (nr != cases[i].replacements)
			fail_msg("case %zu: %zu characters, not %zu", i, nr, cases[i].replacements);
		for (k = 0; k < nr; k++)
			assert_int_equal(cps[k], UTF8_INVALID);
	}
}

/* A bad sequence takes no character after it, nor the NUL at its end. */
static void resumes_at_the_next_character(void **state)
{
	uint32_t cps[8];

	(void)state;
	assert_int_equal(decode("\xe2\x82"
				"a\xc3",
				cps, 8),
			 3);
	assert_int_equal(cps[0], UTF8_INVALID);
	assert_int_equal(cps[1], 'a');
	assert_int_equal(cps[2], UTF8_INVALID);
	assert_int_equal(decode("\xed\xa0\x80\xc3\xa9", cps, 8), 4);
	assert_int_equal(cps[3], 0xe9);
	assert_true(utf8__is_control(0x1b) && utf8__is_control(0x7f) && utf8__is_control(0x9f));
	assert_false(utf8__is_control(' ') || utf8__is_control(0xa0) || utf8__is_control(0x2028));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(characters),
		cmocka_unit_test(maximal_subparts),
		cmocka_unit_test(resumes_at_the_next_character),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
