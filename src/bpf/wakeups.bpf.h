/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who woke a wait and how long it then sat runnable: what sched_waking
 * keeps in the wait's slot (sched_waking.bpf.h), the interrupt depths and
 * the waker's stacks (--wakers) it needs, and what the switches take of
 * it. Apart because sched_switch's path only calls wakeup_start(),
 * wakeup_end() and fill_wakeup().
 */
#ifndef OFFCPU_WAKEUPS_BPF_H
#define OFFCPU_WAKEUPS_BPF_H

/*
 * Who woke a wait, and how long it then sat runnable.
 *
 * The run-queue part needs no clock read of ours: with CONFIG_SCHED_INFO
 * the scheduler stamps a task's sched_info.last_queued (rq clock) when it
 * is enqueued, and at its switch-in adds now - last_queued to run_delay
 * (sched_info_arrive(), in prepare_task_switch(), after the sched_switch
 * tracepoint, so last_queued is still set here). A migration while
 * runnable adds the part so far to run_delay at the dequeue and stamps
 * last_queued again, so the wait's run-queue time is run_delay's growth
 * since the switch-out plus rq->clock - last_queued: exactly what the
 * kernel itself accounts, with rq->clock updated by __schedule() just
 * before it picked this task.
 *
 * The rq is found from the task: per-CPU variables (runqueues,
 * __preempt_count) are not in this kernel's kallsyms (no
 * CONFIG_KALLSYMS_ALL), so the verifier cannot resolve them as ksyms.
 * set_task_rq() points every task's se.cfs_rq at its CPU's root or group
 * cfs_rq, whatever its class, and cfs_rq->rq is that CPU's rq
 * (CONFIG_FAIR_GROUP_SCHED).
 */
struct cfs_rq___group {
	struct rq *rq;
} __attribute__((preserve_access_index));

/*
 * Which interrupt context this CPU is in, for want of __preempt_count:
 * depths kept by the irq, softirq and local timer tracepoints (a few per
 * interrupt, nothing per switch). Entered before tracing began, an exit
 * finds 0 and leaves it.
 */
struct irq_depth {
	__u32 hardirq;
	__u32 softirq;
	/*
	 * Local network delivery (loopback, a veth pair) is the sender's own
	 * work: it raises NET_RX in task context, and the softirq runs on
	 * its stack when it enables bottom halves again, waking the reader
	 * from "[softirq]". net_rx_raised: the thread that raised NET_RX so;
	 * net_rx_for: that thread while the softirq runs on it, the waker
	 * its wakeups are credited to.
	 */
	__u32 net_rx_raised;
	__u32 net_rx_for;
};

/* include/linux/interrupt.h: the softirq vector network receive runs in. */
#define NET_RX_SOFTIRQ 3

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_depth);
} irq_depths SEC(".maps");

/* This CPU's depths, one of them moved by delta; NULL if the map has none. */
static __always_inline struct irq_depth *irq_depth_add(bool hard, int delta)
{
	__u32 zero = 0;
	struct irq_depth *d = bpf_map_lookup_elem(&irq_depths, &zero);
	__u32 *depth;

	if (!d)
		return NULL;
	depth = hard ? &d->hardirq : &d->softirq;
	if (delta > 0)
		(*depth)++;
	else if (*depth)
		(*depth)--;
	return d;
}

/* --wakers: the waker's stacks, on the wakee, until its switch-in sends them. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_waker_record);
} waker_stacks SEC(".maps");

static __always_inline bool has_sched_info(struct task_struct *t)
{
	struct cfs_rq___group *g = (void *)t->se.cfs_rq;

	return bpf_core_field_exists(t->sched_info) && bpf_core_field_exists(g->rq);
}

/*
 * A remote try_to_wake_up() can see the sleeping state a thread set and
 * fire sched_waking before this CPU's switch-out has traced the wait
 * (seen: 6 of 39,000 semaphore waits of a ping-pong without a waker).
 * Such a wakeup is kept in waker_early until the switch-out. It is this
 * wait's if the thread blocks while the waker is still at work: holding
 * its pi_lock (waiting for this runqueue's lock, or spinning on its
 * on_cpu), or past them, having set TASK_WAKING and queued the wakeup
 * on this CPU's wake list. One that already made the thread runnable
 * left it TASK_RUNNING, and the thread did not block.
 */
static __always_inline bool woken_early(const struct wait_start *slot, struct task_struct *prev,
					bool preempt, __u32 prev_state)
{
	if (preempt || !prev_state)
		return false;
	return (BPF_CORE_READ(prev, __state) & TASK_BIT_WAKING) ||
	       BPF_CORE_READ(prev, pi_lock.raw_lock.val.counter);
}

/* At the switch-out: a new wait, not woken yet, but for an early waker. */
static __always_inline void wakeup_start(struct wait_start *slot, struct task_struct *prev,
					 bool preempt, __u32 prev_state)
{
	if (slot->waker_early == OFFCPU_WAKER_NONE) {
		/* Not stored: one coming now, beside this program, reaches wakeup_end(). */
		slot->waker = OFFCPU_WAKER_NONE;
	} else {
		slot->waker = woken_early(slot, prev, preempt, prev_state) ? slot->waker_early
									   : OFFCPU_WAKER_NONE;
		slot->waker_early = OFFCPU_WAKER_NONE;
	}
	slot->waker_stack = 0;
	slot->run_delay_ns = has_sched_info(prev) ? prev->sched_info.run_delay : 0;
}

/*
 * At the switch-in: an early waker that ran beside the switch-out's
 * program, after it looked (and saw none), is the wait's all the same.
 */
static __always_inline void wakeup_end(struct wait_start *slot, struct wait_start *start)
{
	if (start->waker == OFFCPU_WAKER_NONE)
		start->waker = start->waker_early;
	slot->waker_early = OFFCPU_WAKER_NONE;
}

/* The record's waker and run-queue time, at its switch-in. */
static __always_inline void fill_wakeup(struct offcpu_counters *c, struct offcpu_wait_record *r,
					struct task_struct *next, const struct wait_start *start)
{
	struct offcpu_waker_record *w;
	__u64 runq = 0, queued, clock, size;
	struct rq *rq;

	r->waker = start->waker;
	if (r->waker == OFFCPU_WAKER_NONE && r->state != OFFCPU_STATE_PREEMPTED &&
	    r->state != OFFCPU_STATE_RUNNING)
		count(c, OFFCPU_CNT_WAKER_UNSEEN, IN_SWITCH);
	r->waker_pid = start->waker_pid;
	r->waker_tid = start->waker_tid;
	r->waker_cpu = start->waker_cpu;
	r->reserved15 = 0;
	__builtin_memcpy(r->waker_comm, start->waker_comm, sizeof(r->waker_comm));
	r->waker_stack = 0;
	r->runq_known = 1;
	if (r->state == OFFCPU_STATE_PREEMPTED || r->state == OFFCPU_STATE_RUNNING) {
		runq = r->duration_ns;
	} else if (has_sched_info(next)) {
		runq = next->sched_info.run_delay - start->run_delay_ns;
		queued = next->sched_info.last_queued;
		rq = BPF_CORE_READ((struct cfs_rq___group *)next->se.cfs_rq, rq);
		clock = rq ? BPF_CORE_READ(rq, clock) : 0;
		if (queued && clock > queued)
			runq += clock - queued;
	} else {
		r->runq_known = 0;
	}
	r->runq_ns = runq < r->duration_ns ? runq : r->duration_ns;
	if (!start->waker_stack)
		return;
	/* dwarf: sent at the wakeup already. */
	if (stack_copy_bytes) {
		r->waker_stack = 1;
		return;
	}
	/* Sent first: the wait's record follows it (now, or from rseq_update). */
	w = bpf_task_storage_get(&waker_stacks, next, 0, 0);
	if (!w)
		return;
	size = (__u64)w->kernel_frames + w->user_frames;
	if (size > 2 * OFFCPU_MAX_STACK_DEPTH)
		size = 2 * OFFCPU_MAX_STACK_DEPTH;
	if (bpf_ringbuf_output(&events, w, OFFCPU_WAKER_HEADER_SIZE + size * sizeof(__u64), 0))
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, IN_SWITCH);
	else
		r->waker_stack = 1;
}

/* The current task's kernel stack into w->ips: the number of frames. */
static __always_inline __u32 waker_kernel_stack(void *ctx, struct offcpu_waker_record *w)
{
	long n = bpf_get_stack(ctx, w->ips, stack_depth * sizeof(__u64), 0);

	if (n <= 0)
		return 0;
	n /= sizeof(__u64);
	return n > OFFCPU_MAX_STACK_DEPTH ? OFFCPU_MAX_STACK_DEPTH : n;
}

static __always_inline void waker_header(struct offcpu_waker_record *w, struct task_struct *wakee,
					 struct task_struct *cur, __u64 start_ts_ns, __u64 now)
{
	w->type = OFFCPU_RECORD_WAKER;
	w->pid = cur->tgid;
	w->tid = wakee->pid;
	w->user_frames = 0;
	w->user_stack = OFFCPU_USTACK_NONE;
	w->stack_depth = stack_depth;
	w->start_ts_ns = start_ts_ns;
	w->ts_ns = now;
}

/*
 * --wakers, fp: the current task's stacks into the wakee's waker_stacks,
 * sent at its switch-in if its wait is kept. Whether they were taken.
 */
static __always_inline bool take_waker_stacks(void *ctx, struct task_struct *wakee,
					      struct task_struct *cur, bool in_interrupt,
					      __u64 start_ts_ns, __u64 now)
{
	struct offcpu_waker_record *w;
	__u32 kernel_frames;
	long n;

	w = bpf_task_storage_get(&waker_stacks, wakee, 0, scheduler_get_flags());
	if (!w) {
		count(counters_get(), OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	waker_header(w, wakee, cur, start_ts_ns, now);
	kernel_frames = waker_kernel_stack(ctx, w);
	w->kernel_frames = kernel_frames;
	/* An interrupt's user stack is whoever it interrupted: not the waker's. */
	if (!in_interrupt && !(cur->flags & PF_KTHREAD)) {
		n = bpf_get_stack(ctx, &w->ips[kernel_frames], stack_depth * sizeof(__u64),
				  BPF_F_USER_STACK);
		if (n > 0)
			w->user_frames = n / sizeof(__u64);
		w->user_stack = OFFCPU_USTACK_TAKEN;
	}
	count(counters_get(), OFFCPU_CNT_WAKER_STACKS, PREEMPTIBLE);
	return true;
}

/*
 * --wakers, dwarf: the current task's kernel stack, user registers and a
 * copy of its user stack from the SP, sent now, before the wakee can run:
 * a copy is too large to keep on each wakee until its switch-in. The
 * waker is in the kernel (a system call, or a fault), so its user stack
 * does not change under the copy. Whether it was sent; a wait whose
 * waker's record went and which is then not kept (-M, --sample-rate)
 * leaves it unmatched.
 */
static __always_inline bool send_waker_copy(void *ctx, struct task_struct *wakee,
					    struct task_struct *cur, bool in_interrupt,
					    __u64 start_ts_ns, __u64 now)
{
	struct offcpu_counters *c = counters_get();
	__u32 cpu = bpf_get_smp_processor_id();
	struct offcpu_waker_record *w;
	__u32 kernel_frames, user_off;
	__u64 total;
	struct copy_buf *b;

	b = bpf_map_lookup_elem(&waker_copy_bufs, &cpu);
	if (!b) {
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	w = (void *)b->bytes;
	waker_header(w, wakee, cur, start_ts_ns, now);
	kernel_frames = waker_kernel_stack(ctx, w);
	w->kernel_frames = kernel_frames;
	user_off = OFFCPU_WAKER_HEADER_SIZE + (kernel_frames & OFFCPU_MAX_STACK_DEPTH) * 8;
	total = user_off;
	/* An interrupt's user stack is whoever it interrupted: not the waker's. */
	if (!in_interrupt && !(cur->flags & PF_KTHREAD) &&
	    stack_copy_bytes <= OFFCPU_MAX_STACK_COPY) {
		w->user_stack = OFFCPU_USTACK_COPIED;
		total += COPY_DATA_OFF + copy_user_stack(b, user_off, stack_copy_bytes);
	}
	/* Never true (the buffer has a page of slack), but the verifier needs the bound. */
	if (total > sizeof(*b) || bpf_ringbuf_output(&events, b, total, 0)) {
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	count(c, OFFCPU_CNT_WAKER_STACKS, PREEMPTIBLE);
	return true;
}

#endif
