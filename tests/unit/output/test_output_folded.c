// SPDX-License-Identifier: GPL-2.0
/* The folded stacks of the fixture profile, and of one with on-CPU samples (-F). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/output.h"
#include "offcpu.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void folded_golden(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_folded__write, p);

	(void)state;
	assert_string_equal(
	    text,
	    "app;[interruptible];[lock:futex];__x64_sys_futex_[k];futex_wait_queue_[k] 50000000\n"
	    "app;[interruptible];[sleep];main;app+0x234;clock_nanosleep;"
	    "__x64_sys_clock_nanosleep_[k];do_nanosleep_[k] 50000000\n");
	free(text);
	profile__free(p);
}

#define PERIOD_NS 10030090ULL /* a period as -F gives one (1e9 / 99.7 Hz, rounded down) */

/*
 * The fixture, and samples of -F 997: the futex waiter computing in
 * main (3 samples) and in the kernel under it (1), and another thread
 * with a label (2) and without stacks (1).
 */
static struct profile *sampled_profile(void)
{
	struct profile *p = fixture_profile(false);
	struct frame u[2], k[1];
	struct label label = { "pg.backend_type", "walwriter" };
	struct wait s = { 0 };
	int i, err = 0;

	u[0] = uframe(p, 0x1400, "compute");
	u[1] = uframe(p, 0x1300, "main");
	k[0] = kframe(p, 0xffffffff81000210ULL, "clear_page_erms");
	p->oncpu.period_ns = PERIOD_NS;
	s.pid = 100;
	s.tid = 102;
	s.comm = strpool__intern(p->strings, "app");
	s.state = OFFCPU_STATE_RUNNING;
	s.duration_ns = PERIOD_NS;
	s.user_stack = profile__intern_stack(p, u, 2);
	for (i = 0; i < 3; i++) {
		s.end_ts_ns = 4000 + (uint64_t)i;
		assert_int_equal(profile__add_sample(p, &s), 0);
	}
	s.kernel_stack = profile__intern_stack(p, k, 1);
	assert_int_equal(profile__add_sample(p, &s), 0);
	s.tid = 103;
	s.comm = strpool__intern(p->strings, "walwriter");
	s.kernel_stack = NULL;
	s.labels = profile__intern_labels(p, &label, 1, &err);
	assert_non_null(s.labels);
	assert_int_equal(profile__add_sample(p, &s), 0);
	assert_int_equal(profile__add_sample(p, &s), 0);
	s.labels = NULL;
	s.user_stack = NULL;
	assert_int_equal(profile__add_sample(p, &s), 0);
	return p;
}

static const char fixture_lines[] =
    "app;[interruptible];[lock:futex];__x64_sys_futex_[k];futex_wait_queue_[k] 50000000\n"
    "app;[interruptible];[sleep];main;app+0x234;clock_nanosleep;"
    "__x64_sys_clock_nanosleep_[k];do_nanosleep_[k] 50000000\n";

/*
 * Each distinct sample stack a line of its own, "[on-cpu]" where a wait
 * has its state and class, weighing its samples times the period; the
 * waits' lines are the fixture's, unchanged.
 */
static void folded_with_samples(void **state)
{
	struct profile *p = sampled_profile();
	char *text = render(output_folded__write, p);

	(void)state;
	assert_int_equal(strncmp(text, fixture_lines, strlen(fixture_lines)), 0);
	assert_string_equal(
	    text + strlen(fixture_lines),
	    "app;[on-cpu];main;compute 30090270\n"
	    "app;[on-cpu];main;compute;clear_page_erms_[k] 10030090\n"
	    "walwriter;[on-cpu] 10030090\n"
	    "walwriter;[on-cpu];[pg.backend_type=walwriter];main;compute 20060180\n");
	free(text);
	profile__free(p);
}

/*
 * Blocked and run-queue time are a wait's: by them, the waits' lines
 * alone. The fixture's waits were never on a run queue: all of their time
 * is blocked, none of it run-queue time.
 */
static void folded_by_wait_time_has_no_samples(void **state)
{
	struct profile *p = sampled_profile();
	struct output_opts opts = { .group_by = GROUP_BY_TID, .time = OUTPUT_TIME_BLOCKED };
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_int_equal(output_folded__write(out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(text, fixture_lines);
	free(text);
	text = NULL;
	opts.time = OUTPUT_TIME_RUNQ;
	out = open_memstream(&text, &size);
	assert_int_equal(output_folded__write(out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(text, "");
	free(text);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_golden),
		cmocka_unit_test(folded_with_samples),
		cmocka_unit_test(folded_by_wait_time_has_no_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
