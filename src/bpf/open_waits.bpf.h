/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Waits that have not ended, seen by the task iterators tracer.c runs:
 * dated at the start, written out with their stacks at the stop and for
 * offcpu snapshot (whose clock-pair program is here too), counted for
 * serve's gauge. Apart because an iterator runs as offcpu, not as the
 * thread, and reads another task's memory.
 */
#ifndef OFFCPU_OPEN_WAITS_BPF_H
#define OFFCPU_OPEN_WAITS_BPF_H

/*
 * offcpu serve's gauge of the threads off CPU right now, taken
 * at every scrape: no stacks, unlike offcpu_open_waits. Each
 * selected thread whose slot holds a start and that is not on a CPU (a
 * switch-in this kernel never traced leaves a start behind: see
 * unseen_switch_in()) is written out as a struct offcpu_open_wait.
 */
SEC("iter/task")
int offcpu_open_gauge(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_open_wait out = { 0 };
	struct wait_start *slot;

	if (!task)
		return 0;
	slot = bpf_task_storage_get(&inflight, task, 0, 0);
	if (!slot)
		return 0;
	/* Read once, as offcpu_open_waits reads it: a switch-in may clear it meanwhile. */
	out.start_ts_ns = *(volatile __u64 *)&slot->start_ts_ns;
	if (!out.start_ts_ns || BPF_CORE_READ(task, on_cpu))
		return 0;
	out.pid = task->tgid;
	out.tid = task->pid;
	out.state = state_of(slot->prev_state, slot->preempt);
	out.kernel_thread = !!(task->flags & PF_KTHREAD);
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}

/*
 * Waits that have not ended. Two task iterators, run by
 * tracer.c: one at the start dates the waits of the threads already off
 * CPU, so that their end completes them whole; one at the stop (and for
 * offcpu snapshot, or a gauge while recording) reports every selected
 * thread still off CPU with what it has waited so far, its state and both
 * stacks. An iterator runs as offcpu, not as the thread, so the filters
 * are tested on the task (task_selected(t, false)).
 */

/* Set by tracer.c before each run of offcpu_open_waits (enum offcpu_open_mode). */
__u32 open_mode;
/* OFFCPU_OPEN_AT_STOP: when sched_switch was detached, the waits' end. */
__u64 open_stop_ts_ns;

/*
 * The open-wait race: an iterator reads a thread it found off CPU, and the
 * thread may wake and run on another CPU while it does (seen in CI: an open
 * nanosleep's kernel stack without do_nanosleep, its leaf scanned in stack
 * memory the thread was reusing). What a run changes is marked before
 * anything else of the thread is read and compared once its stacks are in:
 *
 *   nvcsw + nivcsw  __schedule() adds one at every switch away from a
 *                   thread (++*switch_count, before context_switch());
 *   on_cpu          set in prepare_task_switch() (prepare_task()) before
 *                   the thread runs, cleared by finish_task() once the
 *                   switch away from it is done, after the count;
 *   its state       a wakeup sets TASK_WAKING, then TASK_RUNNING
 *                   (try_to_wake_up()), before the thread is even queued.
 *
 * A run since the mark shows as on_cpu at the second look, or as a count
 * moved: on_cpu is read first (x86 keeps loads in order; the barriers keep
 * the compiler to it). The count and on_cpu alone still let through about
 * one torn leaf in a hundred snapshots of threads waking every ~150 us
 * beside a system-wide recording (test_open_race.py); with the state, none
 * in 150: a wakeup is seen before the thread can run. Not
 * sched_info.last_arrival: a clock value stamped at switch-ins only, it
 * says nothing of a run still going on, and needs CONFIG_SCHED_INFO.
 * None of it needs a lock.
 */
struct run_mark {
	__u64 switches; /* nvcsw + nivcsw */
	__u32 state;
};

static __always_inline void mark_runs(struct task_struct *t, struct run_mark *m)
{
	m->switches = t->nvcsw + t->nivcsw;
	asm volatile("" ::: "memory");
	m->state = task_state(t);
	asm volatile("" ::: "memory");
}

/* Whether t ran since mark_runs() marked m (t off CPU then, or caught on it by the caller). */
static __always_inline bool ran_since(struct task_struct *t, const struct run_mark *m)
{
	int on_cpu;
	__u32 state;

	asm volatile("" ::: "memory");
	on_cpu = *(volatile int *)&t->on_cpu;
	asm volatile("" ::: "memory");
	state = task_state(t);
	asm volatile("" ::: "memory");
	return on_cpu || state != m->state || t->nvcsw + t->nivcsw != m->switches;
}

/*
 * A blocked thread's state, as its switch-out would have said it: off CPU
 * and runnable (TASK_RUNNING) is preempted, waiting for a CPU.
 */
static __always_inline bool off_cpu_state(struct task_struct *t, __u32 *state, bool *preempt)
{
	if (t->on_cpu || t->exit_state)
		return false;
	*state = task_state(t);
	*preempt = *state == 0;
	return !(*state & TASK_BIT_DEAD) && state_selected(*state, *preempt);
}

/*
 * At the start, after sched_switch is attached. A slot whose start is set
 * already belongs to sched_switch; the compare-and-swap leaves it that
 * way if the thread switched in and out meanwhile (which leaves only its
 * state to a race, for one wait in a blue moon). A thread whose times the
 * kernel does not have (it never ran) stays undated: its end is no_start.
 */
SEC("iter/task")
int offcpu_open_at_start(struct bpf_iter__task *ctx)
{
	struct offcpu_counters *c = counters_get();
	struct task_struct *t = ctx->task;
	struct wait_start *slot;
	struct run_mark mark;
	__u64 start, now;
	__u32 state, tgid;
	bool preempt;

	if (!t || !t->pid || !task_selected(t, false))
		return 0;
	/* Before its state and times are read: see ran_since(). */
	mark_runs(t, &mark);
	if (!off_cpu_state(t, &state, &preempt))
		return 0;
	tgid = t->tgid;
	slot = bpf_task_storage_get(&inflight, t, 0, 0);
	if (slot && slot->start_ts_ns)
		return 0;
	start = departure_ns(t, clock_pair_of(task_cpu_of(t)));
	now = bpf_ktime_get_ns();
	if (!start || (__s64)(now - start) < 0)
		return 0;
	/*
	 * Ran while its times were read (they may be of two runs): it did
	 * so with sched_switch attached, which has its switch-out, or it is
	 * running.
	 */
	if (ran_since(t, &mark))
		return 0;
	if (!slot) {
		slot = new_slot(c, t, PREEMPTIBLE);
		if (!slot)
			return 0;
	}
	slot->prev_state = state;
	slot->preempt = preempt;
	slot->flags = OFFCPU_WAIT_OPEN_BEFORE;
	/* Not seen blocking: what it waits on is not read here. */
	slot_object(slot)->taken = 0;
	slot_object(slot)->kernel_lock.taken = 0;
	/* Made ahead by offcpu_make_slots, it is started here, not at a switch-out. */
	slot->made_ahead = 0;
	if (__sync_val_compare_and_swap(&slot->start_ts_ns, 0, start))
		return 0;
	count(c, OFFCPU_CNT_WAITS_STARTED, PREEMPTIBLE);
	count(c, OFFCPU_CNT_OPEN_AT_START, PREEMPTIBLE);
	/* Its process, for tracer.c to have its maps read (OFFCPU_RECORD_RUNNING). */
	if (!(t->flags & PF_KTHREAD))
		bpf_seq_write(ctx->meta->seq, &tgid, sizeof(tgid));
	return 0;
}

/*
 * offcpu snapshot attaches no sched_switch that records waits: only this,
 * for the moment its CPUs take their clock pairs (tracer.c, pair_clocks()).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_pair_clocks, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;

	keep_clock_pair(prev->pid ? prev : next, &now);
	return 0;
}

/*
 * A seq file's buffer is 8 pages (bpf_seq_read()): a record must fit in
 * it whole, so an open wait's stack copy is at most this long.
 */
#define OPEN_COPY_MAX 24576

/* The open-wait iterator's record; one run at a time (tracer.c), and it sleeps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} open_bufs SEC(".maps");

/* The Python frames of the open wait being written (python_open_frames()). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_python_record);
} open_python SEC(".maps");

/* A wait and its Python frames go in one element's writes, which must fit a seq buffer. */
_Static_assert(2 * sizeof(struct offcpu_open_header) + COPY_USER_OFF + COPY_DATA_OFF +
		       OPEN_COPY_MAX + sizeof(struct offcpu_python_record) <=
		   8 * 4096,
	       "an open wait with its stack copy and Python frames must fit in a seq buffer");

/*
 * Registers and up to size bytes of t's user stack from its SP at
 * b->bytes[user_off], page by page as send_with_stack_copy() copies; the
 * bytes copied. t is off CPU: its memory is read with
 * bpf_copy_from_user_task(), which may fault pages in, hence iter.s.
 */
static __always_inline __u64 copy_task_stack(struct task_struct *t, struct copy_buf *b,
					     __u32 user_off, __u64 size)
{
	struct offcpu_user_copy *u = (void *)&b->bytes[user_off];
	__u64 len = 0, chunk, sp;
	int i;

	task_user_regs(t, u->regs);
	sp = u->regs[7];
	chunk = COPY_PAGE - (sp & (COPY_PAGE - 1));
	for (i = 0; i < OPEN_COPY_MAX / COPY_PAGE + 1; i++) {
		if (len + chunk > size)
			chunk = size - len;
		if (chunk == 0 || chunk > COPY_PAGE)
			break;
		if (bpf_copy_from_user_task(
			&b->bytes[user_off + COPY_DATA_OFF + (len & (OFFCPU_MAX_STACK_COPY - 1))],
			chunk, (void *)(sp + len), t, 0))
			break;
		len += chunk;
		chunk = COPY_PAGE;
	}
	u->size = len;
	return len;
}

/*
 * fp mode: the frame-pointer walk the kernel does for the current task
 * (perf_callchain_user: the IP, then each frame's return address), over
 * t's memory; then OFFCPU_LEAF_COPY bytes at the SP as fp mode sends them.
 * The record's length.
 */
static __always_inline __u32 walk_task_frames(struct task_struct *t, struct copy_buf *b,
					      __u32 kernel_frames)
{
	struct offcpu_wait_record *r = (void *)b->bytes;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 frame[2], bp, len;
	__u32 n = 1, idx, user_off;
	int i;

	kernel_frames &= OFFCPU_MAX_STACK_DEPTH;
	r->ips[kernel_frames] = BPF_CORE_READ(regs, ip);
	bp = BPF_CORE_READ(regs, bp);
	for (i = 1; i < OFFCPU_MAX_STACK_DEPTH && i < stack_depth; i++) {
		if (!bp || bpf_copy_from_user_task(frame, sizeof(frame), (void *)bp, t, 0) ||
		    !frame[1])
			break;
		idx = kernel_frames + n;
		if (idx >= 2 * OFFCPU_MAX_STACK_DEPTH)
			break;
		r->ips[idx] = frame[1];
		n++;
		if (frame[0] <= bp)
			break;
		bp = frame[0];
	}
	r->user_frames = n;
	r->user_stack = fix_leaf ? OFFCPU_USTACK_TAKEN_LEAF : OFFCPU_USTACK_TAKEN;
	user_off =
	    OFFCPU_WAIT_HEADER_SIZE + ((kernel_frames + n) & (2 * OFFCPU_MAX_STACK_DEPTH + 1)) * 8;
	if (!fix_leaf || user_off > OFFCPU_WAIT_HEADER_SIZE + 2 * OFFCPU_MAX_STACK_DEPTH * 8)
		return OFFCPU_WAIT_HEADER_SIZE + (kernel_frames + n) * 8;
	len = copy_task_stack(t, b, user_off, OFFCPU_LEAF_COPY);
	return user_off + COPY_DATA_OFF + len;
}

/* The stacks of t's open wait into its record at b; the record's length. */
static __always_inline __u64 wait_stacks_into(struct task_struct *t, struct copy_buf *b)
{
	struct offcpu_wait_record *r = (void *)b->bytes;
	__u32 kernel_frames = 0, user_off;
	__u64 size = stack_copy_bytes;

	/* As at a switch-in, with the __sched frames put back; not counted: preemptible. */
	if (want_kernel_stack)
		take_kernel_stack(NULL, r, t, &open_leaf_scans);
	kernel_frames = r->kernel_frames & OFFCPU_MAX_STACK_DEPTH;
	r->kernel_frames = kernel_frames;
	if (!want_user_stack || (t->flags & PF_KTHREAD) || !t->mm)
		return OFFCPU_WAIT_HEADER_SIZE + kernel_frames * 8;
	if (!stack_copy_bytes)
		return walk_task_frames(t, b, kernel_frames);
	if (size > OPEN_COPY_MAX)
		size = OPEN_COPY_MAX;
	user_off = OFFCPU_WAIT_HEADER_SIZE + kernel_frames * 8;
	r->user_stack = OFFCPU_USTACK_COPIED;
	return user_off + COPY_DATA_OFF + copy_task_stack(t, b, user_off, size);
}

/*
 * wait_stacks_into() as a global function, verified apart: the iterator's
 * stack beside the Python walk's (python_open_frames()) would pass the
 * verifier's 512 bytes. 64 bits: the verifier takes a global function's
 * result as such, and a __u32 is bounded on a copy the call does not get.
 */
__noinline __u64 open_wait_stacks(struct task_struct *t __arg_trusted, struct copy_buf *b)
{
	/* A global function's pointers may be NULL, to the verifier. */
	return b ? wait_stacks_into(t, b) : 0;
}

/*
 * One open wait per selected thread off CPU; its start from its slot
 * (exact, or dated at the start), else from the kernel's times. At the
 * stop, a slot whose thread ran since its start is no open wait: the
 * switch-in was hidden (recovered here, as at a switch-out) or came after
 * sched_switch was detached (open at the stop, its stacks gone). Every
 * selected wait is written, one the filter drops without its stacks:
 * tracer.c judges and counts them, since a record the seq file had no
 * room for is written again by the next read.
 */
static __always_inline int open_waits(struct bpf_iter__task *ctx, bool enriched)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct offcpu_open_header h = {};
	struct offcpu_python_record *py;
	struct offcpu_wait_record *r;
	const struct clock_pair *pair;
	struct wait_start *slot;
	struct copy_buf *b;
	__u64 start = 0, end, arrival;
	struct run_mark mark;
	__u32 state, flags, zero = 0;
	__u64 total;
	bool preempt, stacks = true, from_slot;
	__u32 py_frames = 0;
	__u64 py_first;

	if (!t || !t->pid || !task_selected(t, false))
		return 0;
	/* Before anything of t is read: see ran_since(). */
	mark_runs(t, &mark);
	end = open_mode == OFFCPU_OPEN_AT_STOP ? open_stop_ts_ns : bpf_ktime_get_ns();
	pair = clock_pair_of(task_cpu_of(t));
	slot = bpf_task_storage_get(&inflight, t, 0, 0);
	/*
	 * Read once: a switch-in (or, at the stop, the exit program's
	 * unseen_switch_in()) may clear it meanwhile, and a start read 0
	 * the second time made a wait as long as the uptime.
	 */
	if (slot)
		start = *(volatile __u64 *)&slot->start_ts_ns;
	from_slot = start != 0;
	if (start) {
		state = slot->prev_state;
		preempt = slot->preempt;
		flags = slot->flags | OFFCPU_WAIT_OPEN_AFTER;
		arrival = arrival_ns(t, pair);
		if (arrival && (__s64)(arrival - start) > 0) {
			if (open_mode != OFFCPU_OPEN_AT_STOP)
				return 0;
			stacks = false;
			if ((__s64)(end - arrival) >= 0) {
				end = arrival;
				flags = slot->flags | OFFCPU_WAIT_RECOVERED;
			}
		} else if (t->on_cpu) {
			return 0;
		}
	} else {
		if (!off_cpu_state(t, &state, &preempt))
			return 0;
		start = departure_ns(t, pair);
		if (!start || (__s64)(end - start) < 0)
			return 0;
		flags = OFFCPU_WAIT_OPEN_AFTER;
		if (open_mode == OFFCPU_OPEN_AT_STOP) {
			/* Began while tracing, unrecorded (the table was full): not dated here. */
			if ((__s64)(start - recording_start_ns) >= 0)
				return 0;
			flags |= OFFCPU_WAIT_OPEN_BEFORE;
		}
	}
	b = bpf_map_lookup_elem(&open_bufs, &zero);
	py = bpf_map_lookup_elem(&open_python, &zero);
	if (!b || !py)
		return 0;
	r = (void *)b->bytes;
	/* The buffer is reused: fill_times_only() zeroes what an open wait does not know. */
	fill_times_only(r, t, task_cpu_of(t), end, end - start, state_of(state, preempt), flags);
	/* A wait begun at a traced switch-out has what it waits on from there: what is stuck on
	 * what. */
	if (slot && from_slot)
		r->object = *slot_object(slot);
	total = OFFCPU_WAIT_HEADER_SIZE;
	/* Judged as tracer.c judges the record: a wait it drops goes without stacks. */
	if (stacks && !(offcpu_filter__judge(&duration_filter, r->duration_ns, r->tid, start, flags) &
			OFFCPU_VERDICT_DROPPED)) {
		total = enriched ? open_wait_stacks(t, b) : wait_stacks_into(t, b);
		/*
		 * Its Python frames and a rule pack's values, read while it
		 * waits as its stacks are: an open wait still holds what it
		 * blocked under (a PostgreSQL wait event), as rseq_update
		 * finds it when the wait ends.
		 */
		if (enriched && !(t->flags & PF_KTHREAD)) {
			py_first = want_user_stack ? python_open_first(t, r) : 0;
			if (py_first)
				py_frames = python_open_frames(t, py, r, py_first);
			take_open_reads(t, r);
			take_open_object(t, r);
		}
		/*
		 * It ran while its stacks were read: they may be of its run,
		 * or of memory it was rewriting. The wait goes without them,
		 * flagged for tracer.c to count (open_wait_stacks_raced): it
		 * was open when it was dated, so its duration and state stand.
		 */
		if (ran_since(t, &mark)) {
			r->kernel_frames = 0;
			r->user_frames = 0;
			r->user_stack = OFFCPU_USTACK_NONE;
			r->flags &= ~(OFFCPU_WAIT_LEAF_MISSED | OFFCPU_WAIT_PYTHON_FAILED);
			r->flags |= OFFCPU_WAIT_STACKS_RACED;
			total = OFFCPU_WAIT_HEADER_SIZE;
			py_frames = 0;
			r->read_mask = 0;
			/* Read now, it may be of its run; one from its switch-out stands. */
			if (!from_slot)
				r->object.taken = 0;
			r->object.file.taken = 0;
		}
	}
	if (total > sizeof(b->bytes))
		return 0;
	if (py_frames)
		python_open_write(seq, py);
	h.size = total;
	bpf_seq_write(seq, &h, sizeof(h));
	bpf_seq_write(seq, b->bytes, total);
	return 0;
}

/*
 * With the open waits' Python frames and a rule pack's values: global
 * functions whose task pointer the verifier trusts (arg:trusted) from
 * kernel 6.8 on. tracer.c loads one of the two.
 */
SEC("iter.s/task")
int offcpu_open_waits(struct bpf_iter__task *ctx)
{
	return open_waits(ctx, true);
}

/* Before 6.8: the stacks only, in one function (Debian 12's 6.1 rejects the one above). */
SEC("iter.s/task")
int offcpu_open_waits_plain(struct bpf_iter__task *ctx)
{
	return open_waits(ctx, false);
}

#endif
