// SPDX-License-Identifier: GPL-2.0
/*
 * Two clocks a sched_switch program could time a switch by (bench/run
 * clocks): bpf_ktime_get_ns(), which offcpu reads, and the run queue's
 * rq->clock, which __schedule() updates before the tracepoint, converted
 * with a per-CPU pair of both taken every millisecond as the open waits
 * are dated. Each beside an empty program on the same switches, and the
 * second's error against the first read in the same program.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct clock_pair {
	__u64 ktime_ns;
	__u64 rq_clock;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct clock_pair);
} timing_pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct clock_pair);
} error_pairs SEC(".maps");

#define PAIR_REFRESH_NS 1000000ULL

/* Kept so that the compiler does not drop the reads. */
__u64 sink;

/* The error of rq->clock against bpf_ktime_get_ns(), summed over the switches. */
__u64 err_n, err_sum_abs_ns, err_max_abs_ns, err_over_1us, err_over_10us;

SEC("tp_btf/sched_switch")
int BPF_PROG(clock_empty)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(clock_ktime)
{
	sink += bpf_ktime_get_ns();
	return 0;
}

static __always_inline __u64 rq_clock_of(struct task_struct *prev)
{
	return prev->se.cfs_rq->rq->clock;
}

static __always_inline bool pair_stale(const struct clock_pair *p, __u64 clock)
{
	return !p->ktime_ns || clock - p->rq_clock > PAIR_REFRESH_NS;
}

/* rq->clock in bpf_ktime_get_ns()'s time: the pair's ktime plus the distance since. */
static __always_inline __u64 rq_clock_ns(struct clock_pair *p, __u64 clock)
{
	if (pair_stale(p, clock)) {
		p->ktime_ns = bpf_ktime_get_ns();
		p->rq_clock = clock;
	}
	return p->ktime_ns + (clock - p->rq_clock);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(clock_rq, bool preempt, struct task_struct *prev)
{
	__u32 zero = 0;
	struct clock_pair *p = bpf_map_lookup_elem(&timing_pairs, &zero);

	if (p)
		sink += rq_clock_ns(p, rq_clock_of(prev));
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(clock_rq_error, bool preempt, struct task_struct *prev)
{
	__u32 zero = 0;
	struct clock_pair *p = bpf_map_lookup_elem(&error_pairs, &zero);
	__u64 clock, estimate, exact, abs;
	__s64 e;

	if (!p)
		return 0;
	clock = rq_clock_of(prev);
	/* A switch that takes a new pair is exact by construction: left out. */
	if (pair_stale(p, clock)) {
		rq_clock_ns(p, clock);
		return 0;
	}
	estimate = rq_clock_ns(p, clock);
	exact = bpf_ktime_get_ns();
	e = (__s64)(exact - estimate);
	abs = e < 0 ? -e : e;
	__sync_fetch_and_add(&err_n, 1);
	__sync_fetch_and_add(&err_sum_abs_ns, abs);
	if (abs > 1000)
		__sync_fetch_and_add(&err_over_1us, 1);
	if (abs > 10000)
		__sync_fetch_and_add(&err_over_10us, 1);
	if (abs > err_max_abs_ns)
		err_max_abs_ns = abs;
	return 0;
}
