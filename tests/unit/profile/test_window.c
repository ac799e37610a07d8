// SPDX-License-Identifier: GPL-2.0
/*
 * A profile is of its window: a wait begun before it adds only its time
 * inside (profile__share), in the sums, json's weight_ns, a report of the
 * json, and serve's counters; the whole wait stays in duration_ns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/output.h"
#include "profile/profile.h"
#include "serve/metrics.h"
#include "trace/recording.h"

#define S 1000000000ULL
/* The window begins 1000 s after boot. */
#define START (1000 * S)

/* A wait of duration_ns that ended at end_ns, weighing weight_ns whole (0: its duration). */
static struct wait a_wait(struct profile *p, uint32_t tid, uint64_t end_ns, uint64_t duration_ns,
			  uint64_t weight_ns)
{
	struct wait w = { .end_ts_ns = end_ns, .duration_ns = duration_ns, .weight_ns = weight_ns };

	w.pid = 100;
	w.tid = tid;
	w.comm = strpool__intern(p->strings, "app");
	w.wait_class = strpool__intern(p->strings, "pipe");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	return w;
}

static void share_is_the_part_inside(void **state)
{
	struct profile *p;
	struct wait_share s;
	struct wait w;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	/* Asleep 1 s before a 3 s window, still asleep at its end: 3 s. */
	w = a_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.runq_ns = 10000;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 3 * S);
	assert_int_equal(s.weight_ns, 3 * S);
	assert_int_equal(s.runq_ns, 10000);
	/* No window: all of it. */
	profile__share(&w, 0, &s);
	assert_int_equal(s.inside_ns, 4 * S);
	assert_int_equal(s.weight_ns, 4 * S);
	/* Begun inside: whole. */
	w = a_wait(p, 1, START + 3 * S, 2 * S, 0);
	profile__share(&w, START, &s);
	assert_int_equal(s.weight_ns, 2 * S);
	/* Sampled 1 in 10: ten times the part inside, its run queue alike. */
	w = a_wait(p, 1, START + 3 * S, 4 * S, 40 * S);
	w.runq_ns = 1000;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 3 * S);
	assert_int_equal(s.weight_ns, 30 * S);
	assert_int_equal(s.runq_ns, 10000);
	/* A run queue longer than the part inside is cut to it. */
	w = a_wait(p, 1, START + 5, 4 * S, 0);
	w.runq_ns = 100;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 5);
	assert_int_equal(s.runq_ns, 5);
	/* Ended before the window, or as it began: nothing of it inside. */
	w = a_wait(p, 1, START, 4 * S, 0);
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 0);
	assert_int_equal(s.weight_ns, 0);
	profile__free(p);
}

static void sums_count_the_window_and_keep_so_far(void **state)
{
	struct profile_entry **entries;
	struct profile *p;
	struct wait w;
	size_t nr;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = START;
	w = a_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.open = OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER;
	assert_int_equal(profile__add(p, &w), 0);
	w = a_wait(p, 2, START + 2 * S, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	/* Ended as the window began: counted and listed, with none of its time. */
	w = a_wait(p, 3, START, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	assert_int_equal(p->total_ns, 4 * S);
	assert_int_equal(p->total_count, 3);
	assert_int_equal(p->nr_waits, 3);
	/* Clipped is not estimated: an exact wait stays exact. */
	assert_int_equal(p->estimated.ns, 0);
	assert_int_equal(p->estimated.kept, 0);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(entries[0]->key.tid, 1);
	assert_int_equal(entries[0]->total_ns, 3 * S);
	assert_int_equal(entries[0]->duration_ns, 4 * S);
	assert_int_equal(entries[1]->duration_ns, S);
	free(entries);
	profile__free(p);
}

static void estimate_of_a_sampled_wait_is_of_its_part_inside(void **state)
{
	struct profile *p;
	struct wait w;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	p->window_start_ns = START;
	w = a_wait(p, 1, START + 3 * S, 4 * S, 40 * S);
	assert_int_equal(profile__add(p, &w), 0);
	/* Kept with p = 1/10: weight 30 s standing for 3 s, variance w (w - d) of those. */
	assert_int_equal(p->total_ns, 30 * S);
	assert_int_equal(p->estimated.ns, 30 * S);
	assert_int_equal(p->estimated.kept, 1);
	assert_true(p->estimated.variance == 30.0 * S * (30.0 * S - 3.0 * S));
	assert_true(p->estimated.count == 10.0);
	profile__free(p);
}

static char *json_of(const struct profile *p)
{
	struct output_opts opts = { 0 };
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	assert_int_equal(output_json__write(out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static int read_json(const char *text, struct profile *p)
{
	struct id_list none = { 0 };
	struct recording_filter all = {
		.pids = &none, .tids = &none, .max_duration_ns = UINT64_MAX
	};
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(in);
	err = recording__read(in, "window", &all, p);
	fclose(in);
	return err;
}

/*
 * json: duration_ns whole, weight_ns of the window, the window's start in
 * the stats record; read back, the same sums to the nanosecond (an odd
 * share of an odd sampled weight too), and the same json in the same order.
 */
static void json_and_its_report_count_the_window(void **state)
{
	struct profile *p, *back;
	struct wait w;
	char *text, *again;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = START;
	p->duration_ns = 3 * S;
	w = a_wait(p, 2, START + S, S / 2, 0);
	assert_int_equal(profile__add(p, &w), 0);
	w = a_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.open = OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER;
	assert_int_equal(profile__add(p, &w), 0);
	/* 7 s + 3 ns, 2 s + 1 ns of it inside, sampled 1 in 3: 6 s + 3 ns, not divisible. */
	w = a_wait(p, 3, START + 2 * S + 1, 7 * S + 3, 3 * (7 * S + 3));
	w.open = OFFCPU_WAIT_OPEN_BEFORE;
	w.runq_ns = 7;
	assert_int_equal(profile__add(p, &w), 0);
	w = a_wait(p, 2, START + 2 * S, S / 4, 0);
	assert_int_equal(profile__add(p, &w), 0);
	w = a_wait(p, 4, START, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	text = json_of(p);
	assert_non_null(strstr(text, "\"duration_ns\":1000000000,\"weight_ns\":0,"));
	assert_non_null(strstr(text, "\"duration_ns\":4000000000,\"weight_ns\":3000000000,"));
	assert_non_null(strstr(text, "\"duration_ns\":7000000003,\"weight_ns\":6000000003,"));
	assert_non_null(strstr(text, ",\"recording_start_ts_ns\":1000000000000}"));

	assert_int_equal(profile__new(true, &back), 0);
	assert_int_equal(read_json(text, back), 0);
	assert_int_equal(back->window_start_ns, START);
	assert_int_equal(back->total_ns, p->total_ns);
	assert_int_equal(back->total_count, p->total_count);
	assert_int_equal(back->total_runq_ns, p->total_runq_ns);
	assert_int_equal(back->estimated.ns, p->estimated.ns);
	assert_true(back->estimated.variance == p->estimated.variance);
	again = json_of(back);
	assert_string_equal(again, text);
	free(again);
	free(text);
	profile__free(back);
	profile__free(p);
}

/*
 * Recordings older than the window: read as they were (whole waits). A
 * weight_ns below what the window leaves of the wait is refused.
 */
static void older_and_forged_recordings(void **state)
{
	static const char older[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":4000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\"}\n";
	static const char below_window[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":2000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\",\"recording_start_ts_ns\":2000}\n";
	static const char clipped_without_window[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":3000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\"}\n";
	static const char clipped_not_before[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":3000,\"cpu\":0}\n"
	    "{\"type\":\"stats\",\"recording_start_ts_ns\":2000}\n";
	struct profile *p;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(older, p), 0);
	assert_int_equal(p->total_ns, 4000);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(below_window, p), -EINVAL);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(clipped_without_window, p), -EINVAL);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(clipped_not_before, p), -EINVAL);
	profile__free(p);
}

/* serve: the counters have only the time since they began. */
static void metrics_count_since_they_began(void **state)
{
	static const uint64_t counters[OFFCPU_CNT_MAX];
	struct metrics_now now = { .counters = counters };
	struct metrics *m;
	struct profile *p;
	char *text = NULL;
	size_t size = 0;
	struct wait w;
	FILE *out;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(metrics__new(&m), 0);
	metrics__count_since(m, START);
	/* Asleep 4 s, serve started 2 s into it. */
	w = a_wait(p, 1, START + 2 * S, 4 * S, 0);
	assert_int_equal(metrics__add(m, &w), 0);
	out = open_memstream(&text, &size);
	assert_non_null(out);
	metrics__write(out, m, &now);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(text, "offcpu_off_cpu_seconds_total{state=\"interruptible\","
				     "wait=\"pipe\",comm=\"app\",cgroup=\"\"} 2.000000000\n"));
	free(text);
	metrics__free(m);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(share_is_the_part_inside),
		cmocka_unit_test(sums_count_the_window_and_keep_so_far),
		cmocka_unit_test(estimate_of_a_sampled_wait_is_of_its_part_inside),
		cmocka_unit_test(json_and_its_report_count_the_window),
		cmocka_unit_test(older_and_forged_recordings),
		cmocka_unit_test(metrics_count_since_they_began),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
