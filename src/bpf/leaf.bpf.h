/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel leaf: the __sched frames bpf_get_task_stack() drops, found
 * again in a blocked task's stack memory by decoding x86-64 calls and
 * jumps (kernel_leaf()). Apart because nothing else reads instructions;
 * take_kernel_stack() in offcpu.bpf.c puts the frames back.
 */
#ifndef OFFCPU_LEAF_BPF_H
#define OFFCPU_LEAF_BPF_H

/*
 * The kernel leaf. bpf_get_task_stack() of a task that is
 * not running walks it with stack_trace_save_tsk(), which drops every return
 * address in .sched.text (kernel/stacktrace.c,
 * stack_trace_consume_entry_nosched): do_nanosleep,
 * schedule_hrtimeout_range_clock, schedule_timeout, mutex_lock... are
 * __sched, so the caller that decided to sleep was lost. They are found
 * again, for the waits that passed only, in the blocked task's own stack
 * memory: see kernel_leaf(). Walking prev's stack at every selected
 * switch-out instead (bpf_get_stack, 16 frames; prev is current, so nothing
 * is dropped) cost 1890 ns a switch against 305 without it (bench/run, -m 1ms).
 */
#define LEAF_WORDS 128	       /* of the blocked task's stack read from its saved SP */
#define LEAF_MAX_FRAMES 8      /* __sched frames put back, __schedule included */
#define LEAF_FUNCTION_MAX 8192 /* bytes from a function's start to a return address in it */
/*
 * x86-64's THREAD_SIZE (PAGE_SIZE << THREAD_SIZE_ORDER, 2 without KASAN):
 * no BTF has it. A larger stack only means a shorter read than could be.
 */
#define KERNEL_STACK_SIZE 16384
#define X86_CALL_REL32 0xe8
extern const void __sched_text_start __ksym __weak;
extern const void __sched_text_end __ksym __weak;
struct leaf_scan {
	__u64 words[LEAF_WORDS];
	__u64 frames[LEAF_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leaf_scan);
} leaf_scans SEC(".maps");

/*
 * The open-wait iterator's own: it is sleepable, so preemptible, and the
 * sched_switch program that runs on its CPU meanwhile took the same
 * per-CPU leaf_scans for the thread it switched in, rewriting the words
 * the iterator was scanning. The leaf went missing for about one
 * nanosleep wait in twelve of test_open_race's snapshots, stacks intact
 * otherwise (hrtimer_nanosleep first, do_nanosleep not put back).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leaf_scan);
} open_leaf_scans SEC(".maps");

static __always_inline bool in_sched_text(__u64 ip)
{
	return ip >= (__u64)&__sched_text_start && ip < (__u64)&__sched_text_end;
}

/*
 * x86-64's call and jmp encodings and its saved frame
 * (struct inactive_task_frame); elsewhere the kernel stack stays as
 * bpf_get_task_stack gives it.
 */
#if defined(__TARGET_ARCH_x86)
/* The target of the direct call that returns to ip, or 0 if the call is none. */
static __always_inline __u64 call_target(__u64 ip)
{
	__u8 call[5];
	__s32 rel;

	if (bpf_probe_read_kernel(call, sizeof(call), (void *)(ip - sizeof(call))) ||
	    call[0] != X86_CALL_REL32)
		return 0;
	__builtin_memcpy(&rel, &call[1], sizeof(rel));
	return ip + (__s64)rel;
}

#define X86_JMP_REL32 0xe9
#define LEAF_WRAPPER_BYTES 16

/*
 * Where a wrapper ending in a tail call jumps (schedule_hrtimeout_range ->
 * schedule_hrtimeout_range_clock: the caller's call names the wrapper, the
 * return address is in the function it jumps to): a jmp rel32 in its first
 * LEAF_WRAPPER_BYTES that lands in .sched.text, else 0. Looked at only
 * when no return address into fn was found (a byte that only looks like a
 * jmp in a function that called on would name a wrong function).
 */
static __always_inline __u64 tail_target(__u64 fn)
{
	__u8 code[LEAF_WRAPPER_BYTES];
	__s32 rel;
	__u32 i;

	if (bpf_probe_read_kernel(code, sizeof(code), (void *)fn))
		return 0;
	for (i = 0; i + 5 <= LEAF_WRAPPER_BYTES; i++) {
		if (code[i] != X86_JMP_REL32)
			continue;
		__builtin_memcpy(&rel, &code[(i + 1) & (LEAF_WRAPPER_BYTES - 1)], sizeof(rel));
		if (in_sched_text(fn + i + 5 + (__s64)rel))
			return fn + i + 5 + (__s64)rel;
	}
	return 0;
}

/* kernel_leaf()'s walk, in bpf_loop callbacks (the verifier sees each once). */
struct leaf_walk {
	struct leaf_scan *l;
	__u64 first;	 /* the task's first frame outside .sched.text */
	__u64 saved;	 /* the saved frame's return into __schedule */
	__u64 fn;	 /* the function whose return address is looked for */
	__u32 slot;	 /* of the last return address found */
	__u32 nr;	 /* return addresses found */
	__u32 words;	 /* of l->words read */
	__u32 step_slot; /* where the look for fn began */
	bool retried;	 /* fn replaced by where it tail-calls */
	bool done;
};

#define LEAF_FRAME_WORDS (sizeof(struct inactive_task_frame) / sizeof(__u64))

static bool returns_into(__u64 ip, __u64 fn)
{
	return ip > fn && ip - fn < LEAF_FUNCTION_MAX;
}

static long find_first(__u32 i, void *ctx)
{
	struct leaf_walk *w = ctx;

	if (i >= w->words)
		return 1;
	if (i < LEAF_FRAME_WORDS || w->l->words[i & (LEAF_WORDS - 1)] != w->first)
		return 0;
	w->slot = i;
	return 1;
}

/* One pass down the stack: each function's return address lies below its caller's. */
static long walk_down(__u32 k, void *ctx)
{
	struct leaf_walk *w = ctx;
	__u32 i = w->slot - 1;
	__u64 word;

	if (!in_sched_text(w->fn) || w->nr >= LEAF_MAX_FRAMES - 1)
		return 1;
	if (returns_into(w->saved, w->fn)) {
		w->done = true;
		return 1;
	}
	/* slot is at least LEAF_FRAME_WORDS: i does not wrap; the mask below bounds it. */
	if (i < LEAF_FRAME_WORDS) {
		/* Nothing returns into fn: once per step, where fn tail-calls. */
		if (w->retried)
			return 1;
		w->retried = true;
		w->fn = tail_target(w->fn);
		w->slot = w->step_slot;
		return 0;
	}
	w->slot = i;
	word = w->l->words[i & (LEAF_WORDS - 1)];
	if (returns_into(word, w->fn)) {
		w->l->frames[(LEAF_MAX_FRAMES - 2 - w->nr) & (LEAF_MAX_FRAMES - 1)] = word;
		w->nr++;
		w->fn = call_target(word);
		w->step_slot = i;
		w->retried = false;
	}
	return 0;
}

/*
 * The __sched frames between the blocked task's saved
 * frame and first, its first frame outside .sched.text (what
 * bpf_get_task_stack gives first), at the end of l->frames, leaf first;
 * their number, 0 if not found. From first's slot down the stack: the call
 * before first named the function that called on (do_nanosleep), so the
 * highest word below that slot that returns into it (within
 * LEAF_FUNCTION_MAX of its start) is its return address; its own call names
 * the next (schedule), until the function is the one the saved frame
 * returns into (__schedule). Every step must be a direct call into
 * .sched.text; anything else (an indirect call, a function not found) gives
 * up: the stack stays as bpf_get_task_stack gave it.
 */
static __always_inline __u32 kernel_leaf(struct task_struct *next, __u64 first, struct leaf_scan *l)
{
	struct leaf_walk w = { .l = l, .first = first };
	__u64 sp = BPF_CORE_READ(next, thread.sp);
	__u64 top = (__u64)BPF_CORE_READ(next, stack) + KERNEL_STACK_SIZE;
	__u32 len = sizeof(l->words);

	/* Never past the stack's top (a guard page may follow): the read would fail whole. */
	if (!sp || sp >= top)
		return 0;
	if (top - sp < len)
		len = top - sp;
	if (len < 8 * (LEAF_FRAME_WORDS + 1) || bpf_probe_read_kernel(l->words, len, (void *)sp))
		return 0;
	w.words = len / 8;
	w.saved = l->words[bpf_core_field_offset(struct inactive_task_frame, ret_addr) / 8 &
			   (LEAF_WORDS - 1)];
	bpf_loop(LEAF_WORDS, find_first, &w, 0);
	if (!w.slot)
		return 0;
	w.fn = call_target(first);
	w.step_slot = w.slot;
	/* Each word once, and once more per step that looks where fn tail-calls. */
	bpf_loop(LEAF_WORDS * 2, walk_down, &w, 0);
	if (!w.done)
		return 0;
	l->frames[(LEAF_MAX_FRAMES - 2 - w.nr) & (LEAF_MAX_FRAMES - 1)] = w.saved;
	return w.nr + 1;
}
#else
static __always_inline __u32 kernel_leaf(struct task_struct *next, __u64 first, struct leaf_scan *l)
{
	return 0;
}
#endif

#endif
