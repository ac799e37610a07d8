// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/stat's state, threads and start time (for the reaper), fed fixtures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/proc_stat.h"

/* A bash's line, as 6.18 writes it (52 fields). */
static const char bash_line[] =
    "1234 (bash) S 1200 1234 1234 34816 5678 4194304 1631 9467 0 1 3 1 12 4 20 0 1 0 "
    "3758707 9043968 1330 18446744073709551615 94420437721088 94420438631533 "
    "140724700806080 0 0 0 65536 3670020 1266777851 1 0 0 17 1 0 0 0 0 0 94420438872208 "
    "94420438918980 94420460457984 140724700808793 140724700808798 140724700808798 "
    "140724700811246 0\n";

static void fields_of_a_plain_line(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_int_equal(proc_stat__parse(bash_line, sizeof(bash_line) - 1, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.threads, 1);
	assert_int_equal(st.start_ticks, 3758707);
	assert_false(proc_stat__exited(&st));
}

/* A comm is what the process made it: spaces and parentheses, a ") " of its own. */
static void comm_with_parentheses_and_spaces(void **state)
{
	const char line[] = "77 (a) Z (b c)) Z 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 -2 -20 1 0 "
			    "42 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
	struct proc_stat st;

	(void)state;
	assert_int_equal(proc_stat__parse(line, sizeof(line) - 1, &st), 0);
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.threads, 1);
	assert_int_equal(st.start_ticks, 42);
	assert_true(proc_stat__exited(&st));
	/* A leader that exited before its threads: the process runs on. */
	st.threads = 2;
	assert_false(proc_stat__exited(&st));
}

static void malformed_lines(void **state)
{
	static const char *const lines[] = {
		"",
		"1234 bash S 1",
		"1234 (bash)",
		"1234 (bash) S",
		"1234 (bash) S 1200 1234 1234 34816 5678 4194304 1631 9467 0 1 3 1 12 4 20 0 1 0",
		"1234 (bash) S 1200 1234 1234 34816 5678 4194304 1631 9467 0 1 3 1 12 4 20 0 x 0 5",
	};
	struct proc_stat st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(proc_stat__parse(lines[i], strlen(lines[i]), &st), -EINVAL);
}

static void own_process_and_a_gone_one(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_int_equal(proc_stat__read((uint32_t)getpid(), &st), 0);
	assert_true(st.state == 'R' || st.state == 'S');
	assert_true(st.threads >= 1 && st.start_ticks > 0);
	/* Above any pid_max (PID_MAX_LIMIT is 4194304). */
	assert_int_equal(proc_stat__read(4194305, &st), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_of_a_plain_line),
		cmocka_unit_test(comm_with_parentheses_and_spaces),
		cmocka_unit_test(malformed_lines),
		cmocka_unit_test(own_process_and_a_gone_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
