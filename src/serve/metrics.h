/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offcpu serve's /metrics, in the Prometheus text exposition
 * format (version 0.0.4). The main thread adds each wait to counters by
 * state, wait class, comm and cgroup, and renders them, with the health
 * counters, the open waits and the process's own CPU and memory, into a
 * finished text that the HTTP threads hand out.
 *
 * Label cardinality is bounded: comm and cgroup each show at most
 * METRICS_LABEL_VALUES values. The first half are the first values seen;
 * the rest are given, one per tick, to the value with the most time among
 * those not shown yet. A value once shown stays (its counters never
 * restart); time of values not shown is under "other".
 */
#ifndef OFFCPU_METRICS_H
#define OFFCPU_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "offcpu.h"
#include "profile/profile.h"

#define METRICS_LABEL_VALUES 64
/*
 * Series (state, wait, comm, cgroup; on CPU: comm, cgroup) past which new
 * ones go under comm and cgroup "other".
 */
#define METRICS_MAX_SERIES 20000

struct metrics;

/* The threads off CPU now, from the tracer's open waits. */
struct metrics_open_waits {
	uint64_t threads[OFFCPU_STATE_COUNT][2];    /* [state][kernel thread] */
	uint64_t longest_ns[OFFCPU_STATE_COUNT][2]; /* how long the longest has waited */
};

/* What is read when the text is rendered. */
struct metrics_now {
	const uint64_t *counters;		     /* OFFCPU_CNT_MAX health counters */
	const struct metrics_open_waits *open_waits; /* NULL: not known */
	uint64_t cpu_ns;			     /* offcpu's user + system CPU time */
	uint64_t rss_bytes;
	uint64_t start_time_s; /* CLOCK_REALTIME at start */
	uint32_t windows_open; /* profile windows being recorded */
	bool sampling;	       /* -F: offcpu_on_cpu_seconds_total */
	/* server__connection_drops */
	uint64_t connections_refused;
	uint64_t connections_cut;
};

int metrics__new(struct metrics **out);
void metrics__free(struct metrics *m);
/*
 * CLOCK_MONOTONIC when the counters began: of a wait begun before, only
 * the time since counts (profile__share). 0, the default: all of it.
 */
void metrics__count_since(struct metrics *m, uint64_t start_ns);
/* One wait into its series (its share since the counters began); -ENOMEM. */
int metrics__add(struct metrics *m, const struct wait *w);
/*
 * One on-CPU sample (-F) into its series, by comm and cgroup: the
 * label values are the waits' (one bound for both).
 */
int metrics__add_sample(struct metrics *m, const struct wait *s);
/* One wait the views leave out (output__hides) into the time of no series. */
void metrics__add_hidden(struct metrics *m, const struct wait *w);
/* Gives a free label slot to the largest value not shown yet. */
void metrics__tick(struct metrics *m);
/*
 * For lib/strpool.h's sweep: marks the interned strings the metrics
 * hold, the label values shown and the candidates, and each series' labels.
 */
void metrics__mark_strings(const struct metrics *m, struct strpool *strings);
/* The exposition text; stream errors are the caller's to check. */
void metrics__write(FILE *out, const struct metrics *m, const struct metrics_now *now);

#endif
