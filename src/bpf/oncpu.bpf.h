/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -F HZ: the on-CPU sampler. A software clock event per CPU
 * (PERF_COUNT_SW_CPU_CLOCK, a period of sample_period_ns) runs this
 * program on the thread it interrupted, which is current: its kernel stack
 * where it was interrupted, its user stack from the registers it entered
 * the kernel with, as a wait's (frame pointers in fp mode, a copy for user
 * space to unwind in dwarf mode), its Python frames and the rule packs'
 * reads. Each sample
 * stands for sample_period_ns of CPU time.
 *
 * It runs in hard-interrupt context (perf_swevent_hrtimer), so it may
 * interrupt rseq_update, the exit and exec programs and the iterators in
 * the middle of a stack copy: it builds its records in buffers of its own.
 * Nothing interrupts it in turn, and the perf event's overflow handler
 * never runs it twice at once on a CPU (bpf_prog_active); sched_switch and
 * sched_waking run with interrupts off: plain adds to its counters, as
 * sched_switch's.
 */
#ifndef OFFCPU_ONCPU_BPF_H
#define OFFCPU_ONCPU_BPF_H

/* Nanoseconds between two samples of a CPU: 1e9 / -F. */
const volatile __u64 sample_period_ns;

/* The sampler's record and stack copy, one per CPU (tracer__new sizes it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} sample_bufs SEC(".maps");

/* The sampled thread's user stack after its kfr kernel frames, as waits take theirs. */
static __always_inline __u64 sample_user_stack(struct bpf_perf_event_data *ctx,
					       struct offcpu_counters *c, struct copy_buf *b,
					       __u32 kfr)
{
	struct offcpu_wait_record *r = (void *)b->bytes;
	__u32 user_off;
	long n;

	kfr &= OFFCPU_MAX_STACK_DEPTH;
	if (stack_copy_bytes) {
		r->user_stack = OFFCPU_USTACK_COPIED;
		user_off = OFFCPU_WAIT_HEADER_SIZE + kfr * 8;
		if (!copy_user_stack(b, user_off, stack_copy_bytes))
			count(c, OFFCPU_CNT_ONCPU_STACK_FAIL, IN_SWITCH);
		return user_off + COPY_DATA_OFF + ((struct offcpu_user_copy *)&b->bytes[user_off])->size;
	}
	/* The registers it entered the kernel with, whether it was in user space or not. */
	n = bpf_get_stack(ctx, &r->ips[kfr], stack_depth * sizeof(__u64), BPF_F_USER_STACK);
	if (n < 0) {
		count(c, OFFCPU_CNT_ONCPU_STACK_FAIL, IN_SWITCH);
		return OFFCPU_WAIT_HEADER_SIZE + kfr * 8;
	}
	r->user_frames = n / sizeof(__u64);
	r->user_stack = OFFCPU_USTACK_TAKEN;
	if (!fix_leaf)
		return OFFCPU_WAIT_HEADER_SIZE + (kfr + r->user_frames) * 8;
	/* A leaf without frame pointers, interrupted anywhere in it: its CFI finds the caller. */
	r->user_stack = OFFCPU_USTACK_TAKEN_LEAF;
	user_off = OFFCPU_WAIT_HEADER_SIZE + ((kfr + r->user_frames) & (2 * OFFCPU_MAX_STACK_DEPTH + 1)) * 8;
	if (user_off > COPY_USER_OFF)
		user_off = COPY_USER_OFF;
	copy_user_stack(b, user_off, OFFCPU_LEAF_COPY);
	return user_off + COPY_DATA_OFF + ((struct offcpu_user_copy *)&b->bytes[user_off])->size;
}

/*
 * The sampled thread's Python frames, in their record right before its
 * sample's, as before a wait's. Not while the sample interrupted
 * rseq_update sending the thread's wait (set_flushing()): that wait's
 * Python record went first, and a second one between it and its wait
 * would take its place.
 */
static __always_inline void sample_python(struct offcpu_counters *c, struct task_struct *t,
					  const struct offcpu_wait_record *r)
{
	__u32 pid = r->pid;
	struct pending_wait *p;

	if (!bpf_map_lookup_elem(&python_procs, &pid))
		return;
	p = bpf_task_storage_get(&pending, t, 0, 0);
	if (p && p->flushing) {
		count(c, OFFCPU_CNT_PY_FAIL, IN_SWITCH);
		return;
	}
	python_send_frames(c, r);
}

SEC("perf_event")
int offcpu_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct offcpu_counters *c = counters_get();
	__u32 cpu = bpf_get_smp_processor_id();
	struct offcpu_wait_record *r;
	struct copy_buf *b;
	__u64 size, flags = BPF_RB_NO_WAKEUP;
	long n;

	/* TID 0 is the per-CPU idle task: the CPU was idle. */
	if (!t->pid) {
		count(c, OFFCPU_CNT_ONCPU_IDLE, IN_SWITCH);
		return 0;
	}
	if (!task_selected(t, true)) {
		count(c, OFFCPU_CNT_ONCPU_FILTERED, IN_SWITCH);
		return 0;
	}
	b = bpf_map_lookup_elem(&sample_bufs, &cpu);
	if (!b)
		return 0;
	r = (void *)b->bytes;
	__builtin_memset(r, 0, OFFCPU_WAIT_HEADER_SIZE);
	r->type = OFFCPU_RECORD_ONCPU;
	r->pid = t->tgid;
	r->tid = t->pid;
	r->cpu = cpu;
	r->end_ts_ns = bpf_ktime_get_ns();
	r->duration_ns = sample_period_ns;
	r->state = OFFCPU_STATE_RUNNING;
	r->user_stack = OFFCPU_USTACK_NONE;
	r->stack_depth = stack_depth;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
	r->cgroup_id = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
	if (want_kernel_stack) {
		/* Where it was interrupted; nothing when that was user space. */
		n = bpf_get_stack(ctx, r->ips, stack_depth * sizeof(__u64), 0);
		if (n < 0)
			count(c, OFFCPU_CNT_ONCPU_STACK_FAIL, IN_SWITCH);
		else
			r->kernel_frames = n / sizeof(__u64);
	}
	size = OFFCPU_WAIT_HEADER_SIZE + r->kernel_frames * 8;
	if (want_user_stack && !(t->flags & PF_KTHREAD)) {
		take_reads(r);
		sample_python(c, t, r);
		size = sample_user_stack(ctx, c, b, r->kernel_frames);
	}
	/* Never true (the buffer has a page of slack), but the verifier needs the bound. */
	if (size > sizeof(*b))
		return 0;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKEUP_BYTES)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, b, size, flags)) {
		count(c, OFFCPU_CNT_ONCPU_DROPPED, IN_SWITCH);
		add(c, OFFCPU_CNT_ONCPU_DROPPED_NS, sample_period_ns, IN_SWITCH);
	} else {
		count(c, OFFCPU_CNT_ONCPU_SAMPLES, IN_SWITCH);
	}
	return 0;
}

#endif
