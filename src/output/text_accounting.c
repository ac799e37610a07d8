// SPDX-License-Identifier: GPL-2.0
/* Every off-CPU nanosecond accounted for, in the text report. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/frame_names.h"
#include "output/output.h"
#include "output/text_accounting.h"

/* Waits below -m that are this share of the time recorded are said to skew the shares. */
#define BELOW_MIN_SAID_PERCENT 10

static void print_row(FILE *out, const char *what, uint64_t ns, uint64_t count, const char *rest)
{
	char time[32];

	output__format_duration(ns, time, sizeof(time));
	fprintf(out, "  %-18s %14s in %" PRIu64 " wait%s%s\n", what, time, count,
		count == 1 ? "" : "s", rest);
}

/* A drop counter with its summed nanoseconds: a row if it dropped anything. */
static void print_drop(FILE *out, const struct profile *p, const char *what, int count, int ns,
		       const char *rest)
{
	if (p->counters[count])
		print_row(out, what, p->counters[ns], p->counters[count], rest);
}

void text_accounting__print(FILE *out, const struct profile *p,
			    const struct output_hidden *hidden)
{
	const uint64_t *c = p->counters;
	struct estimate estimated = p->estimated;
	char time[32], rest[160];
	uint64_t shown_ns;

	estimate__add(&estimated, &hidden->estimated);
	fprintf(out, "\nOff-CPU time accounted\n");
	rest[0] = '\0';
	if (estimated.ns) {
		output__format_duration(estimated.ns, time, sizeof(time));
		snprintf(rest, sizeof(rest), " (%s estimated from %" PRIu64 " sampled, ±%.1f%%)",
			 time, estimated.kept, 100.0 * estimate__relative_error(&estimated));
	}
	print_row(out, "recorded", p->total_ns + hidden->ns, p->total_count + hidden->count, rest);
	if (c[OFFCPU_CNT_SHORT_SAMPLED]) {
		output__format_duration(c[OFFCPU_CNT_SHORT_SAMPLED_NS], time, sizeof(time));
		snprintf(rest, sizeof(rest),
			 " (exact); %" PRIu64 " kept by --short sample, estimated %s, in recorded",
			 c[OFFCPU_CNT_SHORT_SAMPLED], time);
	} else {
		snprintf(rest, sizeof(rest), ", not shown");
	}
	print_row(out, "below -m", c[OFFCPU_CNT_BELOW_MIN_NS], c[OFFCPU_CNT_BELOW_MIN], rest);
	/*
	 * A database's short waits (WAL writes, client reads) can be half its
	 * waiting: left out, they skew every share the tables show.
	 */
	shown_ns = p->total_ns + hidden->ns;
	if (!c[OFFCPU_CNT_SHORT_SAMPLED] &&
	    c[OFFCPU_CNT_BELOW_MIN_NS] * 100 >= shown_ns * BELOW_MIN_SAID_PERCENT && shown_ns)
		fprintf(out,
			"  %-18s the waits below -m are %.0f%% of the time recorded, and in no "
			"share below: --short sample estimates them in, -m 0 shows each\n",
			"", 100.0 * (double)c[OFFCPU_CNT_BELOW_MIN_NS] / (double)shown_ns);
	print_drop(out, p, "above -M", OFFCPU_CNT_ABOVE_MAX, OFFCPU_CNT_ABOVE_MAX_NS,
		   ", not shown");
	print_drop(out, p, "sampled out", OFFCPU_CNT_SAMPLED_OUT, OFFCPU_CNT_SAMPLED_OUT_NS,
		   ", not shown (--sample-rate)");
	print_drop(out, p, "ring buffer full", OFFCPU_CNT_RINGBUF_FULL, OFFCPU_CNT_RINGBUF_FULL_NS,
		   ", lost");
	print_drop(out, p, "unread at stop", OFFCPU_CNT_RINGBUF_UNREAD,
		   OFFCPU_CNT_RINGBUF_UNREAD_NS, ", lost");
	/* Dating these would take the clock read that filters exist to avoid. */
	if (c[OFFCPU_CNT_FILTERED] || c[OFFCPU_CNT_TABLE_FULL] || c[OFFCPU_CNT_NO_START])
		fprintf(out,
			"  %-18s %" PRIu64 " filtered, %" PRIu64 " table full, %" PRIu64
			" without a start: counted, not timed\n",
			"untimed", c[OFFCPU_CNT_FILTERED], c[OFFCPU_CNT_TABLE_FULL],
			c[OFFCPU_CNT_NO_START]);
}

static int compare_tid(const void *a, const void *b)
{
	const struct thread_account *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void text_accounting__print_threads(FILE *out, const struct profile *p, uint32_t top)
{
	size_t limit = top ?: OUTPUT_TOP_THREADS, i;
	char life[32], run[32], off[32], unseen[32], kernel_run[32], comm[4 * OFFCPU_COMM_LEN + 1];
	struct thread_account *sorted;

	if (!p->nr_threads)
		return;
	sorted = malloc(p->nr_threads * sizeof(*sorted));
	if (!sorted)
		return;
	memcpy(sorted, p->threads, p->nr_threads * sizeof(*sorted));
	qsort(sorted, p->nr_threads, sizeof(*sorted), compare_tid);
	fprintf(out, "\nThread coverage (each thread's life, from offcpu's own switches)\n");
	fprintf(out, "  %-16s %8s %8s %12s %12s %12s %12s %9s %12s\n", "comm", "pid", "tid", "life",
		"on CPU", "off CPU", "unseen", "accounted", "kernel run");
	for (i = 0; i < p->nr_threads && i < limit; i++) {
		const struct thread_account *a = &sorted[i];
		uint64_t span = a->exit_ns > a->tracked_ns ? a->exit_ns - a->tracked_ns : 0;
		uint64_t off_ns = a->startup_ns + a->recorded_ns + a->dropped_ns;

		frame_names__printable(a->comm ? a->comm : "?", comm, sizeof(comm));
		output__format_duration(span, life, sizeof(life));
		output__format_duration(a->run_ns, run, sizeof(run));
		output__format_duration(off_ns, off, sizeof(off));
		output__format_duration(a->kernel_run_ns, kernel_run, sizeof(kernel_run));
		output__format_duration(a->unseen_ns, unseen, sizeof(unseen));
		fprintf(out, "  %-16s %8u %8u %12s %12s %12s %12s %8.2f%% %12s\n", comm, a->pid,
			a->tid, life, run, off, unseen,
			span ? 100.0 * (double)(span - thread_account__missing_ns(a)) / (double)span
			     : 100.0,
			kernel_run);
	}
	if (p->nr_threads > limit)
		fprintf(out, "  ... %zu more\n", p->nr_threads - limit);
	output__format_duration(p->counters[OFFCPU_CNT_UNACCOUNTED_NS], life, sizeof(life));
	fprintf(out, "  unaccounted: %s in all (unaccounted_ns)\n", life);
	free(sorted);
}
