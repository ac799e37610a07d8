// SPDX-License-Identifier: GPL-2.0
/* offcpu serve's /metrics text, its label bounds and the time since it began. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/strpool.h"
#include "profile/profile.h"
#include "serve/metrics.h"

#include "../window_fixtures.h"

static char *render_sampling(const struct metrics *m, bool sampling)
{
	static const uint64_t counters[OFFCPU_CNT_MAX] = { [OFFCPU_CNT_SWITCHES] = 1234 };
	struct metrics_now now = {
		.counters = counters,
		.rss_bytes = 4096,
		.cpu_ns = 1500000000,
		.sampling = sampling,
	};
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	metrics__write(out, m, &now);
	assert_int_equal(fclose(out), 0);
	return text;
}

static char *render(const struct metrics *m)
{
	return render_sampling(m, false);
}

static struct wait a_wait(struct strpool *pool, const char *comm, const char *cgroup,
			  unsigned int state, uint64_t ns)
{
	struct wait w = { .duration_ns = ns, .state = state };

	w.comm = strpool__intern(pool, comm);
	w.cgroup = cgroup ? strpool__intern(pool, cgroup) : NULL;
	w.wait_class = strpool__intern(pool, state == OFFCPU_STATE_PREEMPTED ? "cpu" : "sleep");
	return w;
}

/* Each metrics test's own string pool and metrics, freed after it however it ended. */
struct fixture {
	struct strpool *pool;
	struct metrics *m;
};

static int fixture_new(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	*state = f;
	return f && (f->pool = strpool__new()) && !metrics__new(&f->m) ? 0 : -1;
}

static int fixture_free(void **state)
{
	struct fixture *f = *state;

	metrics__free(f->m);
	strpool__free(f->pool);
	free(f);
	return 0;
}

static void sums_by_labels_with_help_and_type(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = f->m;
	struct strpool *pool = f->pool;
	struct wait w;
	char *text;

	w = a_wait(pool, "sleeper", "/system.slice/a.service", OFFCPU_STATE_INTERRUPTIBLE,
		   1500000000ULL);
	assert_int_equal(metrics__add(m, &w), 0);
	assert_int_equal(metrics__add(m, &w), 0);
	w = a_wait(pool, "sleeper", "/system.slice/a.service", OFFCPU_STATE_PREEMPTED, 250);
	w.runq_ns = 250;
	assert_int_equal(metrics__add(m, &w), 0);
	text = render(m);
	assert_non_null(strstr(text, "# HELP offcpu_off_cpu_seconds_total "));
	assert_non_null(strstr(text, "# TYPE offcpu_off_cpu_seconds_total counter\n"));
	assert_non_null(strstr(text, "offcpu_off_cpu_seconds_total{state=\"interruptible\","
				     "wait=\"sleep\",comm=\"sleeper\","
				     "cgroup=\"/system.slice/a.service\"} 3.000000000\n"));
	assert_non_null(strstr(text, "offcpu_waits_total{state=\"interruptible\",wait=\"sleep\","
				     "comm=\"sleeper\",cgroup=\"/system.slice/a.service\"} 2\n"));
	/* Preempted: all of it waited for a CPU. */
	assert_non_null(strstr(text, "offcpu_runqueue_seconds_total 0.000000250\n"));
	assert_non_null(strstr(text, "# TYPE offcpu_switches_total counter\n"
				     "offcpu_switches_total 1234\n"));
	assert_non_null(strstr(text, "# TYPE offcpu_ringbuf_unread_ns_total counter\n"));
	assert_non_null(strstr(text, "process_cpu_seconds_total 1.500000000\n"));
	assert_non_null(strstr(text, "process_resident_memory_bytes 4096\n"));
	free(text);
}

/* Whether needle is in text exactly once. */
static bool once(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);

	return at && !strstr(at + 1, needle);
}

/*
 * -F: on-CPU samples summed by comm and cgroup in a counter of their own,
 * apart from every wait's series, shown only when sampling.
 */
static void on_cpu_seconds_by_comm_and_cgroup(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = f->m;
	struct wait w, s;
	char *text;
	int i;

	w = a_wait(f->pool, "app", "/a", OFFCPU_STATE_INTERRUPTIBLE, 2000000000ULL);
	assert_int_equal(metrics__add(m, &w), 0);
	s = (struct wait){ .comm = w.comm, .cgroup = w.cgroup, .state = OFFCPU_STATE_RUNNING };
	s.duration_ns = 10000000; /* -F 100 */
	for (i = 0; i < 3; i++)
		assert_int_equal(metrics__add_sample(m, &s), 0);
	/* Before counting began: an instant outside, as a window leaves it out. */
	metrics__count_since(m, 1000);
	s.end_ts_ns = 999;
	assert_int_equal(metrics__add_sample(m, &s), 0);
	text = render_sampling(m, true);
	assert_non_null(strstr(text, "# TYPE offcpu_on_cpu_seconds_total counter\n"));
	assert_non_null(
	    strstr(text, "offcpu_on_cpu_seconds_total{comm=\"app\",cgroup=\"/a\"} 0.030000000\n"));
	assert_true(once(text, "offcpu_on_cpu_seconds_total{"));
	/* The waits' counters are what they were. */
	assert_non_null(strstr(text, "offcpu_off_cpu_seconds_total{state=\"interruptible\","
				     "wait=\"sleep\",comm=\"app\",cgroup=\"/a\"} 2.000000000\n"));
	assert_true(once(text, "offcpu_off_cpu_seconds_total{"));
	assert_true(once(text, "offcpu_waits_total{"));
	free(text);
	text = render(m);
	assert_null(strstr(text, "offcpu_on_cpu_seconds_total"));
	free(text);
}

/* Names are anyone's bytes: quoted, escaped and printable in the exposition. */
static void label_values_escaped(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = f->m;
	struct strpool *pool = f->pool;
	struct wait w;
	char *text;

	w = a_wait(pool, "a\"b\\c\nd\x1b\xff", NULL, OFFCPU_STATE_INTERRUPTIBLE, 1);
	assert_int_equal(metrics__add(m, &w), 0);
	text = render(m);
	assert_non_null(
	    strstr(text, "comm=\"a\\\"b\\\\c\\\\x0ad\\\\x1b\xef\xbf\xbd\",cgroup=\"\"}"));
	free(text);
}

static uint64_t count_comm_values(const char *text)
{
	const char *p = text;
	uint64_t n = 0;

	while ((p = strstr(p, "offcpu_waits_total{"))) {
		n++;
		p++;
	}
	return n;
}

/*
 * Half the slots go to the first values, the rest to the largest others,
 * one a tick; the rest is "other"; a value once shown stays.
 */
static void comm_values_bounded(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = f->m;
	struct strpool *pool = f->pool;
	struct wait w;
	char name[32], *text;
	int i;

	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		/* c999 is the largest of those not shown. */
		w = a_wait(pool, name, "/", OFFCPU_STATE_INTERRUPTIBLE, i == 999 ? 1000000 : 1);
		assert_int_equal(metrics__add(m, &w), 0);
	}
	text = render(m);
	assert_int_equal(count_comm_values(text), METRICS_LABEL_VALUES / 2 + 1);
	assert_non_null(strstr(text, "comm=\"other\""));
	assert_null(strstr(text, "comm=\"c999\""));
	free(text);
	metrics__tick(m);
	w = a_wait(pool, "c999", "/", OFFCPU_STATE_INTERRUPTIBLE, 5);
	assert_int_equal(metrics__add(m, &w), 0);
	text = render(m);
	assert_non_null(strstr(text, "offcpu_waits_total{state=\"interruptible\",wait=\"sleep\","
				     "comm=\"c999\",cgroup=\"/\"} 1\n"));
	free(text);
	for (i = 0; i < 2 * METRICS_LABEL_VALUES; i++)
		metrics__tick(m);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		w = a_wait(pool, name, "/", OFFCPU_STATE_INTERRUPTIBLE, 1);
		assert_int_equal(metrics__add(m, &w), 0);
	}
	text = render(m);
	assert_int_equal(count_comm_values(text), METRICS_LABEL_VALUES + 1);
	free(text);
}

/*
 * What the metrics hold survives a sweep of the strings, the rest goes:
 * label values shown and candidates, the series' labels. Under ASan a value
 * not marked is a use after free when promoted or written.
 */
static void strings_held_survive_a_sweep(void **state)
{
	struct fixture *f = *state;
	unsigned long strings, bytes, freed, freed_bytes;
	struct wait w;
	char name[32], *text;
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		w = a_wait(f->pool, name, "/a.slice", OFFCPU_STATE_INTERRUPTIBLE,
			   i == 99 ? 1000 : 1);
		assert_int_equal(metrics__add(f->m, &w), 0);
	}
	strpool__intern(f->pool, "held by no one");
	metrics__mark_strings(f->m, f->pool);
	strpool__sweep(f->pool, &freed, &freed_bytes);
	assert_int_equal(freed, 1);
	strpool__stats(f->pool, &strings, &bytes);
	/* 100 comms (32 shown, 68 candidates), the cgroup, the class. */
	assert_int_equal(strings, 102);
	metrics__tick(f->m);
	w = a_wait(f->pool, "c99", "/a.slice", OFFCPU_STATE_INTERRUPTIBLE, 1);
	assert_int_equal(metrics__add(f->m, &w), 0);
	text = render(f->m);
	assert_non_null(strstr(text, "offcpu_waits_total{state=\"interruptible\",wait=\"sleep\","
				     "comm=\"c99\",cgroup=\"/a.slice\"} 1\n"));
	assert_non_null(strstr(text, "comm=\"c0\",cgroup=\"/a.slice\"} 1\n"));
	free(text);
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
	w = ended_wait(p, 1, START + 2 * S, 4 * S, 0);
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
		cmocka_unit_test_setup_teardown(sums_by_labels_with_help_and_type, fixture_new,
						fixture_free),
		cmocka_unit_test_setup_teardown(on_cpu_seconds_by_comm_and_cgroup, fixture_new,
						fixture_free),
		cmocka_unit_test_setup_teardown(label_values_escaped, fixture_new, fixture_free),
		cmocka_unit_test_setup_teardown(comm_values_bounded, fixture_new, fixture_free),
		cmocka_unit_test_setup_teardown(strings_held_survive_a_sweep, fixture_new,
						fixture_free),
		cmocka_unit_test(metrics_count_since_they_began),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
