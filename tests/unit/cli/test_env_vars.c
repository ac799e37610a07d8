// SPDX-License-Identifier: GPL-2.0
/* The environment offcpu reads: defaults when unset, values parsed, bad ones refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/env_vars.h"
#include "lib/array.h"

static const char *const names[] = {
	"OFFCPU_BTF_PATH",	     "OFFCPU_NO_WAKEUPS",	    "OFFCPU_TEST_LIMITS",
	"OFFCPU_TEST_DROP_EXIT",     "OFFCPU_TEST_MEMSTATS",	    "OFFCPU_TEST_ROTATE_STACKS",
	"OFFCPU_TEST_SWEEP_STRINGS", "OFFCPU_TEST_RECORD_DELAY_US", "OFFCPU_TEST_NO_KERNEL_LEAF",
	"OFFCPU_TEST_SLOTS_AHEAD",   "OFFCPU_TEST_NO_PYTHON",	    "OFFCPU_TEST_NO_OBJECTS",
};

static int clear(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		unsetenv(names[i]);
	return 0;
}

static void unset_is_default(void **state)
{
	struct symbol_limits defaults;
	struct env_vars ev;

	(void)state;
	limits__defaults(&defaults);
	assert_int_equal(env_vars__read(&ev), 0);
	assert_null(ev.btf_path);
	assert_false(ev.no_wakeups || ev.drop_exits || ev.memstats || ev.sweep_strings ||
		     ev.no_kernel_leaf || ev.slots_ahead || ev.no_python || ev.no_objects);
	assert_int_equal(ev.memstats_interval_ns, 0);
	assert_int_equal(ev.rotate_stacks, 0);
	assert_int_equal(ev.record_delay_us, 0);
	assert_memory_equal(&ev.limits, &defaults, sizeof(defaults));
}

static void values(void **state)
{
	struct env_vars ev;

	(void)state;
	setenv("OFFCPU_BTF_PATH", "/tmp/vmlinux", 1);
	/* Set to anything, as it always was. */
	setenv("OFFCPU_NO_WAKEUPS", "", 1);
	setenv("OFFCPU_TEST_LIMITS", "max_symbols=10,max_file_bytes=4096", 1);
	setenv("OFFCPU_TEST_DROP_EXIT", "1", 1);
	setenv("OFFCPU_TEST_MEMSTATS", "2", 1);
	setenv("OFFCPU_TEST_ROTATE_STACKS", "64", 1);
	setenv("OFFCPU_TEST_SWEEP_STRINGS", "0", 1);
	setenv("OFFCPU_TEST_RECORD_DELAY_US", "999999", 1);
	setenv("OFFCPU_TEST_SLOTS_AHEAD", "1", 1);
	setenv("OFFCPU_TEST_NO_OBJECTS", "1", 1);
	assert_int_equal(env_vars__read(&ev), 0);
	assert_true(ev.no_objects);
	assert_string_equal(ev.btf_path, "/tmp/vmlinux");
	assert_true(ev.no_wakeups && ev.drop_exits && ev.memstats && ev.slots_ahead);
	assert_false(ev.sweep_strings || ev.no_python);
	assert_int_equal(ev.limits.max_symbols, 10);
	assert_int_equal(ev.limits.max_file_bytes, 4096);
	assert_int_equal(ev.memstats_interval_ns, 2000000000ULL);
	assert_int_equal(ev.rotate_stacks, 64);
	assert_int_equal(ev.record_delay_us, 999999);
}

/* MEMSTATS=0: serve logs nothing held, the collector's reaping passes still are. */
static void memstats_zero(void **state)
{
	struct env_vars ev;

	(void)state;
	setenv("OFFCPU_TEST_MEMSTATS", "0", 1);
	assert_int_equal(env_vars__read(&ev), 0);
	assert_true(ev.memstats);
	assert_int_equal(ev.memstats_interval_ns, 0);
}

static void refused(void **state)
{
	static const char *const bad[][2] = {
		{ "OFFCPU_TEST_LIMITS", "max_symbols=ten" },
		{ "OFFCPU_TEST_LIMITS", "no_such_limit=1" },
		{ "OFFCPU_TEST_DROP_EXIT", "yes" },
		{ "OFFCPU_TEST_SWEEP_STRINGS", "" },
		{ "OFFCPU_TEST_NO_PYTHON", "true" },
		{ "OFFCPU_TEST_MEMSTATS", "2s" },
		{ "OFFCPU_TEST_MEMSTATS", "" },
		{ "OFFCPU_TEST_MEMSTATS", "18446744074" },
		{ "OFFCPU_TEST_ROTATE_STACKS", "0" },
		{ "OFFCPU_TEST_ROTATE_STACKS", "-1" },
		{ "OFFCPU_TEST_RECORD_DELAY_US", "1000000" },
	};
	struct env_vars ev;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		clear(NULL);
		setenv(bad[i][0], bad[i][1], 1);
		assert_int_equal(env_vars__read(&ev), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(unset_is_default, clear),
		cmocka_unit_test_setup(values, clear),
		cmocka_unit_test_setup(memstats_zero, clear),
		cmocka_unit_test_setup(refused, clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
