// SPDX-License-Identifier: GPL-2.0
/* The timeline's placement of wakeup slices and flows, and its edges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"

/* A wait of tid in pid 1 that ended at end_ns, woken by waker_tid (0: none). */
static void add(struct profile *p, uint32_t tid, uint64_t end_ns, uint64_t duration_ns,
		uint64_t runq_ns, uint32_t waker_tid, unsigned int open)
{
	struct wait w = { 0 };
	char comm[16];

	snprintf(comm, sizeof(comm), "t%u", tid);
	w.pid = 1;
	w.tid = tid;
	w.comm = strpool__intern(p->strings, comm);
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "lock:futex");
	w.end_ts_ns = end_ns;
	w.duration_ns = duration_ns;
	w.runq_ns = runq_ns;
	w.open = open;
	if (waker_tid) {
		w.waker.context = OFFCPU_WAKER_TASK;
		w.waker.pid = 1;
		w.waker.tid = waker_tid;
		snprintf(comm, sizeof(comm), "t%u", waker_tid);
		w.waker.comm = strpool__intern(p->strings, comm);
	}
	assert_int_equal(profile__add(p, &w), 0);
}

static char *render(const struct profile *p, const struct output_opts *opts)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	assert_non_null(out);
	assert_int_equal(output_trace__write(out, p, opts), 0);
	fclose(out);
	return buf;
}

static void assert_has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("no %s in:\n%s", needle, text);
}

static void wakeups_fit_their_track(void **state)
{
	struct output_opts opts = { 0 };
	struct profile *p;
	char *text;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = 1000000;
	/*
	 * t12 wakes t11 and, 400 ns later, t13: each slice begins a ns before
	 * its wakeup, with its s, and ends before the next; each f is where
	 * the run-queue slice begins.
	 */
	add(p, 11, 2000000, 500000, 10000, 12, 0);
	add(p, 13, 2100000, 600000, 109600, 12, 0);
	/* Woken at its switch-in (runq 0): drawn 3 ns before, s and f a ns apart in slices. */
	add(p, 14, 3000000, 100000, 0, 12, 0);
	/*
	 * Woken the very ns its waker's own wait begins (the enqueue came
	 * later than the wakeup): moved to the waker's last us before it.
	 */
	add(p, 12, 4500000, 500000, 0, 0, 0);
	add(p, 15, 4100000, 200000, 100000, 12, 0);
	/*
	 * Woken inside the waker's wait, which began before its own: stamps
	 * that disagree, no slice, the s binds to the waker's wait.
	 */
	add(p, 18, 4200000, 150000, 50000, 12, 0);
	/* Asleep since before the recording: drawn from its first ns. */
	add(p, 16, 1500000, 2000000, 0, 0, OFFCPU_WAIT_OPEN_BEFORE);
	/* Stamps that overlap (one dated at the start): the first drawn up to the second. */
	add(p, 17, 6000000, 1000000, 0, 0, 0);
	add(p, 17, 7000000, 1500000, 0, 0, 0);
	text = render(p, &opts);
	assert_has(text, "\"tid\":17,\"cat\":\"wait\",\"ts\":5000.000,\"dur\":500.000");
	assert_has(text, "\"overlaps_next_wait_ns\":500000");
	assert_has(text, "\"tid\":17,\"cat\":\"wait\",\"ts\":5500.000,\"dur\":1500.000");
	assert_has(text, "\"waits_cut_at_the_next\":1,");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":1989.999,\"dur\":0.400");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":1990.399,\"dur\":1.000");
	assert_has(text, "\"ph\":\"s\",\"name\":\"wakeup\",\"pid\":1,\"tid\":12,\"cat\":\"sched\","
			 "\"id\":1,\"ts\":1989.999}");
	assert_has(text, "\"ph\":\"f\",\"name\":\"wakeup\",\"pid\":1,\"tid\":11,\"cat\":\"sched\","
			 "\"id\":1,\"ts\":1990.000,\"bp\":\"e\"}");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":2999.996,\"dur\":1.000");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"id\":3,\"ts\":2999.998}");
	assert_has(text, "\"tid\":14,\"cat\":\"sched\",\"id\":3,\"ts\":2999.999,\"bp\":\"e\"}");
	/* The run-queue part, nested: from the wakeup to the end. */
	assert_has(text, "\"name\":\"runq\",\"pid\":1,\"tid\":11,\"cat\":\"sched\",\"ts\":1990.000,"
			 "\"dur\":10.000}");
	assert_has(text, "\"tid\":16,\"cat\":\"wait,open\",\"ts\":1000.000,\"dur\":500.000");
	assert_has(text, "\"open\":\"before\",\"drawn_to_edge\":\"start\"");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":3998.998,\"dur\":1.000");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"id\":5,\"ts\":3999.499}");
	assert_has(text, "\"tid\":15,\"cat\":\"sched\",\"id\":5,\"ts\":3999.500,\"bp\":\"e\"}");
	assert_has(text, "\"tid\":12,\"cat\":\"sched\",\"id\":6,\"ts\":4150.500}");
	assert_null(strstr(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":4149.999"));
	assert_null(strstr(text, "\"tid\":12,\"cat\":\"sched\",\"ts\":4150.000"));
	assert_has(text, "\"wakeup_flows\":5,");
	assert_has(text, "\"wakeups_without_room_for_a_flow\":0,");
	assert_has(text, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":12,"
			 "\"args\":{\"name\":\"t12\"}}");
	free(text);
	profile__free(p);
}

static void window_cuts_and_counts(void **state)
{
	struct output_opts opts = { .from_ns = 1000000, .to_ns = 1500000 };
	struct profile *p;
	char *text;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = 1000000;
	add(p, 11, 1200000, 100000, 0, 0, 0);	    /* before the window */
	add(p, 11, 2100000, 200000, 50000, 12, 0);  /* crosses its start: its wakeup inside */
	add(p, 11, 2700000, 400000, 100000, 12, 0); /* crosses its end: its wakeup past it */
	text = render(p, &opts);
	assert_has(text, "\"ts\":2000.000,\"dur\":100.000,\"args\":{\"state\":\"interruptible\","
			 "\"duration_ns\":200000");
	assert_has(text, "\"drawn_to_edge\":\"start\"");
	assert_has(text, "\"ts\":2300.000,\"dur\":200.000");
	assert_has(text, "\"drawn_to_edge\":\"end\"");
	assert_has(text, "\"waits_outside_the_window\":1,");
	assert_has(text, "\"wakeup_flows\":1,");
	assert_has(text, "\"wakeups_outside_the_window\":1,");
	assert_has(text, "\"drawn_from_ts_ns\":2000000,\"drawn_to_ts_ns\":2500000");
	free(text);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wakeups_fit_their_track),
		cmocka_unit_test(window_cuts_and_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
