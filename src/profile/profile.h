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

struct wait_chains;

struct stack {
	uint32_t nr;
	struct frame frames[]; /* leaf first */
};

/* Labels a rule pack read from the process at block time; interned. */
struct label {
	const char *name; /* interned */
	const char *value;
};

struct labels {
	uint32_t nr;
	struct label items[]; /* sorted by name */
};

/*
 * What a wait waited on (src/objects/): a lock and the thread that held it,
 * a sleep's requested time, a child. Interned, so waits on one object with
 * one holder share an entry.
 */
struct wait_object {
	const char *kind;    /* interned: "mutex", "rwlock", "timer"... */
	const char *name;    /* interned: "orders_lock", "[heap]", "timer 20 ms" */
	uint64_t addr;	     /* 0: none */
	uint32_t holder_pid; /* 0: no holder known */
	uint32_t holder_tid;
	const char *holder_comm; /* interned; NULL without a holder */
};

/* The json "open" field's values, by struct wait::open. */
const char *profile__open_name(unsigned int open);
int profile__open_from_name(const char *name, unsigned int *open);

/*
 * Who ended a wait. context is enum offcpu_waker: a task (pid,
 * tid, comm), or an interrupt (pid, tid and comm of the task it
 * interrupted); OFFCPU_WAKER_NONE: no wakeup seen, the rest is zero.
 */
struct waker {
	unsigned int context;
	uint32_t pid;
	uint32_t tid;
	const char *comm; /* interned */
	uint32_t cpu;	  /* where the wakeup ran; WAKER_CPU_UNKNOWN in older recordings */
};

#define WAKER_CPU_UNKNOWN UINT32_MAX

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
	const char *cgroup;	     /* interned cgroup v2 path; NULL: not known */
	const struct labels *labels; /* Interned; NULL: none */
	const struct wait_object *object; /* interned; NULL: not known */
	uint64_t runq_ns; /* of duration_ns, runnable between its wakeup and its switch-in */
	struct waker waker;
	const struct stack *waker_kernel_stack; /* --wakers; NULL: not taken */
	const struct stack *waker_user_stack;
	/*
	 * What the whole wait stands for: its duration, or for a
	 * wait kept by chance its estimate, duration / p (-m for a short
	 * wait --short sample kept with p = duration/min; times N under
	 * --sample-rate N). 0: duration_ns. Totals get its part inside the
	 * profile's window (profile__share).
	 */
	uint64_t weight_ns;
	/*
	 * OFFCPU_WAIT_OPEN_BEFORE (began before the recording) and
	 * OFFCPU_WAIT_OPEN_AFTER (not ended at its stop: still waiting), or 0.
	 * A still-open wait is summed apart from the waits that ended.
	 */
	unsigned int open;
};

/*
 * The part of a total that is estimated, and how well. A wait
 * kept with probability p = duration/weight stands for weight ns; the
 * estimate's variance, sum of duration * (weight - duration) over every
 * wait that could have been kept (for --short sample, with weight -m:
 * sum of d * (min - d)), is estimated without bias from the kept waits
 * alone by weighting each term 1/p: sum of weight * (weight - duration).
 */
struct estimate {
	uint64_t ns;	 /* of the total, the weights of waits kept by chance */
	double variance; /* ns^2 */
	double count;	 /* waits they stand for: sum of weight / duration */
	uint64_t kept;	 /* waits kept by chance */
};

struct profile_entry {
	struct wait key; /* timestamps, duration, weight and cpu are zero */
	uint64_t count;
	uint64_t total_ns;	   /* weights inside the window: exact durations and estimates */
	uint64_t duration_ns;	   /* its waits' whole durations, from before the window too */
	uint64_t runq_ns;	   /* The part of total_ns spent runnable */
	struct estimate estimated;
};

/*
 * Coverage: one thread's life under -- COMMAND, from its exit,
 * and where each of its nanoseconds went. The kernel side times it with
 * offcpu's own intervals: on CPU from each switch-in to the next
 * switch-out, off CPU from switch-out to switch-in, whatever became of the
 * wait.
 */
struct thread_account {
	uint32_t pid;
	uint32_t tid;
	const char *comm;	/* interned */
	uint64_t start_ns;	/* CLOCK_MONOTONIC: the kernel's task start_time */
	uint64_t tracked_ns;	/* when offcpu began timing it (its fork, or first seen) */
	uint64_t exit_ns;	/* at sched_process_exit */
	uint64_t run_ns;	/* on CPU, switch-in to switch-out */
	uint64_t startup_ns;	/* from its fork to its first switch-in: runnable */
	uint64_t recorded_ns;	/* durations of its waits in records */
	uint64_t dropped_ns;	/* durations of its waits below -m, above -M, sampled out */
	uint64_t kernel_run_ns; /* the kernel's se.sum_exec_runtime, for comparison */
	uint64_t unseen_ns;	/* switch-ins never seen: off, then on CPU, not told apart */
};

/* The part of a thread's tracked life nothing accounts for (0 if none). */
uint64_t thread_account__missing_ns(const struct thread_account *a);

/*
 * The pid and tid of entries merged from processes that exited: past
 * PROFILE_COMPACT_ENTRIES distinct entries, so that endless short-lived
 * processes cost memory per distinct comm, title and stack, not per process.
 */
#define PROFILE_EXITED_ID UINT32_MAX
#define PROFILE_COMPACT_ENTRIES 10000

/*
 * On-CPU samples (-F): each a struct wait whose end_ts_ns is when it was
 * taken and whose duration_ns is what it stands for (the sampling period,
 * 1e9 / HZ), in state OFFCPU_STATE_RUNNING, with no wait class, waker or
 * run-queue time. Summed apart from the waits, in entries of their own, so
 * every total of off-CPU time stays what it is without them.
 */
struct profile_samples {
	struct hash_table *entries;
	struct wait *list; /* keep_waits: every sample */
	size_t nr;
	size_t cap;
	uint64_t total_ns;
	uint64_t count;
	uint64_t period_ns; /* what one sample stands for; 0: not sampling */
};

struct profile {
	struct strpool *strings;
	struct inline_pool *inlines;
	struct hash_table *stacks;
	struct hash_table *entries;
	struct hash_table *label_sets;
	struct hash_table *objects; /* interned struct wait_object */
	struct wait_chains *chains; /* what lock holders did while others waited */
	bool keep_waits;
	struct wait *waits;
	size_t nr_waits;
	size_t waits_cap;
	uint64_t counters[OFFCPU_CNT_MAX];
	uint64_t total_ns; /* weights, as profile_entry's */
	uint64_t total_count;
	uint64_t total_runq_ns;
	struct estimate estimated; /* Of total_ns */
	/* Whether a process still runs; NULL: never merge exited ones. */
	bool (*process_alive)(void *ctx, uint32_t pid);
	void *process_alive_ctx;
	size_t compact_at;	/* entries at which to merge exited processes next */
	uint64_t start_time_ns; /* CLOCK_REALTIME when recording began; 0: unknown */
	uint64_t duration_ns;	/* how long it recorded */
	/*
	 * CLOCK_MONOTONIC (the waits' clock) when its window began: tracing's
	 * start, or a serve window's. What a wait spent before it is in no
	 * total (profile__share); 0: no window, every wait counts whole.
	 */
	uint64_t window_start_ns;
	/*
	 * Where offcpu serve takes each wait instead: a profile
	 * with on_add interns the strings and stacks and sums nothing.
	 */
	int (*on_add)(void *ctx, const struct wait *w);
	int (*on_add_sample)(void *ctx, const struct wait *s); /* with on_add; NULL: dropped */
	void *on_add_ctx;
	struct profile_samples oncpu;
	struct thread_account *threads; /* Threads that exited, -- COMMAND */
	size_t nr_threads;
	size_t threads_cap;
	/*
	 * The executable profiled (the traced program's, or offcpu's own):
	 * pprof's main binary. NULL: none named.
	 */
	char *main_binary;
};

int profile__new(bool keep_waits, struct profile **out);
void profile__free(struct profile *p);
/*
 * The one copy of this stack; NULL when out of memory. Without keep_waits,
 * stacks that differ only in their addresses are one stack.
 */
const struct stack *profile__intern_stack(struct profile *p, const struct frame *frames, size_t nr);
/*
 * Adds one wait to the sums, its share of the window (profile__share): a
 * wait that ended as the window began (the kernel's stamps, converted, may
 * be that early) is counted, with none of its time. -EOVERFLOW, adding nothing, when the total would pass 2^64 ns: an exact
 * total or none. -ENOMEM.
 */
int profile__add(struct profile *p, const struct wait *w);
/*
 * Adds one on-CPU sample (struct profile_samples) if it was taken inside
 * the window; -EOVERFLOW, -ENOMEM as profile__add.
 */
int profile__add_sample(struct profile *p, const struct wait *s);
/*
 * The stacks interned so far, handed to the caller (NULL when out
 * of memory, nothing changed), and a fresh table for those to come: offcpu
 * serve frees them once no profile window holds them.
 */
struct hash_table *profile__take_stacks(struct profile *p);
void profile__free_stacks(struct hash_table *stacks);
/* Names the main binary, a copy of path; -ENOMEM. */
int profile__set_main_binary(struct profile *p, const char *path);
/* A thread's account, copied; -ENOMEM. */
int profile__add_thread(struct profile *p, const struct thread_account *a);
/* What w stands for, whole (weight_ns, or its duration). */
uint64_t profile__weight(const struct wait *w);
/*
 * What a wait adds to the totals of a window begun at window_start_ns
 * (CLOCK_MONOTONIC; 0: none): only its time inside, weighted as the whole
 * wait is. A thread asleep for an hour before a 3 s recording adds 3 s.
 */
struct wait_share {
	uint64_t inside_ns; /* of its duration, inside the window */
	uint64_t weight_ns; /* inside_ns times its weight per ns (profile__weight / duration) */
	uint64_t runq_ns;   /* of weight_ns, runnable: the end of the wait, weighted alike */
};
void profile__share(const struct wait *w, uint64_t window_start_ns, struct wait_share *out);
/* The waits an entry stands for: its exact ones and the estimated count. */
double profile__estimated_count(const struct profile_entry *e);
/* An estimate's relative standard error, 0 for none. */
double estimate__relative_error(const struct estimate *e);
void estimate__add(struct estimate *into, const struct estimate *e);
/* Calls fn on every frame of every stack, which it may complete. */
void profile__for_each_frame(struct profile *p, void (*fn)(void *ctx, struct frame *f), void *ctx);
/*
 * The one copy of these labels (sorted by name here; names and
 * values are interned by the call); NULL for none, or out of memory
 * (*err = -ENOMEM).
 */
const struct labels *profile__intern_labels(struct profile *p, struct label *items, size_t nr,
					    int *err);
/* The value of the label name (compared as a string); NULL if it has none. */
const char *profile__label(const struct labels *labels, const char *name);
/*
 * The one copy of o, its strings interned; NULL and *err -ENOMEM when it
 * cannot be made.
 */
const struct wait_object *profile__intern_object(struct profile *p, const struct wait_object *o,
						 int *err);
/*
 * offcpu serve's sweep (lib/strpool.h): marks in strings
 * (and inlines) what the profile holds: its stacks' frames, label sets,
 * entries, waits and thread accounts. A window's profile holds the base
 * profile's strings and stacks: its entries are marked into the base's
 * pools, its stacks through the tables that own them.
 */
void profile__mark_strings(const struct profile *p, struct strpool *strings,
			   struct inline_pool *inlines);
/* A table of stacks taken by profile__take_stacks, marked alike. */
void profile__mark_stacks(const struct hash_table *stacks, struct strpool *strings,
			  struct inline_pool *inlines);
/* What frames and one wait hold (not its stacks, which their table marks). */
void profile__mark_frames(const struct frame *frames, size_t nr, struct strpool *strings,
			  struct inline_pool *inlines);
void profile__mark_wait(const struct wait *w, struct strpool *strings);
/* Entries sorted by total time, largest first; free the array, not the entries. */
int profile__sorted_entries(const struct profile *p, struct profile_entry ***out, size_t *nr);
/* The on-CPU samples' entries, alike. */
int profile__sorted_samples(const struct profile *p, struct profile_entry ***out, size_t *nr);

#endif
