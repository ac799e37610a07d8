/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python frames of a wait, read from the waiting thread's
 * own memory at rseq_update, where its frames are still those of the wait.
 * Only processes user space put in python_procs (it found CPython in them
 * and wrote their version's layout) pay for it, and only for waits that
 * passed the filters and bounds. A thread without rseq never passes
 * rseq_update: its frames are walked at each of its switch-outs instead,
 * by itself, as its user stack is (python_take_at_switch_out), and sent at
 * its switch-in if its wait is (python_send_switch_out). The open-wait
 * iterator walks a blocked thread's in its memory (python_open_frames).
 * Included by offcpu.bpf.c after its counters, ring buffer and
 * read_user(): it shares nothing else with it.
 *
 * The walk: the thread's PyThreadState (cached per thread, found again in
 * the interpreter's list by its thread ID when the cached one no longer
 * names it), its current frame, then ->previous, OFFCPU_PY_MAX_FRAMES at
 * most (counted when cut). What is sent is raw: code object pointers and
 * instruction pointers (or f_lasti), named in user space, which reads the
 * code objects from /proc/PID/mem.
 */
#ifndef OFFCPU_PYTHON_BPF_H
#define OFFCPU_PYTHON_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offcpu_python_layout);
} python_procs SEC(".maps");

/*
 * A thread's PyThreadState, so the list is walked once per thread, not per
 * wait; and the hash of the last chain it sent: a thread that blocks again
 * where it did sends no code object not seen before, and its frames are
 * not looked up one by one in python_code_seen.
 */
struct python_thread {
	__u64 tstate;
	__u64 last_chain;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct python_thread);
} python_threads SEC(".maps");

/*
 * Code objects already sent, per process, by address and identity. A
 * record naming one not in here wakes the reader at once: it reads code
 * objects when their record comes, and a process that exits soon after
 * its wait would be gone by the next poll, a code object freed and
 * another allocated there unnamed. Frames seen before wait for the poll,
 * like every record.
 */
struct python_code_key {
	__u64 code;
	__u64 names;
	__u32 pid;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct python_code_key);
	__type(value, __u8);
} python_code_seen SEC(".maps");

/* 0 when it cannot be read (*fault set: a page not present, say) or holds 0. */
static __always_inline __u64 python_read_u64(__u64 addr, bool *fault, struct task_struct *task)
{
	__u64 v = 0;

	if (read_user(&v, sizeof(v), addr, task)) {
		*fault = true;
		return 0;
	}
	return v;
}

/* What a PyThreadState's thread ID field holds for the current thread. */
static __always_inline __u64 python_thread_id(const struct offcpu_python_layout *l,
					      struct task_struct *t)
{
	/* glibc's pthread_self() is the thread pointer: x86-64's fs base. */
	if (l->thread_id_is_pthread)
		return BPF_CORE_READ(t, thread.fsbase);
	return (__u32)t->pid;
}

/* task: NULL when t is current, else t (read_user()). */
static __always_inline __u64 python_tstate(const struct offcpu_python_layout *l,
					   struct task_struct *t, struct python_thread **out,
					   bool *fault, struct task_struct *task)
{
	struct python_thread *pt;
	__u64 want = python_thread_id(l, t), ts, interp;
	bool stale = false; /* a cached thread state freed is no fault: the list has the new one */
	/*
	 * Nor is a _PyRuntime gone: its image is (an exec's new one is mapped
	 * before the exec program drops the layout: a vfork child of
	 * subprocess.run walked there, one wait in 20).
	 */
	bool gone = false;
	int i;

	pt = bpf_task_storage_get(&python_threads, t, 0, scheduler_get_flags());
	*out = pt;
	if (pt && pt->tstate &&
	    python_read_u64(pt->tstate + l->tstate_thread_id, &stale, task) == want)
		return pt->tstate;
	interp = python_read_u64(l->runtime + l->runtime_interp_head, &gone, task);
	if (!interp)
		return 0;
	ts = python_read_u64(interp + l->interp_threads_head, fault, task);
	for (i = 0; i < OFFCPU_PY_MAX_THREADS && ts; i++) {
		if (python_read_u64(ts + l->tstate_thread_id, fault, task) == want) {
			if (pt)
				pt->tstate = ts;
			return ts;
		}
		ts = python_read_u64(ts + l->tstate_next, fault, task);
	}
	return 0;
}

/*
 * A frame's fields are read in one copy of this many bytes from the
 * lowest of their offsets (they span 48 to 84 bytes in 3.9 to 3.13):
 * measured with bpf_stats, a read per field cost 560 ns a frame.
 */
#define PY_FRAME_BLOCK 128

struct python_walk {
	const struct offcpu_python_layout *l;
	struct offcpu_python_record *r;
	struct task_struct *task; /* python_step_task's: the thread walked */
	__u64 frame;
	__u64 chain; /* the frames' code objects and identities, hashed */
	__u32 n;
	__u16 block; /* the lowest offset of a field read */
	bool new_code;
	bool fault; /* a field could not be read: the chain may be cut or wrong */
	__u8 buf[PY_FRAME_BLOCK];
};

/* Field off (bytes into the frame) of the block read; false: outside it. */
static __always_inline bool block_field(struct python_walk *w, __u16 off, void *out, __u32 len)
{
	__u32 rel = (__u32)(off - w->block);

	if (off < w->block || rel > PY_FRAME_BLOCK - 8)
		return false;
	rel &= PY_FRAME_BLOCK - 1;
	if (rel > PY_FRAME_BLOCK - 8)
		return false;
	if (len == 8)
		*(__u64 *)out = *(__u64 *)&w->buf[rel];
	else if (len == 4)
		*(__u32 *)out = *(__u32 *)&w->buf[rel];
	else
		*(__u8 *)out = w->buf[rel];
	return true;
}

static __always_inline void frame_field(struct python_walk *w, __u64 frame, __u16 off, void *out,
					__u32 len, struct task_struct *task)
{
	if (!block_field(w, off, out, len) && read_user(out, len, frame + off, task)) {
		__builtin_memset(out, 0, len);
		w->fault = true;
	}
}

/* One frame of the chain, read from task's memory (NULL: the current thread's). */
static __always_inline long python_step_in(struct python_walk *w, struct task_struct *task)
{
	const struct offcpu_python_layout *l = w->l;
	struct offcpu_python_frame *f;
	__u8 owner = 0, entry = 0;
	__u32 lasti = 0;
	__u64 frame = w->frame;

	if (!frame)
		return 1;
	/* Near the end of its mapping the block may not be readable: field by field then. */
	if (read_user(w->buf, sizeof(w->buf), frame + w->block, task))
		w->block = OFFCPU_PY_NONE;
	if (l->frame_owner != OFFCPU_PY_NONE)
		frame_field(w, frame, l->frame_owner, &owner, 1, task);
	frame_field(w, frame, l->frame_previous, &w->frame, 8, task);
	if (owner == OFFCPU_PY_OWNED_BY_CSTACK) {
		/* An entry shim (3.12+): the frames after it run in the C call that pushed it. */
		if (w->n)
			w->r->c_call_ends |= 1ULL << ((w->n - 1) & 63);
		return 0;
	}
	if (w->n >= OFFCPU_PY_MAX_FRAMES) {
		w->r->cut_short = 1;
		return 1;
	}
	f = &w->r->frame[w->n & (OFFCPU_PY_MAX_FRAMES - 1)];
	frame_field(w, frame, l->frame_code, &f->code, 8, task);
	if (l->instr_is_int) {
		frame_field(w, frame, l->frame_instr, &lasti, 4, task);
		f->instr = lasti;
	} else {
		frame_field(w, frame, l->frame_instr, &f->instr, 8, task);
	}
	if (l->code_names != OFFCPU_PY_NONE && f->code) {
		__u64 names[4] = {};

		read_user(names, sizeof(names), f->code + l->code_names, task);
		if (l->code_names_words == 4)
			f->names = offcpu_python_names(names[0], names[1], names[2], names[3]);
		else
			f->names = offcpu_python_names(names[0], names[1], names[2], 0);
	} else {
		f->names = 0;
	}
	if (l->frame_per_c_call) {
		w->r->c_call_ends |= 1ULL << (w->n & 63);
	} else if (l->frame_is_entry != OFFCPU_PY_NONE) {
		frame_field(w, frame, l->frame_is_entry, &entry, 1, task);
		if (entry)
			w->r->c_call_ends |= 1ULL << (w->n & 63);
	}
	w->chain = offcpu_python_names(w->chain, f->code, f->names, w->n);
	w->n++;
	return 0;
}

/* bpf_loop's callbacks (the verifier sees each once): the current thread's frames... */
static long python_step(__u32 index, void *ctx)
{
	return python_step_in(ctx, NULL);
}

/* ...and a blocked thread's, for the sleepable open-wait iterator only. */
static long python_step_task(__u32 index, void *ctx)
{
	struct python_walk *w = ctx;

	return python_step_in(w, w->task);
}

/* Marks frame index's code object seen; w->new_code when it was not. */
static long python_mark_seen(__u32 index, void *ctx)
{
	struct python_walk *w = ctx;
	struct python_code_key key = {};
	struct offcpu_python_frame *f;
	__u8 one = 1;

	if (index >= w->n)
		return 1;
	f = &w->r->frame[index & (OFFCPU_PY_MAX_FRAMES - 1)];
	key.code = f->code;
	key.names = f->names;
	key.pid = w->r->pid;
	if (!bpf_map_lookup_elem(&python_code_seen, &key)) {
		bpf_map_update_elem(&python_code_seen, &key, &one, BPF_ANY);
		w->new_code = true;
	}
	return 0;
}

static __always_inline __u16 lowest(__u16 a, __u16 b)
{
	return b != OFFCPU_PY_NONE && b < a ? b : a;
}

_Static_assert((OFFCPU_PY_MAX_FRAMES & (OFFCPU_PY_MAX_FRAMES - 1)) == 0,
	       "OFFCPU_PY_MAX_FRAMES is used as a mask: it must be a power of 2");

/*
 * The current thread t's innermost Python frame, 0 if it runs no Python
 * code; *pt its cache (or NULL), *fault set when a read failed.
 */
static __always_inline __u64 python_first_frame(const struct offcpu_python_layout *l,
						struct task_struct *t, struct python_thread **pt,
						bool *fault, struct task_struct *task)
{
	__u64 ts, frame;

	ts = python_tstate(l, t, pt, fault, task);
	if (!ts)
		return 0;
	frame = python_read_u64(ts + l->tstate_frame, fault, task);
	if (frame && l->cframe_current_frame != OFFCPU_PY_NONE)
		frame = python_read_u64(frame + l->cframe_current_frame, fault, task);
	return frame;
}

/*
 * The walk every path shares: the chain from frame into walk->r, whose
 * type, pid, tid and end_ts_ns the caller writes; in task's memory (NULL:
 * the current thread's). A chain cut short is counted in c unless c is
 * NULL (the iterator: user space counts its records).
 */
static __always_inline void python_walk_frames(struct offcpu_counters *c, struct python_walk *walk,
					       const struct offcpu_python_layout *l, __u64 frame,
					       enum counting how, struct task_struct *task)
{
	walk->r->c_call_ends = 0;
	walk->r->cut_short = 0;
	walk->r->reserved = 0;
	walk->l = l;
	walk->frame = frame;
	walk->block = lowest(lowest(lowest(l->frame_code, l->frame_previous), l->frame_instr),
			     lowest(l->frame_owner, l->frame_is_entry));
	walk->task = task;
	/* Twice the frames: entry shims take a step each and send nothing. */
	if (task)
		bpf_loop(2 * OFFCPU_PY_MAX_FRAMES, python_step_task, walk, 0);
	else
		bpf_loop(2 * OFFCPU_PY_MAX_FRAMES, python_step, walk, 0);
	if (walk->frame && walk->n >= OFFCPU_PY_MAX_FRAMES)
		walk->r->cut_short = 1;
	walk->r->frames = walk->n;
	if (walk->r->cut_short && c)
		count(c, OFFCPU_CNT_PY_CUT_SHORT, how);
}

/* Marks the chain's code objects sent; true when one was not before (wake the reader). */
static __always_inline bool python_mark_chain(struct python_walk *walk, struct python_thread *pt)
{
	if (!pt || pt->last_chain != walk->chain) {
		bpf_loop(OFFCPU_PY_MAX_FRAMES, python_mark_seen, walk, 0);
		if (pt)
			pt->last_chain = walk->chain;
	}
	return walk->new_code;
}

/*
 * The current thread's Python frames, sent right before its wait w (so the
 * reader has them when the wait comes). Nothing is sent for a thread that
 * runs no Python code.
 */
static __always_inline void python_send_frames(struct offcpu_counters *c,
					       const struct offcpu_wait_record *w)
{
	const struct offcpu_python_layout *l;
	struct python_thread *pt = NULL;
	struct python_walk walk = {};
	__u32 pid = w->pid;
	__u64 frame;

	l = bpf_map_lookup_elem(&python_procs, &pid);
	if (!l)
		return;
	/* Its read failures are not counted: unchanged since before switch-outs had walks. */
	frame = python_first_frame(l, bpf_get_current_task_btf(), &pt, &walk.fault, NULL);
	if (!frame)
		return;
	walk.r = bpf_ringbuf_reserve(&events, sizeof(*walk.r), 0);
	if (!walk.r) {
		count(c, OFFCPU_CNT_PY_FAIL, PREEMPTIBLE);
		return;
	}
	walk.r->type = OFFCPU_RECORD_PYTHON;
	walk.r->pid = pid;
	walk.r->tid = w->tid;
	walk.r->end_ts_ns = w->end_ts_ns;
	python_walk_frames(c, &walk, l, frame, PREEMPTIBLE, NULL);
	bpf_ringbuf_submit(walk.r,
			   python_mark_chain(&walk, pt) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * The frames of a thread without rseq, from its last
 * switch-out to its switch-in. One per thread of a matched process, in
 * task storage like its user stack (switch_out_stacks): created at its
 * first walk, freed with the thread.
 */
struct python_switch_out {
	__u64 start_ts_ns; /* of the wait they are the frames of; 0: none */
	__u64 chain;
	struct offcpu_python_record r;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct python_switch_out);
} python_switch_outs SEC(".maps");

/*
 * At the switch-out of prev (current: its memory is its own, and no user
 * code runs before its switch-in) that starts the wait of start_ts_ns.
 * The walk's cost is paid here, at every switch-out of such a thread, in
 * matched processes only, before the wait's duration is known. A read
 * that fails (a page not present: nothing faults in here) sends nothing,
 * counted in python_stack_failures: a partial chain would be merged
 * against the wrong evaluator frames.
 */
static __always_inline void python_take_at_switch_out(struct offcpu_counters *c,
						      struct task_struct *prev, __u64 start_ts_ns)
{
	const struct offcpu_python_layout *l;
	struct python_thread *pt = NULL;
	struct python_walk walk = {};
	struct python_switch_out *s;
	__u32 pid = prev->tgid;
	__u64 frame;

	l = bpf_map_lookup_elem(&python_procs, &pid);
	if (!l)
		return;
	s = bpf_task_storage_get(&python_switch_outs, prev, 0, scheduler_get_flags());
	if (!s) {
		count(c, OFFCPU_CNT_PY_FAIL, IN_SWITCH);
		return;
	}
	s->start_ts_ns = 0;
	count(c, OFFCPU_CNT_PY_WALKS_AT_OUT, IN_SWITCH);
	frame = python_first_frame(l, prev, &pt, &walk.fault, NULL);
	if (!frame) {
		if (walk.fault)
			count(c, OFFCPU_CNT_PY_FAIL, IN_SWITCH);
		return;
	}
	walk.r = &s->r;
	python_walk_frames(c, &walk, l, frame, IN_SWITCH, NULL);
	if (walk.fault) {
		count(c, OFFCPU_CNT_PY_FAIL, IN_SWITCH);
		return;
	}
	s->r.type = OFFCPU_RECORD_PYTHON;
	s->r.pid = pid;
	s->r.tid = prev->pid;
	s->chain = walk.chain;
	s->start_ts_ns = start_ts_ns;
}

/*
 * At next's switch-in, right before its wait w goes (which started at
 * start_ts_ns): the frames its switch-out walked, if they are that wait's.
 */
static __always_inline void python_send_switch_out(struct offcpu_counters *c,
						   struct task_struct *next,
						   struct offcpu_wait_record *w, __u64 start_ts_ns)
{
	struct python_switch_out *s = bpf_task_storage_get(&python_switch_outs, next, 0, 0);
	struct python_walk walk = {};
	__u32 frames;

	if (!s || !s->start_ts_ns || s->start_ts_ns != start_ts_ns)
		return;
	s->start_ts_ns = 0;
	s->r.end_ts_ns = w->end_ts_ns;
	walk.r = &s->r;
	walk.n = s->r.frames;
	walk.chain = s->chain;
	python_mark_chain(&walk, bpf_task_storage_get(&python_threads, next, 0, 0));
	frames = s->r.frames;
	if (frames > OFFCPU_PY_MAX_FRAMES)
		frames = OFFCPU_PY_MAX_FRAMES;
	/* Only the frames walked: a full record is 1,560 bytes. */
	if (bpf_ringbuf_output(&events, &s->r,
			       OFFCPU_PYTHON_HEADER_SIZE + frames * sizeof(s->r.frame[0]),
			       walk.new_code ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP)) {
		count(c, OFFCPU_CNT_PY_FAIL, IN_SWITCH);
		return;
	}
	count(c, OFFCPU_CNT_PY_AT_OUT, IN_SWITCH);
}

/*
 * The open-wait iterator's: the Python frames of t, a thread off CPU (not
 * current), walked in its memory for its open wait w and written right
 * before it, in three steps. Global functions, each verified once on its
 * own and called one after the other: inlined, the iterator took 3.2 s
 * more to load (4.5 s against 1.3 s on a loaded 2-core VM), and in one
 * function the walk's stack and the iterator's passed 512 bytes.
 *
 * A read that fails flags w OFFCPU_WAIT_PYTHON_FAILED and sends nothing,
 * as the switch-out's walk does: a partial chain would be merged against
 * the wrong evaluator frames. Nothing is marked in python_code_seen: the
 * records of a seq file wake no one, and user space reads every code
 * object it names.
 */

/* t's innermost Python frame; 0: it runs none, its process is not walked, or a read failed. */
__noinline __u64 python_open_first(struct task_struct *t __arg_trusted,
				   struct offcpu_wait_record *w)
{
	const struct offcpu_python_layout *l;
	struct python_thread *pt = NULL;
	__u32 pid = t->tgid;
	bool fault = false;
	__u64 frame;

	/* A global function's pointers may be NULL, to the verifier. */
	if (!w)
		return 0;
	l = bpf_map_lookup_elem(&python_procs, &pid);
	if (!l)
		return 0;
	frame = python_first_frame(l, t, &pt, &fault, t);
	if (fault) {
		w->flags |= OFFCPU_WAIT_PYTHON_FAILED;
		return 0;
	}
	return frame;
}

/* The chain from frame (python_open_first()) into r; 1 when r holds it. */
__noinline int python_open_frames(struct task_struct *t __arg_trusted,
				  struct offcpu_python_record *r, struct offcpu_wait_record *w,
				  __u64 frame)
{
	const struct offcpu_python_layout *l;
	struct python_walk walk = {};
	__u32 pid = t->tgid;

	if (!r || !w)
		return 0;
	l = bpf_map_lookup_elem(&python_procs, &pid);
	if (!l)
		return 0;
	walk.r = r;
	python_walk_frames(NULL, &walk, l, frame, PREEMPTIBLE, t);
	if (walk.fault) {
		w->flags |= OFFCPU_WAIT_PYTHON_FAILED;
		return 0;
	}
	r->type = OFFCPU_RECORD_PYTHON;
	r->pid = pid;
	r->tid = t->pid;
	r->end_ts_ns = w->end_ts_ns;
	return 1;
}

/* The frames python_open_frames() walked into r, into the iterator's seq file. */
__noinline int python_open_write(struct seq_file *seq __arg_trusted, struct offcpu_python_record *r)
{
	struct offcpu_open_header h = {};
	__u32 frames;

	if (!r)
		return 0;
	frames = r->frames;
	if (frames > OFFCPU_PY_MAX_FRAMES)
		frames = OFFCPU_PY_MAX_FRAMES;
	h.size = OFFCPU_PYTHON_HEADER_SIZE + frames * sizeof(r->frame[0]);
	bpf_seq_write(seq, &h, sizeof(h));
	bpf_seq_write(seq, r, OFFCPU_PYTHON_HEADER_SIZE + frames * sizeof(r->frame[0]));
	return 0;
}

/* A forked child runs its parent's interpreter, at the same addresses. */
static __always_inline void python_fork(__u32 parent_tgid, __u32 child_tgid)
{
	const struct offcpu_python_layout *l = bpf_map_lookup_elem(&python_procs, &parent_tgid);

	if (l)
		bpf_map_update_elem(&python_procs, &child_tgid, l, BPF_ANY);
}

/* A new image (user space looks at it again) or a process gone. */
static __always_inline void python_forget(__u32 tgid)
{
	bpf_map_delete_elem(&python_procs, &tgid);
}

#endif
