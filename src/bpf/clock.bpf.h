/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own times of a thread's switches in offcpu's clock, for the
 * waits no traced switch dates: recovered ones and open ones; and
 * measure_clock's check of the conversion. Apart because a traced wait is
 * timed without it: sched_switch only keeps the pairs fresh.
 */
#ifndef OFFCPU_CLOCK_BPF_H
#define OFFCPU_CLOCK_BPF_H

/*
 * The kernel's own times of a thread's switches, in
 * offcpu's clock. __schedule() updates rq->clock (sched_clock_cpu()) before
 * it picks the next task, and stamps sched_info.last_arrival with that
 * clock when the next task arrives (sched_info_switch(), after the
 * tracepoint). A time T on a run queue's clock is then
 * now - (rq->clock - T) on bpf_ktime_get_ns()'s, with now and rq->clock
 * read together in one sched_switch on that run queue: both clocks count
 * nanoseconds of the same time, so a distance back is the same on both.
 * Such a pair is kept per CPU (refreshed at most every millisecond when the
 * clock is read anyway) so that an iterator, which runs outside
 * __schedule() where rq->clock may be a tick old, converts with the pair
 * of the CPU the task last ran on. The run queue is found from a task on
 * it (se.cfs_rq->rq: CONFIG_FAIR_GROUP_SCHED; the runqueues per-CPU
 * variable needs CONFIG_KALLSYMS_ALL, which this kernel lacks); without
 * one, nothing is dated or recovered. What it costs in error, measured
 * against the traced switches (--measure-clock), is in the
 * docs/design.md ("Waits the switches do not show").
 */
struct clock_pair {
	__u64 ktime_ns; /* bpf_ktime_get_ns() */
	__u64 rq_clock; /* this CPU's rq->clock, read in the same sched_switch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct clock_pair);
} clock_pairs SEC(".maps");

#define CLOCK_PAIR_REFRESH_NS 1000000ULL

/* This CPU's rq->clock, from t, a task on this CPU's run queue; 0: none. */
static __always_inline __u64 rq_clock_of(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return 0;
	return BPF_CORE_READ(t, se.cfs_rq, rq, clock);
}

static __always_inline __u64 rq_clock_task_of(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return 0;
	return BPF_CORE_READ(t, se.cfs_rq, rq, clock_task);
}

/* t is switching on or off this CPU. */
static __always_inline struct clock_pair *refresh_clock_pair(struct task_struct *t, __u64 *now)
{
	struct clock_pair *pair;
	__u32 zero = 0;
	__u64 clock = rq_clock_of(t);

	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	if (!pair || !clock)
		return NULL;
	pair->rq_clock = clock;
	pair->ktime_ns = now_ns(now);
	return pair;
}

/* At the end of sched_switch: once per CPU, then when the clock was read anyway. */
static __always_inline void keep_clock_pair(struct task_struct *t, __u64 *now)
{
	struct clock_pair *pair;
	__u32 zero = 0;

	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	if (pair && (!pair->ktime_ns || (*now && *now - pair->ktime_ns > CLOCK_PAIR_REFRESH_NS)))
		refresh_clock_pair(t, now);
}

static __always_inline struct clock_pair *clock_pair_of(__u32 cpu)
{
	__u32 zero = 0;
	struct clock_pair *pair = bpf_map_lookup_percpu_elem(&clock_pairs, &zero, cpu);

	if (pair && pair->ktime_ns)
		return pair;
	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	return pair && pair->ktime_ns ? pair : NULL;
}

/* The conversion; unsigned arithmetic, so a time after the pair's works too. */
static __always_inline __u64 rq_time_to_ktime(const struct clock_pair *pair, __u64 rq_ts)
{
	return pair->ktime_ns - (pair->rq_clock - rq_ts);
}

/* Since 5.16 (commit bcf9033e5449) the CPU is in thread_info again. */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu *)t, cpu);
}

/* When t last arrived on a CPU, in offcpu's clock; 0: unknown. */
static __always_inline __u64 arrival_ns(struct task_struct *t, const struct clock_pair *pair)
{
	__u64 arrival = BPF_CORE_READ(t, sched_info.last_arrival);

	if (!arrival || !pair)
		return 0;
	return rq_time_to_ktime(pair, arrival);
}

/*
 * When t, off CPU, left it: its last arrival plus what it ran then
 * (sum_exec_runtime - prev_sum_exec_runtime, both from the pick of that
 * arrival). Not se.exec_start: that is on rq->clock_task, which steal time
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING, on here) and interrupt time hold back,
 * so it drifts from offcpu's clock by all the steal since the thread left
 * (measured in docs/design.md); the run's own length is on that clock too, but
 * a run is short. Only the fair class sets prev_sum_exec_runtime (at its
 * pick, set_next_entity()): for real-time, deadline and stop tasks
 * (migration/N was off by 780 ms), the start of their last run. 0: unknown.
 */
#define SCHED_POLICY_NORMAL 0
#define SCHED_POLICY_BATCH 3
#define SCHED_POLICY_IDLE 5

static __always_inline __u64 departure_ns(struct task_struct *t, const struct clock_pair *pair)
{
	__u64 arrival = BPF_CORE_READ(t, sched_info.last_arrival);
	__u64 ran =
	    BPF_CORE_READ(t, se.sum_exec_runtime) - BPF_CORE_READ(t, se.prev_sum_exec_runtime);
	__u32 policy = BPF_CORE_READ(t, policy);

	if (!arrival || !pair)
		return 0;
	if ((policy != SCHED_POLICY_NORMAL && policy != SCHED_POLICY_BATCH &&
	     policy != SCHED_POLICY_IDLE) ||
	    ((__s64)(pair->rq_clock - arrival) > 0 && ran > pair->rq_clock - arrival))
		ran = 0;
	return rq_time_to_ktime(pair, arrival + ran);
}

/* Whether end_ns, a thread's arrival, ends the wait in its slot: after its start, not after now. */
static __always_inline bool arrival_ends(const struct wait_start *slot, __u64 end_ns, __u64 now)
{
	return end_ns && (__s64)(end_ns - slot->start_ts_ns) > 0 && (__s64)(now - end_ns) >= 0;
}

/*
 * measure_clock: the conversion's error against the traced switches, in
 * clock_errors[kind] (read by tracer.c): a switch-in's time from
 * last_arrival (at the next switch-out), a switch-out's from last_arrival
 * and the run's length, and from se.exec_start (both at the next
 * switch-in, as the iterator would date it).
 */
struct offcpu_clock_error clock_errors[OFFCPU_CLOCK_ERR_KINDS];

static __always_inline void add_clock_error(int kind, __u64 estimate, __u64 exact, __u64 wait_ns,
					    __u32 tid)
{
	__s64 e = (__s64)(estimate - exact);
	__u64 a = e < 0 ? -e : e;
	struct offcpu_clock_error *ce;

	if (kind < 0 || kind >= OFFCPU_CLOCK_ERR_KINDS || !estimate)
		return;
	ce = &clock_errors[kind];
	__sync_fetch_and_add(&ce->n, 1);
	__sync_fetch_and_add(&ce->sum_abs_ns, a);
	__sync_fetch_and_add(&ce->sum_ns, (__u64)e);
	__sync_fetch_and_add(&ce->sum_wait_ns, wait_ns);
	if (a > 1000000)
		__sync_fetch_and_add(&ce->over_1ms, 1);
	if (a > 10000000)
		__sync_fetch_and_add(&ce->over_10ms, 1);
	if (a > ce->max_abs_ns) {
		ce->max_abs_ns = a;
		ce->worst_tid = tid;
	}
}

static __always_inline void measure_switch_out(struct task_struct *prev, struct wait_start *slot,
					       __u64 *now)
{
	if (slot->switch_in_ts_ns && !slot->start_ts_ns)
		add_clock_error(OFFCPU_CLOCK_ERR_ARRIVAL,
				arrival_ns(prev, refresh_clock_pair(prev, now)),
				slot->switch_in_ts_ns, 0, prev->pid);
	slot->switch_in_ts_ns = 0;
}

static __always_inline void measure_switch_in(struct task_struct *next, struct wait_start *slot,
					      const struct wait_start *start, __u64 now)
{
	__u64 wait_ns = now - start->start_ts_ns;
	__u64 task_clock_ago;
	__u64 copy = now;

	slot->switch_in_ts_ns = now;
	add_clock_error(OFFCPU_CLOCK_ERR_DEPARTURE,
			departure_ns(next, refresh_clock_pair(next, &copy)), start->start_ts_ns,
			wait_ns, next->pid);
	task_clock_ago = rq_clock_task_of(next) - BPF_CORE_READ(next, se.exec_start);
	add_clock_error(OFFCPU_CLOCK_ERR_EXEC_START, now - task_clock_ago, start->start_ts_ns,
			wait_ns, next->pid);
}

#endif
