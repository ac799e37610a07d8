// SPDX-License-Identifier: GPL-2.0
/* When a process title is read again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(title_refresh_at_most_every_100ms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
