/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A wait's user stack, which only its own thread can read: its wait parked
 * until rseq_update (the pending-wait protocol), the user registers and
 * stack copied for dwarf, or the frames taken at the switch-out of a thread
 * without rseq. Apart because sched_switch only asks which way a thread's
 * stack goes and hands its wait over; the task storage all this lives in
 * (pending, switch_out_stacks) is declared beside the in-flight slot.
 */
#ifndef OFFCPU_USER_STACK_BPF_H
#define OFFCPU_USER_STACK_BPF_H

/*
 * The pending-wait protocol. A thread whose user stack rseq_update takes
 * has its completed wait parked in its task local storage:
 *
 *   park_slot()    at its switch-in, claims the thread's pending slot; a
 *                  wait still parked there never reached user space and
 *                  is sent first, without a user stack (send_parked());
 *   fill_record()  writes the new wait into the slot;
 *   park()         arms it: the record is now rseq_update's to send, with
 *                  the user stack (send_with_user_stack()), or the exit or
 *                  exec program's, without (send_parked()).
 *
 * rseq_update and the exit and exec programs run with preemption on. If
 * their own thread is preempted while they send its parked record, its
 * next switch-in must not rewrite that record under them: park_slot()
 * sees the flag set_flushing() raised and the wait goes without parking.
 * The thread stays on this CPU while a program runs, and sched_switch runs
 * with interrupts off, so program order is all it takes; the barrier keeps
 * the compiler to it.
 */
static __always_inline void set_flushing(struct pending_wait *p, __u32 on)
{
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&p->flushing = on;
	asm volatile("" ::: "memory");
}

static __always_inline void park(struct offcpu_counters *c, struct pending_wait *p)
{
	p->armed = 1;
	count(c, OFFCPU_CNT_USTACK_PENDING, IN_SWITCH);
}

static __always_inline void disarm(struct offcpu_counters *c, struct pending_wait *p,
				   enum counting how)
{
	p->armed = 0;
	/* Per-CPU parts may wrap; their sum is the number still parked. */
	add(c, OFFCPU_CNT_USTACK_PENDING, -1, how);
}

/* Sends a parked wait without a user stack of its own; why says why. */
static __always_inline void send_parked(struct offcpu_counters *c, struct pending_wait *p,
					enum offcpu_user_stack why, enum counting how)
{
	if (!p->armed)
		return;
	disarm(c, p, how);
	p->record.user_frames = 0;
	p->record.user_stack = why;
	if (why == OFFCPU_USTACK_NONE)
		count(c, OFFCPU_CNT_USTACK_LOST, how);
	submit(c, &p->record, how);
}

/*
 * The user registers in DWARF order. Entered from user space by a system
 * call or an interrupt, the kernel saved all of them in pt_regs.
 */
static __always_inline void task_user_regs(struct task_struct *t, __u64 *out)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct pt_regs r;

	if (bpf_probe_read_kernel(&r, sizeof(r), regs))
		__builtin_memset(&r, 0, sizeof(r));
	out[0] = r.ax;
	out[1] = r.dx;
	out[2] = r.cx;
	out[3] = r.bx;
	out[4] = r.si;
	out[5] = r.di;
	out[6] = r.bp;
	out[7] = r.sp;
	out[8] = r.r8;
	out[9] = r.r9;
	out[10] = r.r10;
	out[11] = r.r11;
	out[12] = r.r12;
	out[13] = r.r13;
	out[14] = r.r14;
	out[15] = r.r15;
	out[16] = r.ip;
}

static __always_inline void user_regs(__u64 *out)
{
	task_user_regs(bpf_get_current_task_btf(), out);
}

/*
 * The current thread's user registers and up to size bytes of its user
 * stack from the SP, as a struct offcpu_user_copy at b->bytes[user_off],
 * page by page: the first page that cannot be read (the top of the stack's
 * mapping, a page never touched) ends the copy, which is never failed
 * whole. Returns the bytes of stack copied.
 */
static __always_inline __u64 copy_user_stack(struct copy_buf *b, __u32 user_off, __u64 size)
{
	struct offcpu_user_copy *u = (void *)&b->bytes[user_off];
	__u64 len = 0, chunk, sp;
	int i;

	user_regs(u->regs);
	sp = u->regs[7];
	chunk = COPY_PAGE - (sp & (COPY_PAGE - 1));
	for (i = 0; i < OFFCPU_MAX_STACK_COPY / COPY_PAGE + 1; i++) {
		if (len + chunk > size)
			chunk = size - len;
		if (chunk == 0 || chunk > COPY_PAGE)
			break;
		if (bpf_probe_read_user(
			&b->bytes[user_off + COPY_DATA_OFF + (len & (OFFCPU_MAX_STACK_COPY - 1))],
			chunk, (void *)(sp + len)))
			break;
		len += chunk;
		chunk = COPY_PAGE;
	}
	u->size = len;
	return len;
}

/*
 * Sends the parked wait with the user registers and up to stack_copy_bytes
 * of user stack from the SP (copy_user_stack()). Only as long as what was
 * copied.
 */
static __always_inline void send_with_stack_copy(struct offcpu_counters *c, struct pending_wait *p,
						 __u32 frames, __u64 size,
						 enum offcpu_user_stack kind)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct copy_buf *b;
	__u64 len, total;
	__u32 user_off;

	b = bpf_map_lookup_elem(&copy_bufs, &cpu);
	/* At most 2 * OFFCPU_MAX_STACK_DEPTH: a kernel and a user stack. */
	frames &= 2 * OFFCPU_MAX_STACK_DEPTH + 1;
	if (frames > 2 * OFFCPU_MAX_STACK_DEPTH)
		frames = 2 * OFFCPU_MAX_STACK_DEPTH;
	user_off = OFFCPU_WAIT_HEADER_SIZE + frames * 8;
	if (!b || size > OFFCPU_MAX_STACK_COPY ||
	    bpf_probe_read_kernel(b->bytes, user_off, &p->record)) {
		if (kind == OFFCPU_USTACK_COPIED) {
			count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
			p->record.user_frames = 0;
		}
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	((struct offcpu_wait_record *)b->bytes)->user_stack = kind;
	len = copy_user_stack(b, user_off, size);
	if (!len && kind == OFFCPU_USTACK_COPIED)
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
	total = user_off + COPY_DATA_OFF + len;
	/* Never true (the buffer has a page of slack), but the verifier needs the bound. */
	if (total > sizeof(*b)) {
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	output_wait(c, b, total, p->record.pid, p->record.duration_ns, PREEMPTIBLE);
}

/* The current thread is about to run user code: its stack is as it blocked. */
static __always_inline void send_with_user_stack(void *ctx, struct offcpu_counters *c,
						 struct pending_wait *p)
{
	__u32 kernel_frames = p->record.kernel_frames;
	long n;

	disarm(c, p, PREEMPTIBLE);
	python_send_frames(c, &p->record);
	take_reads(&p->record);
	if (stack_copy_bytes) {
		p->record.user_frames = 0;
		send_with_stack_copy(c, p, kernel_frames, stack_copy_bytes, OFFCPU_USTACK_COPIED);
		return;
	}
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH)
		kernel_frames = OFFCPU_MAX_STACK_DEPTH;
	n = bpf_get_stack(ctx, &p->record.ips[kernel_frames], stack_depth * sizeof(__u64),
			  BPF_F_USER_STACK);
	if (n < 0) {
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
		p->record.user_frames = 0;
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	p->record.user_frames = n / sizeof(__u64);
	p->record.user_stack = OFFCPU_USTACK_TAKEN;
	if (!fix_leaf) {
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	send_with_stack_copy(c, p, kernel_frames + p->record.user_frames, OFFCPU_LEAF_COPY,
			     OFFCPU_USTACK_TAKEN_LEAF);
}

/*
 * The switching-in thread's pending slot, ready for a new record; NULL
 * (counted) when its wait cannot be parked.
 */
static __always_inline struct pending_wait *park_slot(struct offcpu_counters *c,
						      struct task_struct *next)
{
	struct pending_wait *p;
	struct pt_regs *regs;
	__u64 ip, sp;

	p = bpf_task_storage_get(&pending, next, 0, scheduler_get_flags());
	if (!p) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return NULL;
	}
	if (p->flushing) {
		/* Preempted on its way back to user space: see set_flushing(). */
		count(c, OFFCPU_CNT_USTACK_LOST, IN_SWITCH);
		return NULL;
	}
	/*
	 * A wait still parked: the thread blocked again before reaching user
	 * space. If its user registers are unchanged it is still in the same
	 * system call, with the same user stack as the new wait.
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(next);
	ip = PT_REGS_IP_CORE(regs);
	sp = PT_REGS_SP_CORE(regs);
	if (p->user_ip == ip && p->user_sp == sp)
		send_parked(c, p, OFFCPU_USTACK_FROM_NEXT, IN_SWITCH);
	else
		send_parked(c, p, OFFCPU_USTACK_NONE, IN_SWITCH);
	p->user_ip = ip;
	p->user_sp = sp;
	return p;
}

/* Threads whose user stack rseq_update takes; the others' is taken at switch-out. */
static __always_inline bool user_stack_deferred(struct task_struct *t)
{
	return defer_user_stacks && has_rseq(t);
}

/* prev is current: its user registers and memory are its own. */
static __always_inline void take_switch_out_stack(void *ctx, struct task_struct *prev)
{
	struct switch_out_stack *u;
	long n;

	u = bpf_task_storage_get(&switch_out_stacks, prev, 0, scheduler_get_flags());
	if (!u)
		return;
	n = bpf_get_stack(ctx, u->ips, stack_depth * sizeof(__u64), BPF_F_USER_STACK);
	u->frames = n < 0 ? -1 : n / sizeof(__u64);
}

/*
 * add_switch_out_stack() bounds a frame count for the verifier with this
 * mask: unlike a comparison, the compiler cannot move a mask away from the
 * access it guards. It is the bound only if it is all ones.
 */
_Static_assert((OFFCPU_MAX_STACK_DEPTH & (OFFCPU_MAX_STACK_DEPTH + 1)) == 0,
	       "OFFCPU_MAX_STACK_DEPTH is used as a mask: it must be 2^n - 1");

/* Appends the user stack the thread left with to its record. */
static __always_inline void add_switch_out_stack(struct offcpu_counters *c,
						 struct task_struct *next,
						 struct offcpu_wait_record *r)
{
	struct switch_out_stack *u = bpf_task_storage_get(&switch_out_stacks, next, 0, 0);
	__u32 kernel_frames = r->kernel_frames;
	__u32 frames;

	if (!u || u->frames < 0) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return;
	}
	/* At most stack_depth <= OFFCPU_MAX_STACK_DEPTH frames were taken. */
	frames = u->frames & OFFCPU_MAX_STACK_DEPTH;
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH)
		kernel_frames = OFFCPU_MAX_STACK_DEPTH;
	if (bpf_probe_read_kernel(&r->ips[kernel_frames], frames * sizeof(__u64), u->ips)) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return;
	}
	r->user_frames = frames;
	r->user_stack = OFFCPU_USTACK_TAKEN;
	count(c, OFFCPU_CNT_USTACK_AT_OUT, IN_SWITCH);
}

#endif
