// SPDX-License-Identifier: GPL-2.0
/* The JSON parser that reads recordings back: values, escapes, limits, errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/array.h"
#include "lib/json_reader.h"

static int parse(const char *text, struct json_value *v)
{
	const char *why;
	size_t at;

	return json_reader__parse(text, strlen(text), v, &why, &at);
}

static void values(void **state)
{
	struct json_value v;
	const struct json_value *m;

	(void)state;
	assert_int_equal(parse(" {\"a\":[1,2.5,-3,true,false,null],\"b\":{\"c\":\"d\"},"
			       "\"big\":18446744073709551615} ",
			       &v),
			 0);
	assert_int_equal(v.type, JSON_OBJECT);
	m = json_value__member(&v, "a");
	assert_non_null(m);
	assert_int_equal(m->nr, 6);
	assert_true(m->items[0].is_u64 && m->items[0].u64 == 1);
	assert_false(m->items[1].is_u64);
	assert_true(m->items[1].number == 2.5);
	assert_false(m->items[2].is_u64);
	assert_true(m->items[3].type == JSON_BOOL && m->items[3].boolean);
	assert_true(m->items[4].type == JSON_BOOL && !m->items[4].boolean);
	assert_int_equal(m->items[5].type, JSON_NULL);
	assert_string_equal(json_value__member(json_value__member(&v, "b"), "c")->string, "d");
	/* All 64 bits, which a double would round. */
	assert_true(json_value__member(&v, "big")->u64 == UINT64_MAX);
	assert_null(json_value__member(&v, "missing"));
	json_value__free(&v);
}

static void escapes(void **state)
{
	struct json_value v;

	(void)state;
	assert_int_equal(parse("\"q\\\"b\\\\s\\/n\\nt\\tu\\u00e9\\ud83d\\ude00\"", &v), 0);
	assert_string_equal(v.string, "q\"b\\s/n\nt\tu\xc3\xa9\xf0\x9f\x98\x80");
	json_value__free(&v);
}

static void errors(void **state)
{
	static const char *const bad[] = {
		"",	   "{",		  "{\"a\"}",  "{\"a\":1,}", "[1 2]", "\"open",
		"\"\\x\"", "\"\\ud800\"", "\"a\nb\"", "tru",	    "{} {}", "-",
		"01x",	   "[1,]",	  "{1:2}",    "\"\\u12\"",
	};
	char deep[200];
	struct json_value v;
	const char *why = NULL;
	size_t i, at;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse(bad[i], &v) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
	/* Nesting deeper than any recording: an error, not a deep recursion. */
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	assert_int_equal(json_reader__parse(deep, strlen(deep), &v, &why, &at), -EINVAL);
	assert_string_equal(why, "nested too deeply");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values),
		cmocka_unit_test(escapes),
		cmocka_unit_test(errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
