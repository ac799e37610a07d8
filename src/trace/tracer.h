/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF side from user space: configure, load, attach, poll, stop. */
#ifndef OFFCPU_TRACER_H
#define OFFCPU_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/parse.h"
#include "trace/kernel_features.h"

struct tracer;

struct tracer_opts {
	uint64_t min_duration_ns;
	uint64_t max_duration_ns; /* UINT64_MAX: none */
	uint32_t sample_rate;
	uint32_t state_mask; /* 0: all */
	uint32_t max_entries;
	uint32_t stack_depth;
	uint32_t stack_copy_bytes; /* --call-graph dwarf,SIZE; 0: fp */
	bool kernel_stack;
	bool user_stack;
	bool user_threads_only;
	bool kernel_threads_only;
	bool follow_forks; /* children of the selected PIDs are selected too */
	const struct id_list *pids;
	const struct id_list *tids;
	char *const *comms;
	size_t nr_comms;
	bool filter_cgroup;
	bool date_open_waits; /* date the selected threads off CPU at the start */
	bool snapshot;	      /* attach nothing: tracer__open_waits only (offcpu snapshot) */
	int cgroup_fd;	      /* with filter_cgroup: the cgroup v2 directory, open */
	const char *btf_path; /* the kernel's BTF; NULL: /sys/kernel/btf/vmlinux */
	/*
	 * Called once loaded, before attaching (tracer__set_reads
	 * works then), so that processes running already are read from
	 * their first wait; NULL: none.
	 */
	void (*before_attach)(void *ctx, struct tracer *t);
	void *before_attach_ctx;
	bool label_reads; /* A rule pack reads from processes: room for them */
	bool wakeups;	   /* attach sched_waking: who woke each wait */
	bool waker_stacks; /* --wakers: and the waker's stacks */
	/* --short sample keeps waits below -m with p = duration/min. */
	bool short_sample;
	/* Test and bench hooks (cli/env_vars.h), all off when 0. */
	bool no_kernel_leaf; /* the kernel stack as bpf_get_task_stack gives it, no leaf scan */
	bool slots_ahead;    /* slots made ahead of the scheduler on any kernel, as on PREEMPT_RT */
	bool no_objects;     /* what waits waited on is not taken at their switch-outs */
	/* The kernel's switch times' conversion to offcpu's clock measured, said at the stop. */
	bool measure_clock;
	/* -F: on-CPU samples a second per CPU (OFFCPU_RECORD_ONCPU); 0: none. */
	uint32_t freq;
	/* Slept before each record is handed on (under 1 s): a reader as slow as a cold one. */
	uint32_t record_delay_us;
};

/*
 * Calls fn with each tracepoint offcpu's programs attach to, once each
 * (kernel_features_each_fn); the programs are opened, not loaded.
 */
int tracer__each_tracepoint(kernel_features_tracepoint_fn fn, void *ctx);

/* Called for every ring buffer record; a negative return stops polling. */
typedef int (*tracer_record_fn)(void *ctx, const void *data, size_t size);

/*
 * Reports a failure itself, in one line naming the cause (lib/log.h), and
 * returns it: -EPERM: missing privileges; -ENOENT: no usable BTF, or a
 * tracepoint is missing; other negative errno: BPF or its maps could not
 * be set up. The caller only exits.
 */
int tracer__new(const struct tracer_opts *opts, tracer_record_fn fn, void *ctx,
		struct tracer **out);
/*
 * Waits for records up to timeout_ms, then reads them for 20 ms at most, so
 * the caller looks at its clock and signals between batches however fast
 * records come. With records left, the next call reads on without waiting.
 * 0, -EINTR when a signal came, or -errno.
 */
int tracer__poll(struct tracer *t, int timeout_ms);
/*
 * Detaches from sched_switch, lets parked waits reach user space, detaches
 * the rest, and reads what is left for 250 ms at most; the waits still left
 * are added to counters[OFFCPU_CNT_RINGBUF_UNREAD] (and _NS), an array of
 * OFFCPU_CNT_MAX. Then the waits still open at the detach are passed on
 *, counted in counters[OFFCPU_CNT_OPEN_AT_STOP].
 */
int tracer__stop(struct tracer *t, uint64_t *counters);
/*
 * Every selected thread off CPU now, one wait record each
 * (flags OFFCPU_WAIT_OPEN_AFTER, its duration so far, its stacks, a rule
 * pack's reads; its Python frames right before it in their own record),
 * passed to fn as ring buffer records are, from a task iterator: for
 * offcpu snapshot, or a gauge while recording. Waits outside -m/-M are
 * counted in counters[] (OFFCPU_CNT_MAX of them), not passed. A snapshot
 * first passes each process as an OFFCPU_RECORD_RUNNING, and looks again
 * if that found CPython (tracer__python_add). 0 or -errno, said.
 */
int tracer__open_waits(struct tracer *t, tracer_record_fn fn, void *ctx, uint64_t *counters);
/*
 * Walk the Python frames of process pid's waits with this
 * layout (until it execs or exits). -E2BIG when the map is full.
 */
int tracer__python_add(struct tracer *t, uint32_t pid, const struct offcpu_python_layout *l);
/*
 * CLOCK_MONOTONIC when tracing began, just before sched_switch was
 * attached: the start of the recording's window (profile.h); 0 for a
 * snapshot, which has none.
 */
uint64_t tracer__start_ns(const struct tracer *t);
/* Sums the per-CPU counters into out[OFFCPU_CNT_BPF_MAX]. */
int tracer__counters(struct tracer *t, uint64_t *out);

/* The optional kernel features this run goes without, each said once at the start. */
uint64_t tracer__features_missing(const struct tracer *t);
/* What to read from process pid's memory at its waits (NULL: nothing). */
struct offcpu_reads;
int tracer__set_reads(struct tracer *t, uint32_t pid, const struct offcpu_reads *reads);
void tracer__free(struct tracer *t);

/* One selected thread off CPU now (offcpu.h). */
struct offcpu_open_wait;
typedef void (*tracer_open_wait_fn)(void *ctx, const struct offcpu_open_wait *w);
/*
 * Calls fn for each selected thread off CPU at the time of the call: the
 * gauge's light walk, without stacks (tracer__open_waits takes them).
 */
int tracer__open_gauge(struct tracer *t, tracer_open_wait_fn fn, void *ctx);

#endif
