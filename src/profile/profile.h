/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aggregate profile every output back-end reads: symbolized waits
 * summed by process, thread, state, wait class and stacks, the health
 * counters, and (for formats that list every wait) the waits themselves.
 */
#ifndef OFFCPU_PROFILE_H
#define OFFCPU_PROFILE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strpool.h"
#include "offcpu.h"
#include "profile/frame.h"

struct stack {
	uint32_t nr;
	struct frame frames[]; /* leaf first */
};

struct wait {
	uint64_t end_ts_ns; /* CLOCK_MONOTONIC at switch-in */
	uint64_t duration_ns;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	unsigned int state;		  /* enum offcpu_state */
	const char *comm;		  /* interned */
	const char *title;		  /* interned process title; NULL: none beyond comm */
	const char *wait_class;		  /* interned */
	const struct stack *kernel_stack; /* interned; NULL when not taken */
	const struct stack *user_stack;
	/*
	 * Issue #16: OFFCPU_WAIT_OPEN_BEFORE (began before the recording) and
	 * OFFCPU_WAIT_OPEN_AFTER (not ended at its stop: still waiting), or 0.
	 * A still-open wait is summed apart from the waits that ended.
	 */
	unsigned int open;
};

/* Issue #16: the json "open" field's values, by struct wait::open. */
const char *profile__open_name(unsigned int open);
int profile__open_from_name(const char *name, unsigned int *open);

struct profile_entry {
	struct wait key; /* timestamps, duration and cpu are zero */
	uint64_t count;
	uint64_t total_ns;
};

/*
 * The pid and tid of entries merged from processes that exited: past
 * PROFILE_COMPACT_ENTRIES distinct entries, so that endless short-lived
 * processes cost memory per distinct comm, title and stack, not per process.
 */
#define PROFILE_EXITED_ID UINT32_MAX
#define PROFILE_COMPACT_ENTRIES 50000

struct profile {
	struct strpool *strings;
	struct inline_pool *inlines;
	struct hash_table *stacks;
	struct hash_table *entries;
	bool keep_waits;
	struct wait *waits;
	size_t nr_waits;
	size_t waits_cap;
	uint64_t counters[OFFCPU_CNT_MAX];
	uint64_t total_ns;
	uint64_t total_count;
	/* Whether a process still runs; NULL: never merge exited ones. */
	bool (*process_alive)(void *ctx, uint32_t pid);
	void *process_alive_ctx;
	size_t compact_at;	/* entries at which to merge exited processes next */
	uint64_t start_time_ns; /* CLOCK_REALTIME when recording began; 0: unknown */
	uint64_t duration_ns;	/* how long it recorded */
};

int profile__new(bool keep_waits, struct profile **out);
void profile__free(struct profile *p);
/*
 * The one copy of this stack; NULL when out of memory. Without keep_waits,
 * stacks that differ only in their addresses are one stack.
 */
const struct stack *profile__intern_stack(struct profile *p, const struct frame *frames, size_t nr);
/*
 * Adds one wait to the sums. -EOVERFLOW, adding nothing, when the total
 * would pass 2^64 ns: an exact total or none. -ENOMEM.
 */
int profile__add(struct profile *p, const struct wait *w);
/* Calls fn on every frame of every stack, which it may complete. */
void profile__for_each_frame(struct profile *p, void (*fn)(void *ctx, struct frame *f), void *ctx);
/* Entries sorted by total time, largest first; free the array, not the entries. */
int profile__sorted_entries(const struct profile *p, struct profile_entry ***out, size_t *nr);

#endif
