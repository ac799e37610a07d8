/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Builds the profile's folded stack lines, "comm;[state];[wait];user...;kernel_[k]"
 * (after [wait], a "[NAME=VALUE]" pseudo-frame per label a rule pack read),
 * root first, one per distinct line with its time and count summed: the
 * folded back-end writes them as they are, the text report its top stacks
 * from them. Frames are named by frame_names.h. An on-CPU sample's line
 * is "comm;[on-cpu];user...;kernel_[k]" (its labels after [on-cpu]).
 */
#ifndef OFFCPU_FOLDED_LINES_H
#define OFFCPU_FOLDED_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "output/output.h"
#include "profile/profile.h"

/* Where a wait's line has "[state];[wait class]", a sample's has this. */
#define FOLDED_ON_CPU_FRAME "[on-cpu]"

/* Who woke a line's waits; an interrupt by its context alone. */
struct folded_waker {
	struct waker waker;
	uint64_t blocked_ns;
	uint64_t count;
};

/* Distinct wakers kept per line; the rest are summed in others_*. */
#define FOLDED_LINE_WAKERS 8

struct folded_line {
	char *text;
	uint64_t total_ns;
	uint64_t count;
	uint64_t runq_ns;
	struct folded_waker wakers[FOLDED_LINE_WAKERS]; /* by first seen; nr_wakers used */
	size_t nr_wakers;
	uint64_t others_blocked_ns; /* woken by more wakers than the array holds */
	uint64_t others_count;
	struct estimate estimated; /* Of total_ns */
};

struct folded_lines {
	struct folded_line *lines;
	size_t nr;
};

/*
 * by_total: largest first; else sorted by text. with_lines: each user frame
 * followed by " (file.c:LINE)" where DWARF knows it (not for folded files).
 * Inlined functions are frames of their own, inside their caller. A
 * Python frame is "name (file.py:LINE)" for the text report (by_total,
 * its one caller), "name_(file.py:LINE)" in folded files, whose frames
 * hold no space. Waits only: the text report's top stacks.
 */
int folded_lines__build(const struct profile *p, bool by_total, bool with_lines,
			struct folded_lines *out);
/* The on-CPU samples' lines alone, alike: the text report's top on-CPU stacks. */
int folded_lines__build_samples(const struct profile *p, bool by_total, bool with_lines,
				struct folded_lines *out);
/*
 * Lines weighed by time (--time), entries with none left out, and the
 * on-CPU samples' lines beside the waits' under OUTPUT_TIME_OFF_CPU only
 * (blocked and run-queue time are parts of a wait; a sample has neither);
 * a wait with the waker's stacks (--wakers) goes on with "--", then the
 * waker's kernel and user frames leaf first and its name: the off-wake
 * flame graph, the waker above the wakee. With objects, what each wait
 * waited on is a "[kind name]" frame under its class and labels.
 */
int folded_lines__build_time(const struct profile *p, bool by_total, bool with_lines, bool objects,
			     enum output_time time, struct folded_lines *out);
void folded_lines__free(struct folded_lines *lines);

#endif
