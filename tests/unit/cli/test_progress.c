// SPDX-License-Identifier: GPL-2.0
/* The progress line: when it is shown, what it says, and that it is erased on a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/progress.h"
#include "offcpu.h"

#define SEC UINT64_C(1000000000)

static void says_elapsed_waits_and_drops(void **state)
{
	char line[128];

	(void)state;
	progress__format(line, sizeof(line), 12 * SEC + 999, 3456, 7);
	assert_string_equal(line, "offcpu: 12s, 3456 waits, 7 dropped");
	progress__format(line, sizeof(line), 0, 1, 0);
	assert_string_equal(line, "offcpu: 0s, 1 wait, 0 dropped");
}

static void when_it_is_shown(void **state)
{
	struct progress p;

	(void)state;
	/* Not a terminal, not -v: never (scripts and tests read stderr). */
	progress__init(&p, stderr, false, false, false, 0);
	assert_false(progress__due(&p, 3600 * SEC));
	/* A terminal: each second, unless a traced command owns it. */
	progress__init(&p, stderr, true, false, false, 0);
	assert_false(progress__due(&p, SEC - 1));
	assert_true(progress__due(&p, SEC));
	progress__init(&p, stderr, true, false, true, 0);
	assert_false(progress__due(&p, 3600 * SEC));
	progress__init(&p, stderr, true, true, true, 0);
	assert_true(progress__due(&p, SEC));
	/* -v into a log: every ten seconds. */
	progress__init(&p, stderr, false, true, false, 0);
	assert_false(progress__due(&p, 9 * SEC));
	assert_true(progress__due(&p, 10 * SEC));
}

static void in_place_on_a_terminal_and_erased(void **state)
{
	uint64_t counters[OFFCPU_CNT_BPF_MAX] = { 0 };
	struct progress p;
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_non_null(out);
	counters[OFFCPU_CNT_EMITTED] = 5;
	counters[OFFCPU_CNT_TABLE_FULL] = 1;
	counters[OFFCPU_CNT_RINGBUF_FULL] = 2;
	progress__init(&p, out, true, false, false, 0);
	progress__show(&p, 2 * SEC, counters);
	assert_false(progress__due(&p, 2 * SEC));
	assert_true(progress__due(&p, 3 * SEC));
	progress__end(&p);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(text, "\roffcpu: 2s, 5 waits, 3 dropped\033[K\r\033[K");
	free(text);

	out = open_memstream(&text, &size);
	assert_non_null(out);
	progress__init(&p, out, false, true, false, 0);
	progress__show(&p, 10 * SEC, counters);
	progress__end(&p);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(text, "offcpu: 10s, 5 waits, 3 dropped\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(says_elapsed_waits_and_drops),
		cmocka_unit_test(when_it_is_shown),
		cmocka_unit_test(in_place_on_a_terminal_and_erased),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
