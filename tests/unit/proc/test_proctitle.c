// SPDX-License-Identifier: GPL-2.0
/* A process title made of its command line, and when it is read again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proc/proctitle.h"

/* A title is read at the first wait, then again once PROCTITLE_REFRESH_NS has passed. */
static void title_refresh_at_most_every_100ms(void **state)
{
	struct proctitle_age age = { 0 };
	uint64_t t = 5000000000ULL;

	(void)state;
	assert_true(proctitle__due(&age, t));
	assert_false(proctitle__due(&age, t));
	assert_false(proctitle__due(&age, t + PROCTITLE_REFRESH_NS - 1));
	/* A record from another CPU, older than the read: not due, no wrap. */
	assert_false(proctitle__due(&age, t - 1));
	assert_true(proctitle__due(&age, t + PROCTITLE_REFRESH_NS));
	assert_false(proctitle__due(&age, t + PROCTITLE_REFRESH_NS + 1));
	assert_int_equal(PROCTITLE_REFRESH_NS, 100 * 1000 * 1000);
}

static void titles(void **state)
{
	static const char cmdline[] = "postgres: alice bench [local] UPDATE\0\0\0";
	static const char args[] = "/usr/bin/python3\0-m\0http.server\0";
	char out[64];

	(void)state;
	assert_int_equal(proctitle__from_cmdline(cmdline, sizeof(cmdline) - 1, out, sizeof(out)),
			 strlen("postgres: alice bench [local] UPDATE"));
	assert_string_equal(out, "postgres: alice bench [local] UPDATE");
	proctitle__from_cmdline(args, sizeof(args) - 1, out, sizeof(out));
	assert_string_equal(out, "/usr/bin/python3 -m http.server");
	proctitle__from_cmdline("a\nb\x7f", 4, out, sizeof(out));
	assert_string_equal(out, "a?b?");
	assert_int_equal(proctitle__from_cmdline("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	proctitle__from_cmdline(args, sizeof(args) - 1, out, 9);
	assert_string_equal(out, "/usr/bin");
	assert_int_equal(proctitle__read(999999999, out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(title_refresh_at_most_every_100ms),
		cmocka_unit_test(titles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
