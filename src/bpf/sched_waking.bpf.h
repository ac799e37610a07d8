/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The programs that see wakeups: sched_waking, at every wakeup on the
 * machine, and the interrupt tracepoints that keep the depths it tells an
 * interrupt's wakeup by. Apart from wakeups.bpf.h, which the switches need
 * before their programs: a program's place in the object is kept (see
 * offcpu.bpf.c).
 */
#ifndef OFFCPU_SCHED_WAKING_BPF_H
#define OFFCPU_SCHED_WAKING_BPF_H

/*
 * sched_waking runs in the waker's context (try_to_wake_up(),
 * with the wakee's pi_lock held, interrupts off) for every wakeup on the
 * machine: one task storage lookup, and out, unless the wakee has a wait
 * in flight that no wakeup has ended yet. No clock read: the run-queue
 * time comes from sched_info at the switch-in; only --wakers reads the
 * clock here, to take stacks only for waits already past -m (they can
 * only grow).
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_sched_waking, struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct task_struct *cur;
	struct irq_depth *depth;
	bool in_interrupt;
	__u32 zero = 0;
	bool early;
	__u8 waker;
	__u64 now;

	if (!slot)
		return 0;
	/*
	 * No wait traced yet: the thread is still on its way out
	 * (woken_early()). The latest such waker is the one that counts.
	 */
	early = !slot->start_ts_ns;
	if (!early && slot->waker != OFFCPU_WAKER_NONE)
		return 0;
	depth = bpf_map_lookup_elem(&irq_depths, &zero);
	cur = bpf_get_current_task_btf();
	if (depth && depth->hardirq)
		waker = OFFCPU_WAKER_HARDIRQ;
	else if (depth && depth->softirq && depth->net_rx_for != cur->pid)
		waker = OFFCPU_WAKER_SOFTIRQ;
	else
		waker = OFFCPU_WAKER_TASK;
	in_interrupt = waker != OFFCPU_WAKER_TASK;
	slot->waker_pid = cur->tgid;
	slot->waker_tid = cur->pid;
	slot->waker_cpu = bpf_get_smp_processor_id();
	/* Not _str: comm is always NUL-terminated within its 16 bytes, and no scan is cheaper. */
	bpf_probe_read_kernel(slot->waker_comm, sizeof(slot->waker_comm), cur->comm);
	if (early) {
		/* Never past -m: no stacks. */
		slot->waker_early = waker;
		return 0;
	}
	slot->waker = waker;
	if (!want_waker_stacks)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - slot->start_ts_ns < duration_filter.min_duration_ns)
		return 0;
	if (stack_copy_bytes)
		slot->waker_stack =
		    send_waker_copy(ctx, p, cur, in_interrupt, slot->start_ts_ns, now);
	else
		slot->waker_stack =
		    take_waker_stacks(ctx, p, cur, in_interrupt, slot->start_ts_ns, now);
	return 0;
}

/* Interrupt contexts for sched_waking (struct irq_depth). */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(offcpu_irq_entry)
{
	irq_depth_add(true, 1);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(offcpu_irq_exit)
{
	irq_depth_add(true, -1);
	return 0;
}

/* x86's APIC timer: hrtimer expiry (sleeps, timeouts) runs in it, not in an irq handler. */
SEC("tp_btf/local_timer_entry")
int BPF_PROG(offcpu_local_timer_entry)
{
	irq_depth_add(true, 1);
	return 0;
}

SEC("tp_btf/local_timer_exit")
int BPF_PROG(offcpu_local_timer_exit)
{
	irq_depth_add(true, -1);
	return 0;
}

/*
 * NET_RX raised outside any interrupt: by a thread sending to a local
 * socket (loopback_xmit() -> netif_rx() -> enqueue_to_backlog()), with
 * bottom halves off, so it runs the softirq itself before it can be
 * switched out (or leaves it to ksoftirqd, another task).
 */
SEC("tp_btf/softirq_raise")
int BPF_PROG(offcpu_softirq_raise, unsigned int vec_nr)
{
	struct irq_depth *d;
	__u32 zero = 0;

	if (vec_nr != NET_RX_SOFTIRQ)
		return 0;
	d = bpf_map_lookup_elem(&irq_depths, &zero);
	if (d && !d->hardirq && !d->softirq)
		d->net_rx_raised = bpf_get_current_task_btf()->pid;
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(offcpu_softirq_entry, unsigned int vec_nr)
{
	struct irq_depth *d = irq_depth_add(false, 1);

	if (vec_nr != NET_RX_SOFTIRQ || !d)
		return 0;
	d->net_rx_for = d->net_rx_raised == bpf_get_current_task_btf()->pid ? d->net_rx_raised : 0;
	d->net_rx_raised = 0;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(offcpu_softirq_exit, unsigned int vec_nr)
{
	struct irq_depth *d = irq_depth_add(false, -1);

	if (vec_nr == NET_RX_SOFTIRQ && d)
		d->net_rx_for = 0;
	return 0;
}

#endif
