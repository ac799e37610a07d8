// SPDX-License-Identifier: GPL-2.0
/* The wait-for graph's edges and knots, and the dot output. */
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
#include "output/wait_graph.h"
#include "profile/profile.h"

/* wakee tid waited blocked_ns + runq_ns, woken by waker tid (0: by a hardirq). */
static void add(struct profile *p, uint32_t waker, uint32_t wakee, uint64_t blocked_ns,
		uint64_t runq_ns)
{
	char comm[16];
	struct wait w = { 0 };

	snprintf(comm, sizeof(comm), "t%u", wakee);
	w.pid = 1;
	w.tid = wakee;
	w.comm = strpool__intern(p->strings, comm);
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "lock:futex");
	w.duration_ns = blocked_ns + runq_ns;
	w.runq_ns = runq_ns;
	w.waker.context = waker ? OFFCPU_WAKER_TASK : OFFCPU_WAKER_HARDIRQ;
	w.waker.pid = 1;
	w.waker.tid = waker;
	snprintf(comm, sizeof(comm), "t%u", waker);
	w.waker.comm = strpool__intern(p->strings, comm);
	assert_int_equal(profile__add(p, &w), 0);
}

static bool is_knot(const struct wait_graph *g, const char *label)
{
	size_t i;

	for (i = 0; i < g->nr_nodes; i++) {
		if (!strcmp(g->nodes[i].label, label))
			return g->nodes[i].knot;
	}
	fail_msg("no node %s", label);
	return false;
}

/* A waits for B, B for C: C is the knot, whose waits it ended are all of them. */
static void chain_knot_is_its_end(void **state)
{
	struct wait_graph *g;
	struct profile *p;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add(p, 2, 1, 1000, 10); /* B wakes A */
	add(p, 3, 2, 2000, 20); /* C wakes B */
	assert_int_equal(wait_graph__build(p, false, &g), 0);
	assert_int_equal(g->nr_nodes, 3);
	assert_int_equal(g->nr_edges, 2);
	/* Heaviest first, weighted by blocked time. */
	assert_string_equal(g->nodes[g->edges[0].from].label, "t3 3");
	assert_int_equal(g->edges[0].blocked_ns, 2000);
	assert_int_equal(g->edges[0].runq_ns, 20);
	assert_true(is_knot(g, "t3 3"));
	assert_false(is_knot(g, "t2 2"));
	assert_false(is_knot(g, "t1 1"));
	assert_int_equal(g->nr_knots, 1);
	assert_int_equal(g->knots[0].woken_ns, 2000);
	wait_graph__free(g);
	profile__free(p);
}

/* Two threads that only wake each other are one knot; a third they wake is not. */
static void convoy_is_one_knot(void **state)
{
	struct wait_graph *g;
	struct profile *p;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add(p, 1, 2, 500, 0);
	add(p, 2, 1, 700, 0);
	add(p, 2, 3, 100, 0);
	assert_int_equal(wait_graph__build(p, false, &g), 0);
	assert_true(is_knot(g, "t1 1"));
	assert_true(is_knot(g, "t2 2"));
	assert_false(is_knot(g, "t3 3"));
	assert_int_equal(g->nr_knots, 1);
	assert_int_equal(g->knots[0].nr, 2);
	assert_int_equal(g->knots[0].woken_ns, 1300);
	wait_graph__free(g);
	profile__free(p);
}

/*
 * A cycle only an interrupt enters waits for no other task: the cycle is
 * the knot, never the interrupt; a cycle another task enters is none.
 */
static void interrupt_is_never_a_knot(void **state)
{
	struct wait_graph *g;
	struct profile *p;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add(p, 1, 2, 500, 0);
	add(p, 2, 1, 700, 0);
	add(p, 0, 1, 50, 0);
	add(p, 3, 4, 300, 0);
	add(p, 4, 3, 300, 0);
	add(p, 5, 3, 20, 0);
	assert_int_equal(wait_graph__build(p, false, &g), 0);
	assert_true(is_knot(g, "t1 1"));
	assert_true(is_knot(g, "t2 2"));
	assert_false(is_knot(g, "[hardirq]"));
	assert_false(is_knot(g, "t3 3"));
	assert_false(is_knot(g, "t4 4"));
	assert_true(is_knot(g, "t5 5"));
	assert_int_equal(g->nr_knots, 2);
	assert_int_equal(g->knots[0].woken_ns, 1200);
	wait_graph__free(g);
	profile__free(p);
}

/* A chain of 100,000 threads: the component search keeps no recursion. */
static void deep_chain_needs_no_recursion(void **state)
{
	struct wait_graph *g;
	struct profile *p;
	uint32_t i;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	for (i = 1; i < 100000; i++)
		add(p, i + 1, i, 10, 0);
	assert_int_equal(wait_graph__build(p, false, &g), 0);
	assert_int_equal(g->nr_knots, 1);
	assert_string_equal(g->nodes[g->knots[0].nodes[0]].label, "t100000 100000");
	wait_graph__free(g);
	profile__free(p);
}

/* What write makes of p with opts (free it). */
static char *written(int (*write)(FILE *, const struct profile *, const struct output_opts *),
		     const struct profile *p, const struct output_opts *opts)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	assert_int_equal(write(out, p, opts), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static void dot_marks_knots(void **state)
{
	struct output_opts opts = { .group_by = GROUP_BY_TID, .show_idle = true };
	struct profile *p;
	char *text;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add(p, 2, 1, 1000000, 0);
	add(p, 3, 2, 2000000, 0);
	text = written(output_dot__write, p, &opts);
	assert_non_null(strstr(text, "digraph offcpu {\n"));
	assert_non_null(strstr(text, "heaviest knot: t3 3 (woke 2.000 ms)"));
	assert_non_null(strstr(text, "[label=\"t3 3\", color=red, peripheries=2, knot=true];"));
	assert_non_null(strstr(text, "[label=\"t1 1\"];"));
	assert_non_null(strstr(text, "label=\"2.000 ms, 1\", blocked_ns=2000000, count=1"));
	free(text);
	profile__free(p);
}

/* The text report: blocked and run-queue columns, who woke each top stack, the tables. */
static void text_says_who_woke_and_the_run_queue(void **state)
{
	struct output_opts opts = { .group_by = GROUP_BY_WAKER, .show_idle = true };
	struct profile *p;
	char *text;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add(p, 2, 1, 3000000, 1000000);
	add(p, 0, 1, 1000000, 0);
	text = written(output_text__write, p, &opts);
	assert_non_null(strstr(text, "blocked 4.000 ms, run queue 1.000 ms (20.0%"));
	assert_non_null(strstr(text, "  interruptible                            5.000 ms  100.0%"
				     "         2       4.000 ms       1.000 ms\n"));
	assert_non_null(strstr(text, "\nBy waker (top 20)\n"));
	assert_non_null(strstr(text, "\n  t2                      1        2       4.000 ms"));
	assert_non_null(strstr(text, "\n  [hardirq]                                1.000 ms"));
	assert_non_null(strstr(text, "  t2 2 -> t1 1                                             "
				     "3.000 ms         1       1.000 ms\n"));
	assert_non_null(strstr(text, "  #1 woke 3.000 ms of blocked time: t2 2\n"));
	assert_non_null(strstr(text,
			       "  #1 t1;[interruptible];[lock:futex]  5.000 ms, 100.0%, 2 waits\n"
			       "    run queue 1.000 ms; woken by t2 2 (1), [hardirq] (1)\n"));
	free(text);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_knot_is_its_end),
		cmocka_unit_test(convoy_is_one_knot),
		cmocka_unit_test(interrupt_is_never_a_knot),
		cmocka_unit_test(deep_chain_needs_no_recursion),
		cmocka_unit_test(dot_marks_knots),
		cmocka_unit_test(text_says_who_woke_and_the_run_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
