// SPDX-License-Identifier: GPL-2.0
/* --listen addresses: which are loopback, which are refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "serve/listen.h"

static void listen_addresses(void **state)
{
	struct listen_addr a;

	(void)state;
	assert_int_equal(listen_addr__parse("127.0.0.1:9465", &a), 0);
	assert_true(a.loopback);
	assert_int_equal(listen_addr__parse("127.1.2.3:1", &a), 0);
	assert_true(a.loopback);
	assert_int_equal(listen_addr__parse("[::1]:9465", &a), 0);
	assert_true(a.loopback);
	assert_int_equal(listen_addr__parse("0.0.0.0:80", &a), 0);
	assert_false(a.loopback);
	assert_int_equal(listen_addr__parse(":9465", &a), 0);
	assert_false(a.loopback);
	assert_int_equal(listen_addr__parse("[::]:9465", &a), 0);
	assert_false(a.loopback);
	assert_int_equal(listen_addr__parse("10.1.2.3:65535", &a), 0);
	assert_false(a.loopback);
	assert_int_equal(listen_addr__parse(LISTEN_DEFAULT, &a), 0);
	assert_true(a.loopback);
}

static void listen_addresses_rejected(void **state)
{
	static const char *const bad[] = { "",
					   "127.0.0.1",
					   "127.0.0.1:",
					   "127.0.0.1:0",
					   "127.0.0.1:65536",
					   "localhost:80",
					   "::1:80",
					   "[::1]",
					   "[::1:80",
					   "1.2.3:80",
					   "127.0.0.1:8x" };
	struct listen_addr a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(listen_addr__parse(bad[i], &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listen_addresses),
		cmocka_unit_test(listen_addresses_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
