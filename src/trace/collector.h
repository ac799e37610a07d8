/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From ring buffer records to waits in the profile: symbolizes the stacks
 * (once per distinct raw stack), classifies the wait, and joins the waits
 * whose user stack arrives with the thread's next record.
 */
#ifndef OFFCPU_COLLECTOR_H
#define OFFCPU_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "classify/rules.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct collector;

struct collector_opts {
	/* The user's (--rules), tried before the built-in ones; may be empty. */
	const struct rule_set *rules;
	/* --state (0: all), applied again once the kernel stack tells a yield from a preemption. */
	uint32_t state_mask;
	/* Test-only hooks (cli/env_vars.h). */
	bool drop_exits; /* every exit record ignored, as a full ring buffer would lose them */
	bool log_reaps;	 /* each collector__reap logs what it reaped and what is held */
};

/* o->rules must outlive the collector. */
int collector__new(struct profile *profile, struct symbolizer *symbolizer,
		   const struct collector_opts *o, struct collector **out);
void collector__free(struct collector *c);
/*
 * How the tracer kept waits, so each gets its weight_ns: a wait
 * shorter than short_min_ns (--short sample's -m; 0: none are kept) weighs
 * short_min_ns, any other its duration, and all of them sample_rate times
 * that (--sample-rate).
 */
void collector__set_weights(struct collector *c, uint64_t short_min_ns, uint32_t sample_rate);
/*
 * -- COMMAND: sums each thread's recorded waits, for the account
 * its exit record brings (profile->threads). -ENOMEM.
 */
int collector__account_threads(struct collector *c);
/*
 * Fn(ctx, pid, layout) is told of each process found running
 * CPython, whose Python frames the BPF side should walk; 0 or -errno.
 */
typedef int (*collector_python_fn)(void *ctx, uint32_t pid, const struct offcpu_python_layout *l);
void collector__set_python_sink(struct collector *c, collector_python_fn fn, void *ctx);
/*
 * One ring buffer record; -EINVAL for a malformed one, whose type and size
 * it says (log__error) the first time.
 */
int collector__record(struct collector *c, const void *data, size_t size);
/* Where waits' read values become labels; lr must outlive c. */
struct label_reader;
void collector__set_label_reader(struct collector *c, struct label_reader *lr);
/*
 * Forgets every stack the collector caches, once the profile's
 * were taken (profile__take_stacks): the next records intern theirs anew,
 * and the waits of open chains and the wakers' stacks waiting for their
 * wait get theirs interned again, so nothing here points at the old ones.
 * -ENOMEM: some may still point there.
 */
int collector__forget_stacks(struct collector *c);
/*
 * For lib/strpool.h's sweep: marks the interned strings the
 * collector holds between records: process titles, the open chains'
 * waits, the wait class cache, the Python frames waiting for their wait,
 * and those of its python and cgroups. The stacks it caches are marked
 * through the profile's tables that own them, label sets through the
 * profile's.
 */
void collector__mark_strings(const struct collector *c, struct strpool *strings);
/*
 * Every REAPER_INTERVAL_NS (trace/reaper.h), frees what
 * is held of the processes gone whose exit record never came (the ring
 * buffer was full), as that record would have: counted in
 * processes_reaped. To be called between records; now_ns: CLOCK_MONOTONIC.
 * -ENOMEM: some are left for the next look.
 */
int collector__reap(struct collector *c, uint64_t now_ns);
/*
 * Ends the open chains (their waits go in without a user stack), then looks
 * up the source lines of every frame recorded.
 */
int collector__finish(struct collector *c);

#endif
