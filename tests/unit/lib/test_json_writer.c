// SPDX-License-Identifier: GPL-2.0
/* The streaming JSON writer: its commas and escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/json_writer.h"

static void json_escaping(void **state)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	struct json_writer w;

	(void)state;
	json_writer__init(&w, out);
	json_writer__begin_object(&w);
	json_writer__key(&w, "s");
	json_writer__string(&w, "a\"b\\c\n\x01");
	json_writer__key(&w, "list");
	json_writer__begin_array(&w);
	json_writer__u64(&w, 1);
	json_writer__hex(&w, 255);
	json_writer__begin_object(&w);
	json_writer__end_object(&w);
	json_writer__end_array(&w);
	json_writer__end_object(&w);
	fclose(out);
	assert_string_equal(buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"list\":[1,\"0xff\",{}]}");
	free(buf);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_escaping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
