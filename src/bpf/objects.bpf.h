/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a wait waited on: the system call it blocked in, its first
 * arguments, and the user memory around the futex or the timespec they
 * point at (struct offcpu_object), taken at the switch-out. It cannot wait
 * for the switch-in as the stacks do: by then the lock that made it wait
 * has been handed on, and the owner a glibc mutex records is the thread
 * that woke it. User space names the object (src/objects/). A wait open
 * when tracing began is read by the open-wait iterator, from the blocked
 * thread's saved registers and memory.
 */
#ifndef OFFCPU_OBJECTS_BPF_H
#define OFFCPU_OBJECTS_BPF_H

/* x86_64's restart_syscall (offcpu.h has the calls user space names). */
#define NR_RESTART_SYSCALL 219

/*
 * A timed futex wait that a signal handler interrupted comes back as
 * restart_syscall, its registers as the futex call left them: the
 * restart block's function tells it from a restarted sleep.
 */
extern const void futex_wait_restart __ksym __weak;

/*
 * The bytes around addr that a lock's kind can need, within addr's page:
 * the window starts OFFCPU_OBJECT_BEFORE bytes before it. A field that
 * would be on another page is not read (user space counts it as a failed
 * read): a fault there could be a guard page, and the copy is not retried.
 */
static __always_inline void object_window(struct offcpu_object *o, __u64 addr, __u64 before,
					  __u64 size, struct task_struct *task)
{
	__u64 page = addr & ~(__u64)(COPY_PAGE - 1);
	__u64 start = addr - before, end = addr + size - before;
	__u64 len;

	if (start < page || start > addr)
		start = page;
	if (end > page + COPY_PAGE)
		end = page + COPY_PAGE;
	len = end - start;
	o->window_addr = start;
	o->window_len = 0;
	if (len == 0 || len > OFFCPU_OBJECT_WINDOW)
		return;
	if (!read_user(o->window, len, start, task))
		o->window_len = len;
}

/*
 * What t, asleep in a system call, waits on; its user memory read as
 * read_user() reads it: task NULL when t is current (at its switch-out,
 * two loads for a thread in any other call, one copy of at most 48 bytes
 * for a futex), else t (the open-wait iterator's, which may sleep).
 */
static __always_inline void object_take(struct task_struct *t, bool asleep, struct offcpu_object *o,
					struct task_struct *task)
{
	struct pt_regs *regs;
	__u64 nr;

	o->taken = 0;
	if (!want_objects || !asleep || (t->flags & PF_KTHREAD))
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	nr = BPF_CORE_READ(regs, orig_ax);
	o->restarted = 0;
	if (nr == NR_RESTART_SYSCALL) {
		if (!(__u64)&futex_wait_restart ||
		    (__u64)BPF_CORE_READ(t, restart_block.fn) != (__u64)&futex_wait_restart)
			return;
		nr = OFFCPU_NR_FUTEX;
		o->restarted = 1;
	}
	if (file_call_at_switch_out(o, regs, nr, task))
		return;
	if (nr != OFFCPU_NR_FUTEX && nr != OFFCPU_NR_FUTEX_WAITV && nr != OFFCPU_NR_NANOSLEEP &&
	    nr != OFFCPU_NR_CLOCK_NANOSLEEP && nr != OFFCPU_NR_WAIT4 && nr != OFFCPU_NR_WAITID)
		return;
	o->taken = 1;
	o->syscall = nr;
	o->args[0] = BPF_CORE_READ(regs, di);
	o->args[1] = BPF_CORE_READ(regs, si);
	o->args[2] = BPF_CORE_READ(regs, dx);
	o->window_len = 0;
	if (nr == OFFCPU_NR_FUTEX)
		object_window(o, o->args[0], OFFCPU_OBJECT_BEFORE, OFFCPU_OBJECT_WINDOW, task);
	else if (nr == OFFCPU_NR_FUTEX_WAITV)
		/* The first two struct futex_waitv: each its value, its address, its flags. */
		object_window(o, o->args[0], 0, OFFCPU_OBJECT_WINDOW, task);
	else if (nr == OFFCPU_NR_NANOSLEEP)
		object_window(o, o->args[0], 0, 16, task);
	else if (nr == OFFCPU_NR_CLOCK_NANOSLEEP)
		object_window(o, o->args[2], 0, 16, task);
}

/* At prev's switch-out into a sleep (a preempted thread waits on nothing). */
static __always_inline void object_take_at_switch_out(struct task_struct *prev, __u32 prev_state,
						      bool preempt, struct offcpu_object *o)
{
	object_take(prev,
		    !preempt && (prev_state & (TASK_BIT_INTERRUPTIBLE | TASK_BIT_UNINTERRUPTIBLE)),
		    o, NULL);
}

/*
 * The open-wait iterator's, for a thread found asleep that no traced
 * switch-out told of (offcpu snapshot, a wait begun before tracing): a
 * global function, verified apart, as take_open_reads() is.
 */
__noinline int take_open_object(struct task_struct *t __arg_trusted, struct offcpu_wait_record *r)
{
	if (!r)
		return 0;
	if (!r->object.taken)
		object_take(t,
			    r->state == OFFCPU_STATE_INTERRUPTIBLE ||
				r->state == OFFCPU_STATE_UNINTERRUPTIBLE,
			    &r->object, t);
	/* Its fd holds the file it waits on while it waits, as at a switch-in. */
	file_take(t, r->tid, &r->object);
	return 0;
}

#endif
