/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait-for graph of a profile. A node per thread (or per
 * process), plus one per interrupt context that woke waits; an edge from
 * waker to wakee, weighted by the wakee's blocked time (its off-CPU time
 * before the wakeup, not the run-queue time after it).
 *
 * Knots, after wPerf (Zhou et al., OSDI'18): in the waits-for direction
 * (wakee waits for waker) a strongly connected component that waits for
 * no one outside itself must contain the bottleneck of whatever waits on
 * it. In the waker -> wakee direction drawn here, that is a component no
 * edge enters from another task: an interrupt is outside every task, never
 * a knot, and its wakeups enter nothing. The text report and the dot
 * output mark them.
 */
#ifndef OFFCPU_WAIT_GRAPH_H
#define OFFCPU_WAIT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct wait_graph_node {
	char *key;	/* what makes it one node: "#ID", "[hardirq]", "comm (exited)" */
	char *label;	/* "comm tid", "comm pid" or "[hardirq]"; printable */
	char *comm;	/* printable; the context's name for an interrupt */
	uint32_t id;	/* tid, or pid by process; PROFILE_EXITED_ID: exited */
	bool interrupt; /* hardirq or softirq: not a task */
	size_t component;
	bool knot;
	uint64_t woken_ns;   /* blocked time of the waits it ended */
	uint64_t blocked_ns; /* its own blocked time that a wakeup ended */
};

struct wait_graph_edge {
	size_t from; /* waker */
	size_t to;   /* wakee */
	uint64_t blocked_ns;
	uint64_t runq_ns;
	uint64_t count;
};

/* A knot: its nodes, and the blocked time of every wait they ended. */
struct wait_graph_knot {
	size_t *nodes;
	size_t nr;
	uint64_t woken_ns;
};

struct wait_graph {
	struct wait_graph_node *nodes;
	size_t nr_nodes;
	struct wait_graph_edge *edges; /* by blocked time, largest first */
	size_t nr_edges;
	struct wait_graph_knot *knots; /* by woken_ns, largest first */
	size_t nr_knots;
};

/* by_process: processes as nodes. */
int wait_graph__build(const struct profile *p, bool by_process, struct wait_graph **out);
void wait_graph__free(struct wait_graph *g);

#endif
