/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which threads are traced: the -p -t -c --cgroup -u -k filters, their
 * bitmaps and maps, and --state. Apart because sched_switch, the exec and
 * fork programs and the iterators all ask, each from its own context
 * (current or not), and none needs more than the answer.
 */
#ifndef OFFCPU_FILTERS_BPF_H
#define OFFCPU_FILTERS_BPF_H

/* Filled by user space before attaching; -- COMMAND's forks are added here. */
__u64 pid_bits[OFFCPU_ID_BITMAP_WORDS];
__u64 tid_bits[OFFCPU_ID_BITMAP_WORDS];

struct comm_key {
	char name[OFFCPU_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct comm_key);
	__type(value, __u8);
} comms SEC(".maps");

/*
 * --cgroup: slot 0 holds the cgroup directory user space opened. The
 * kernel answers from the cgroup itself, so neither the path nor a cgroup
 * namespace around offcpu matters.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} cgroup SEC(".maps");

/*
 * The -p -t -c --cgroup -u -k filters; each costs nothing when unset. t is
 * the thread switching out, which is still current: that is the only task
 * bpf_current_task_under_cgroup() answers for, and it does so on every
 * kernel offcpu supports, whatever cgroup namespace offcpu runs in. Reading
 * cgroup::ancestors[] instead needs 6.1 (older verifiers refuse the
 * program) and the cgroup's level, which a path in a namespace hides.
 */
/*
 * Whether t is in --cgroup, for the iterators, which run as
 * offcpu, not as t: its default-hierarchy cgroup or one of its parents
 * (the css parent chain; at most 32 levels deep here) has cgroup_id.
 */
static __always_inline bool task_in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	int i;

	for (i = 0; i < 32 && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == cgroup_id)
			return true;
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

/* in_switch: t is current, switching out; otherwise an iterator looks at it. */
static __always_inline bool task_selected(struct task_struct *t, bool in_switch)
{
	if (t->tgid == self_tgid)
		return false;
	if (user_threads_only || kernel_threads_only) {
		bool kthread = t->flags & PF_KTHREAD;

		if (user_threads_only && kthread)
			return false;
		if (kernel_threads_only && !kthread)
			return false;
	}
	if (filter_pids && !(pid_bits[OFFCPU_ID_WORD(t->tgid)] & OFFCPU_ID_BIT(t->tgid)))
		return false;
	if (filter_tids && !(tid_bits[OFFCPU_ID_WORD(t->pid)] & OFFCPU_ID_BIT(t->pid)))
		return false;
	if (filter_comms) {
		struct comm_key key = {};

		bpf_probe_read_kernel_str(key.name, sizeof(key.name), t->comm);
		if (!bpf_map_lookup_elem(&comms, &key))
			return false;
	}
	if (filter_cgroup && in_switch && bpf_current_task_under_cgroup(&cgroup, 0) != 1)
		return false;
	if (filter_cgroup && !in_switch && !task_in_cgroup(t))
		return false;
	return true;
}

/*
 * --state. A runnable thread without the preempt flag may have yielded or
 * been preempted on its way back to user space: user space tells which
 * from its kernel stack, so it passes here if either is selected.
 */
static __always_inline bool state_selected(__u32 prev_state, bool preempt)
{
	__u32 state, bits;

	if (!state_mask)
		return true;
	state = state_of(prev_state, preempt);
	bits = 1u << state;
	if (state == OFFCPU_STATE_RUNNING)
		bits |= 1u << OFFCPU_STATE_PREEMPTED;
	return state_mask & bits;
}

#endif
