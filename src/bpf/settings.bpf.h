/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load-time settings: every const volatile global, written by
 * tracer__new between the skeleton's open and load. In one place because
 * user space sets them as one list, and the verifier takes each as a
 * constant and drops the code it turns off wherever it is read.
 */
#ifndef OFFCPU_SETTINGS_BPF_H
#define OFFCPU_SETTINGS_BPF_H

/*
 * -m, -M, --sample-rate and --short sample (their defaults are options.h's
 * OPTIONS_DEFAULT_*, not a third copy here): judged by
 * offcpu_filter__judge() (offcpu.h), as user space judges the waits the
 * open-wait iterator writes. --short sample keeps a wait below -m with
 * probability duration/min, as Go's block profile keeps an event shorter
 * than its rate, and user space weighs it min: totals stay unbiased.
 */
const volatile struct offcpu_filter duration_filter = {
	.max_duration_ns = ~0ULL,
	.sample_rate = 1,
};
/*
 * Coverage: -- COMMAND without other filters (with one, a
 * thread's switches are not all timed): its threads are timed from their
 * fork and sent at their exit.
 */
const volatile bool account_threads;
const volatile __u32 state_mask; /* bit per enum offcpu_state; 0: all */
const volatile bool filter_pids;
const volatile bool filter_tids;
const volatile bool filter_comms;
const volatile bool filter_cgroup;
const volatile bool user_threads_only;
const volatile bool kernel_threads_only;
const volatile bool follow_forks;
const volatile bool has_prev_state_arg = true;
const volatile bool want_kernel_stack = true;
const volatile bool want_user_stack = true;
const volatile __u32 stack_depth = OFFCPU_MAX_STACK_DEPTH;
/* offcpu itself: its own polling is not what anyone is profiling. */
const volatile __u32 self_tgid;
/* Park waits for rseq_update: this kernel has it, and no -p -t -c --cgroup. */
const volatile bool defer_user_stacks;
/*
 * --call-graph dwarf,SIZE: bytes of user stack rseq_update copies; 0: fp,
 * the kernel's frame-pointer walk (bpf_get_stack).
 */
const volatile __u32 stack_copy_bytes;
/* fp mode: a few words at the user SP too, for the leaf's caller (OFFCPU_USTACK_TAKEN_LEAF). */
const volatile bool fix_leaf;
/* Any of -p -t -c --cgroup -u -k --state. */
const volatile bool any_filter;

/* --max-entries: threads that can hold an in-flight slot at once (its default is options.h's). */
const volatile __u64 max_slots;
/*
 * Whether programs inside the scheduler (sched_switch holds the run
 * queue's lock, sched_waking the wakee's pi_lock, interrupts off) may
 * create task storage. Creating it allocates, and on PREEMPT_RT an
 * allocation's locks are sleeping locks: one found held there schedules
 * inside __schedule(), and the CPU spins on its own run queue's lock with
 * interrupts off, for good (a Debian 6.1 rt guest, about one boot in four:
 * the crng's lock, rt_spin_lock() from crng_make_state()). There the
 * slots are made ahead (make_slots()).
 */
const volatile bool alloc_in_scheduler = true;

/* The flags of a task storage get inside the scheduler: see alloc_in_scheduler. */
static __always_inline __u64 scheduler_get_flags(void)
{
	return alloc_in_scheduler ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0;
}

/* What each wait waited on (objects.bpf.h); off only for bench/run (OFFCPU_TEST_NO_OBJECTS). */
const volatile bool want_objects = true;
/*
 * The kernel has bpf_get_kmem_cache() (6.13), in its BTF: the slab cache a
 * kernel lock is in (kernel_locks.bpf.h). Off, the verifier drops the call.
 */
const volatile bool has_kmem_cache;

/* --wakers: the waker's stacks at wakeups of waits already past -m. */
const volatile bool want_waker_stacks;

/* --cgroup's ID (its inode), for the iterators, which do not run as the task. */
const volatile __u64 cgroup_id;
/* --measure-clock: measure the clock conversion (clock_errors); off, the verifier drops it. */
const volatile bool measure_clock;

/* Test and bench override (OFFCPU_TEST_NO_KERNEL_LEAF): bpf_get_task_stack alone, no leaf.bpf.h. */
const volatile bool take_kernel_leaf = true;

#endif
