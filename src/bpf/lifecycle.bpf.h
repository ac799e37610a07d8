/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's and a process's life: exit, exec and fork, told to user space
 * and tidied after; -- COMMAND's threads timed from their fork; the slots
 * made ahead where the scheduler's programs may not allocate. Apart because
 * these programs run once a thread, preemptible, outside the scheduler.
 */
#ifndef OFFCPU_LIFECYCLE_BPF_H
#define OFFCPU_LIFECYCLE_BPF_H

/* The current thread is exiting or exec'ing: its parked wait has no user stack left. */
static __always_inline void flush_current(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending_wait *p = bpf_task_storage_get(&pending, task, 0, 0);

	if (!p || !p->armed)
		return;
	set_flushing(p, 1);
	send_parked(counters_get(), p, OFFCPU_USTACK_NONE, PREEMPTIBLE);
	set_flushing(p, 0);
}

/*
 * An exec wakes the reader at once: it snapshots the new image's mappings
 * while the process lives, which a short-lived one does not for long.
 */
static __always_inline void task_record(__u32 type, __u32 pid, __u32 parent_pid)
{
	struct offcpu_task_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(counters_get(), OFFCPU_CNT_RINGBUF_FULL, PREEMPTIBLE);
		return;
	}
	r->type = type;
	r->pid = pid;
	r->parent_pid = parent_pid;
	bpf_ringbuf_submit(r, type == OFFCPU_RECORD_EXEC ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * A thread that is running has no start in its slot: its switch-in took
 * it. One still there means the thread was switched in without a
 * sched_switch event reaching us, and that wait is lost. Kernels may not
 * deliver every switch: this Firecracker VM's traces no switch away from
 * its init's threads (perf sees none either), so whichever thread runs
 * after one of them loses its switch-in. Counted where the thread next
 * shows itself running: its next switch-out, or its exit.
 */
static __always_inline void unseen_switch_in(struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct offcpu_counters *c = counters_get();
	__u64 end_ns;

	if (!slot || !slot->start_ts_ns)
		return;
	end_ns = arrival_ns(p, clock_pair_of(bpf_get_smp_processor_id()));
	if (!recover(c, p, slot, end_ns, bpf_ktime_get_ns(), PREEMPTIBLE))
		return;
	slot->start_ts_ns = 0;
	/* It has run since; thread_record() ends that run now. */
	slot->on_cpu_since = end_ns;
}

/*
 * Under -- COMMAND, an exiting thread's life as its slot timed
 * it. It is running: its last interval on CPU ends now.
 */
static __always_inline void thread_record(struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct offcpu_thread_record *r;
	__u64 now = bpf_ktime_get_ns();

	if (!slot || !slot->tracked_ns)
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(counters_get(), OFFCPU_CNT_RINGBUF_FULL, PREEMPTIBLE);
		return;
	}
	r->type = OFFCPU_RECORD_THREAD;
	r->pid = p->tgid;
	r->tid = p->pid;
	r->reserved = 0;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), p->comm);
	r->start_ns = p->start_time;
	r->tracked_ns = slot->tracked_ns;
	r->exit_ns = now;
	r->run_ns = slot->run_ns + (slot->on_cpu_since ? now - slot->on_cpu_since : 0);
	r->startup_ns = slot->startup_ns;
	r->dropped_ns = slot->dropped_ns;
	r->unseen_ns = slot->unseen_ns + (slot->start_ts_ns ? now - slot->start_ts_ns : 0);
	r->kernel_run_ns = p->se.sum_exec_runtime;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Every exiting thread passes here, once. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(offcpu_sched_process_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	flush_current();
	unseen_switch_in(p);
	if (account_threads)
		thread_record(p);
	if (!bpf_task_storage_delete(&inflight, p))
		__sync_fetch_and_add(&slots_in_use, -1);
	/* do_exit() decremented signal->live before this tracepoint. */
	if (p->signal->live.counter != 0)
		return 0;
	python_forget(tgid);
	/* Its PID may be reused by a process nobody asked for. */
	if (follow_forks)
		__sync_fetch_and_and(&pid_bits[OFFCPU_ID_WORD(tgid)], ~OFFCPU_ID_BIT(tgid));
	bpf_map_delete_elem(&reads_by_pid, &tgid);
	task_record(OFFCPU_RECORD_EXIT, tgid, 0);
	return 0;
}

/* The old image's user stack is gone; user space must re-read the maps. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(offcpu_sched_process_exec, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	flush_current();
	python_forget(tgid);
	/* Another image: user space matches it again. */
	bpf_map_delete_elem(&reads_by_pid, &tgid);
	/*
	 * A process no filter selects is not read again at exec
	 * (its maps, and each new file's symbols and DWARF, kept for the run):
	 * on a busy machine that was every binary run there, 16 MiB in 40 s
	 * of offcpu serve --cgroup beside other builds. One selected later (a
	 * rename, a move into the cgroup) is read at its first stack.
	 */
	if (any_filter && !task_selected(p, true)) /* p is current here */
		return 0;
	__sync_fetch_and_or(&young_bits[OFFCPU_ID_WORD(tgid)], OFFCPU_ID_BIT(tgid));
	task_record(OFFCPU_RECORD_EXEC, tgid, 0);
	return 0;
}

/*
 * A thread of -- COMMAND is timed from its fork; it has not run
 * yet, and its first switch-in ends the wait for a CPU it starts with.
 */
static __always_inline void track_from_fork(struct task_struct *child)
{
	struct wait_start *slot = new_slot(counters_get(), child, PREEMPTIBLE);

	if (!slot)
		return;
	slot->tracked_ns = bpf_ktime_get_ns();
	slot->start_ts_ns = slot->tracked_ns;
	slot->first_run = 1;
}

/*
 * Without alloc_in_scheduler: every slot the scheduler's programs may
 * want of t, made here, at its fork or by the start's iterator, where an
 * allocation may sleep on PREEMPT_RT (a tracepoint's program runs with
 * preemption off, but holds none of the scheduler's locks).
 */
static __always_inline void make_slots(struct offcpu_counters *c, struct task_struct *t,
				       enum counting how)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, t, 0, 0);
	__u32 tgid = t->tgid;

	if (!slot) {
		slot = new_slot(c, t, how);
		if (!slot)
			return;
		slot->made_ahead = 1;
	}
	bpf_task_storage_get(&pending, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	bpf_task_storage_get(&switch_out_stacks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (want_waker_stacks)
		bpf_task_storage_get(&waker_stacks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (bpf_map_lookup_elem(&python_procs, &tgid)) {
		bpf_task_storage_get(&python_threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		bpf_task_storage_get(&python_switch_outs, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
}

/*
 * A new thread's slots when the scheduler's programs may not make them,
 * unless it cannot be selected: a comm filter's thread may be renamed
 * after its fork, -- COMMAND's processes are added to the filter only
 * below, and offcpu's own child (-- COMMAND itself) by user space after
 * its fork.
 */
static __always_inline void make_slots_at_fork(struct task_struct *parent,
					       struct task_struct *child, bool traced)
{
	if (alloc_in_scheduler)
		return;
	if (traced || filter_comms || parent->tgid == self_tgid ||
	    (!filter_tids && task_selected(child, false)))
		make_slots(counters_get(), child, PREEMPTIBLE);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(offcpu_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid;
	__u32 child_tgid = child->tgid;
	bool traced =
	    follow_forks && (pid_bits[OFFCPU_ID_WORD(parent_tgid)] & OFFCPU_ID_BIT(parent_tgid));

	if (traced && account_threads)
		track_from_fork(child);
	/* A new thread shares its process's maps: nothing to tell. */
	if (child->pid != child_tgid) {
		make_slots_at_fork(parent, child, traced);
		return 0;
	}
	python_fork(parent_tgid, child_tgid);
	/* After python_fork(): a Python process's child has the Python slots too. */
	make_slots_at_fork(parent, child, traced);
	/* With -- COMMAND, the processes it forks are traced too. */
	if (traced)
		__sync_fetch_and_or(&pid_bits[OFFCPU_ID_WORD(child_tgid)],
				    OFFCPU_ID_BIT(child_tgid));
	inherit_reads(parent_tgid, child_tgid);
	/*
	 * Under a filter, only a selected parent's fork is
	 * told (parent is current here): user space held every fork on the
	 * machine until its exit record, and an exit record lost (ring buffer
	 * full) kept it until the reaper's second look (offcpu serve --cgroup
	 * beside other sessions' builds: 5 forks a second from outside).
	 */
	if (any_filter && !task_selected(parent, true))
		return 0;
	task_record(OFFCPU_RECORD_FORK, child_tgid, parent_tgid);
	return 0;
}

/*
 * Without alloc_in_scheduler, at the start, after the fork program is
 * attached (which makes the slots of threads forked since): the slots of
 * every selected thread. A non-sleepable iterator's program runs under
 * rcu_read_lock() and migrate_disable(), which on PREEMPT_RT leave it
 * preemptible: its allocations may sleep.
 */
SEC("iter/task")
int offcpu_make_slots(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t && t->pid && task_selected(t, false))
		make_slots(counters_get(), t, PREEMPTIBLE);
	return 0;
}

#endif
