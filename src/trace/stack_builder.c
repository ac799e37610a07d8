// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/goroutine.h"
#include "classify/rules.h"
#include "lib/array.h"
#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "python/python_merge.h"
#include "trace/stack_builder.h"
#include "unwind/stack_end.h"
#include "unwind/unwind.h"

/* A frame-pointer loop: a cycle of at most this many return addresses... */
#define LOOP_MAX_PERIOD 8
/* ...seen at least this many times in a row, up to the last frame. */
#define LOOP_MIN_CYCLES 4

/* Callers of the leaf the frame chain may skip: libc's wrappers, their caller. */
#define LEAF_STEPS 4

/* A stack as the kernel gave it, with what it symbolized to. */
struct cached_stack {
	const struct stack *stack;
	const char *parked; /* A Go goroutine's park class, or NULL */
	uint32_t nr;
	uint64_t ips[];
};

/*
 * User addresses mean something only in their process image: each process
 * has its own stack cache, dropped when it execs or exits, so memory
 * follows the live processes rather than every process ever seen.
 */
struct process_stacks {
	uint32_t pid;
	struct hash_table *stacks; /* raw -> cached_stack */
};

/* A user stack to symbolize: whose, when, and how it was unwound. */
struct user_ips {
	uint32_t pid;
	uint64_t seen_ns;
	/*
	 * A frame-pointer walk, which may take any word for a return address
	 * (a CFI unwind stops where no CFI is): its frames in no executable
	 * mapping are cut. Only there, since a mapping the symbolizer has not
	 * seen yet (a stale snapshot) would cut a CFI-unwound stack too.
	 */
	bool fp_walk;
};

struct stack_builder {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct stack_builder_opts opts;
	struct hash_table *kernel_stacks; /* raw -> cached_stack */
	struct hash_table *processes;	  /* pid -> process_stacks */
	struct cached_stack *key;	  /* lookup key, room for the deepest stack */
	struct unwinder *unwinder;	  /* --call-graph dwarf's copies, fp mode's leaves */
	uint64_t unwound[OFFCPU_MAX_STACK_DEPTH];
	struct frame frames[OFFCPU_MAX_STACK_DEPTH];
	struct frame merged[OFFCPU_MAX_STACK_DEPTH + OFFCPU_PY_MAX_FRAMES];
};

/*
 * Frames above the blocking code: the scheduler core and, should a stack
 * ever be taken from inside the tracepoint, the tracing and BPF frames.
 */
static const char *const leaf_frames_to_skip[] = {
	"__schedule",	  "schedule",	"__traceiter_*", "__bpf_trace_*",
	"bpf_trace_run*", "bpf_prog_*", "__probestub_*",
};

/*
 * The unwinder's CFI cache, within offcpu's RSS bound of 64 MiB: libc's
 * .eh_frame is 0.3 MiB, its .debug_frame more; 16 MiB holds the files a
 * busy machine's blocking threads run, the rest are read again.
 */
static const struct unwinder_opts unwinder_opts = {
	.max_modules = 128,
	.max_bytes = 16 << 20,
};

/* A raw stack cache is keyed by the cached_stack itself: its nr and ips. */
static uint64_t hash_raw(const void *key)
{
	const struct cached_stack *c = key;

	return hash_table__hash_bytes(c->ips, c->nr * sizeof(c->ips[0]), c->nr);
}

static bool equal_raw(const void *a, const void *b)
{
	const struct cached_stack *x = a, *y = b;

	return x->nr == y->nr && !memcmp(x->ips, y->ips, x->nr * sizeof(x->ips[0]));
}

int stack_builder__new(struct profile *profile, struct symbolizer *symbolizer,
		       const struct stack_builder_opts *o, struct stack_builder **out)
{
	struct stack_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->profile = profile;
	b->symbolizer = symbolizer;
	if (o)
		b->opts = *o;
	b->kernel_stacks = hash_table__new(hash_raw, equal_raw);
	b->processes = hash_table__new(u32_key__hash, u32_key__equal);
	b->key = malloc(sizeof(*b->key) + OFFCPU_MAX_STACK_DEPTH * sizeof(b->key->ips[0]));
	if (!b->kernel_stacks || !b->processes || !b->key ||
	    unwinder__new(&unwinder_opts, &b->unwinder)) {
		stack_builder__free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

static void process_stacks_free(void *value)
{
	struct process_stacks *p = value;

	hash_table__free_values(p->stacks, free);
	free(p);
}

void stack_builder__free(struct stack_builder *b)
{
	if (!b)
		return;
	hash_table__free_values(b->kernel_stacks, free);
	hash_table__free_values(b->processes, process_stacks_free);
	free(b->key);
	unwinder__free(b->unwinder);
	free(b);
}

void stack_builder__forget_process(struct stack_builder *b, uint32_t pid)
{
	struct process_stacks *p = hash_table__remove(b->processes, &pid);

	if (p)
		process_stacks_free(p);
}

/* A new, empty table for *cache, its cached stacks freed; -ENOMEM keeps the old. */
static int renew_cache(struct hash_table **cache)
{
	struct hash_table *fresh = hash_table__new(hash_raw, equal_raw);

	if (!fresh)
		return -ENOMEM;
	hash_table__free_values(*cache, free);
	*cache = fresh;
	return 0;
}

int stack_builder__forget_stacks(struct stack_builder *b)
{
	struct hash_table_iter it = { 0 };
	void *value;
	int err;

	err = renew_cache(&b->kernel_stacks);
	while (!err && hash_table__next(b->processes, &it, NULL, &value)) {
		struct process_stacks *p = value;

		err = renew_cache(&p->stacks);
	}
	return err;
}

/* The user stack cache of pid, its owner told first of a process new here. */
static struct hash_table *stacks_of(struct stack_builder *b, uint32_t pid)
{
	struct process_stacks *p = hash_table__find(b->processes, &pid);

	if (p)
		return p->stacks;
	if (b->opts.process_new && b->opts.process_new(b->opts.ctx, pid))
		return NULL;
	p = u32_key__find_or_add(b->processes, pid, sizeof(*p),
				 offsetof(struct process_stacks, pid), NULL);
	if (!p)
		return NULL;
	p->stacks = hash_table__new(hash_raw, equal_raw);
	if (!p->stacks) {
		hash_table__remove(b->processes, &pid);
		process_stacks_free(p);
		return NULL;
	}
	return p->stacks;
}

/* Most stacks were seen before: looked up with the reusable key. */
static struct cached_stack *find(struct stack_builder *b, struct hash_table *cache,
				 const __u64 *ips, uint32_t nr)
{
	b->key->nr = nr;
	memcpy(b->key->ips, ips, nr * sizeof(ips[0]));
	return hash_table__find(cache, b->key);
}

/* The key of a miss, copied to be cached. */
static struct cached_stack *copy_key(const struct stack_builder *b)
{
	size_t size = sizeof(*b->key) + b->key->nr * sizeof(b->key->ips[0]);
	struct cached_stack *cached = malloc(size);

	if (cached)
		memcpy(cached, b->key, size);
	return cached;
}

/* A miss, its stack interned (NULL: out of memory), into cache; its stack. */
static const struct stack *keep(struct hash_table *cache, struct cached_stack *cached,
				bool name_later)
{
	const struct stack *stack = cached->stack;

	/*
	 * A frame in a file skipped for want of room, which
	 * offcpu serve reads once files are freed: not cached, so the next
	 * wait with this stack is named again (and its misses counted again).
	 */
	if (stack && name_later) {
		free(cached);
		return stack;
	}
	if (!stack || hash_table__insert(cache, cached, cached)) {
		free(cached);
		return NULL;
	}
	return stack;
}

static bool skip_leaf(const struct frame *f)
{
	size_t i;

	if (!f->sym)
		return false;
	for (i = 0; i < ARRAY_SIZE(leaf_frames_to_skip); i++) {
		if (rules__symbol_matches(leaf_frames_to_skip[i], f->sym))
			return true;
	}
	return false;
}

static const struct stack *symbolize_kernel(struct stack_builder *b, const __u64 *ips, uint32_t nr)
{
	struct cached_stack *cached = find(b, b->kernel_stacks, ips, nr);
	const struct frame *first = b->frames;
	size_t kept = nr;
	uint32_t i;

	if (cached)
		return cached->stack;
	cached = copy_key(b);
	if (!cached)
		return NULL;
	for (i = 0; i < nr; i++) {
		symbolizer__kernel(b->symbolizer, ips[i], &b->frames[i]);
		if (!b->frames[i].sym)
			b->profile->counters[OFFCPU_CNT_SYMBOL_MISS]++;
	}
	while (kept > 1 && skip_leaf(first)) {
		first++;
		kept--;
	}
	cached->parked = NULL;
	cached->stack = profile__intern_stack(b->profile, first, kept);
	return keep(b->kernel_stacks, cached, false);
}

/*
 * A user stack, however unwound, ends where the thread's
 * own frames do (unwind/stack_end.h); a Go M that parked a goroutine keeps,
 * not its frames, but why it parked.
 */
static size_t walk_end(struct stack_builder *b, const struct user_ips *u, size_t nr,
		       const char **parked)
{
	bool maps_known = u->fp_walk && symbolizer__maps_known(b->symbolizer, u->pid);
	size_t kept = stack_end__user(b->frames, nr, maps_known);

	if (kept && kept < nr && stack_end__is_goroutine_switch(&b->frames[kept - 1]))
		*parked = goroutine__park_class(b->frames + kept, nr - kept);
	return kept;
}

/* A user stack's end is found here whichever way it was unwound; *parked is set. */
static const struct stack *symbolize_user(struct stack_builder *b, const struct user_ips *u,
					  const __u64 *ips, uint32_t nr, const char **parked)
{
	struct hash_table *cache = stacks_of(b, u->pid);
	struct cached_stack *cached;
	bool name_later = false;
	size_t kept;
	uint32_t i;

	if (!cache)
		return NULL;
	cached = find(b, cache, ips, nr);
	if (cached) {
		*parked = cached->parked;
		return cached->stack;
	}
	cached = copy_key(b);
	if (!cached)
		return NULL;
	for (i = 0; i < nr; i++) {
		name_later |= symbolizer__user(b->symbolizer, u->pid, ips[i], i == 0, u->seen_ns,
					       &b->frames[i]);
		if (!b->frames[i].sym)
			b->profile->counters[OFFCPU_CNT_SYMBOL_MISS]++;
	}
	cached->parked = NULL;
	kept = walk_end(b, u, nr, &cached->parked);
	*parked = cached->parked;
	cached->stack = profile__intern_stack(b->profile, b->frames, kept);
	return keep(cache, cached, name_later);
}

/* The nr frames in b->unwound, symbolized as a user stack. */
static const struct stack *symbolize_unwound(struct stack_builder *b, const struct user_ips *u,
					     uint32_t nr, const char **parked)
{
	__u64 pcs[OFFCPU_MAX_STACK_DEPTH];
	uint32_t i;

	for (i = 0; i < nr; i++)
		pcs[i] = b->unwound[i];
	return symbolize_user(b, u, pcs, nr, parked);
}

/*
 * Where to cut a user stack that ends in a frame-pointer loop: after the
 * loop's first cycle, or nr when the stack does not end in one.
 *
 * The kernel walks user frame pointers without checking that they go up
 * the stack (x86's perf_callchain_user), so a chain that points back into
 * itself repeats one cycle of return addresses until --stack-depth (seen:
 * one address 120 times in a preempted thread's stack in clone3). Only the
 * addresses reach user space, not the frame pointers, and a recursion from
 * one call site repeats its return address just the same. What tells them
 * apart is the end: a recursion ends, and the walk goes on to its callers
 * and the thread's root, while a loop fills the stack. So the caller asks
 * only about stacks that filled --stack-depth, and a stack is cut only if
 * its last LOOP_MIN_CYCLES cycles or more, up to the last frame, are one
 * cycle of at most LOOP_MAX_PERIOD addresses. The price: a recursion deeper
 * than --stack-depth, whose stack was cut short anyway, is cut the same,
 * to its first cycle; both are counted.
 */
static uint32_t loop_cut(const __u64 *ips, uint32_t nr)
{
	uint32_t period, start;

	for (period = 1; period <= LOOP_MAX_PERIOD && period * LOOP_MIN_CYCLES <= nr; period++) {
		/* The longest tail in which every frame is the one period before it. */
		start = nr - period;
		while (start > 0 && ips[start - 1] == ips[start - 1 + period])
			start--;
		if (nr - start >= period * LOOP_MIN_CYCLES)
			return start + period;
	}
	return nr;
}

/*
 * A stack that filled --stack-depth was cut short by the depth, before the
 * thread's root (unless it had exactly that many frames: no way to tell).
 */
static uint32_t user_frames_kept(struct stack_builder *b, const struct offcpu_wait_record *r,
				 uint32_t user_frames, bool *cut_short)
{
	const __u64 *ips = r->ips + r->kernel_frames;
	uint32_t kept;

	if (!r->stack_depth || user_frames < r->stack_depth)
		return user_frames;
	*cut_short = true;
	kept = loop_cut(ips, user_frames);
	if (kept < user_frames)
		b->profile->counters[OFFCPU_CNT_USTACK_LOOP]++;
	return kept;
}

/* Frame-pointer walks end on a zero return address: not a frame. */
static uint32_t walked_frames(const __u64 *ips, uint32_t nr)
{
	while (nr && !ips[nr - 1])
		nr--;
	return nr;
}

/*
 * The struct offcpu_user_copy at byte off of the record, as the unwinder
 * takes it; NULL if the record is too short for it.
 */
static const struct offcpu_user_copy *copy_at(const void *r, size_t size, size_t off,
					      struct unwind_regs *regs, struct unwind_stack *stack)
{
	const struct offcpu_user_copy *copy;
	unsigned int i;

	if (size < off + sizeof(*copy))
		return NULL;
	copy = (const void *)((const char *)r + off);
	if (copy->size > size - off - sizeof(*copy))
		return NULL;
	for (i = 0; i < UNWIND_NR_REGS && i < OFFCPU_USER_REGS; i++)
		regs->r[i] = copy->regs[i];
	regs->valid = (1u << UNWIND_NR_REGS) - 1;
	stack->start = copy->regs[UNWIND_REG_RSP];
	stack->data = copy->data;
	stack->size = copy->size;
	return copy;
}

/* A record's --stack-depth as the frames a stack holds at most. */
static size_t depth_max(uint8_t stack_depth)
{
	return stack_depth && stack_depth <= OFFCPU_MAX_STACK_DEPTH ? stack_depth
								    : OFFCPU_MAX_STACK_DEPTH;
}

/*
 * A dwarf-mode record's user stack: the copy at byte off of a record of
 * size bytes (a wait's or a waker's), unwound with the CFI of the files
 * mapped into b->unwound, at most max frames. A stack that stops before
 * the thread's root is counted, and kept as far as it went. Returns the
 * number of frames, or -EINVAL for a malformed copy.
 */
static int unwind_copy(struct stack_builder *b, const void *r, size_t size, size_t off,
		       const struct user_ips *u, size_t max, bool *cut_short)
{
	const struct offcpu_user_copy *copy;
	const struct proc_maps *maps;
	struct unwind_result res;
	struct unwind_regs regs;
	struct unwind_stack stack;

	copy = copy_at(r, size, off, &regs, &stack);
	if (!copy)
		return -EINVAL;
	if (!copy->size)
		return 0;
	maps = symbolizer__maps(b->symbolizer, u->pid, copy->regs[UNWIND_REG_RIP], u->seen_ns);
	if (!maps ||
	    unwinder__unwind(b->unwinder, u->pid, maps, &regs, &stack, b->unwound, max, &res)) {
		*cut_short = true;
		return 0;
	}
	*cut_short = res.stop != UNWIND_STOP_ROOT;
	b->profile->counters[OFFCPU_CNT_CFI_REJECTED] += res.cfi_rejected;
	return (int)res.nr;
}

/*
 * fp mode: the frame chain (ips, nr) skips the callers of a leaf without
 * frame pointers: the walk starts from the frame pointer of the first
 * function that keeps one. Stepping from the leaf with CFI over the words
 * copied at the SP finds them; they are put in only where that walk meets
 * the chain's second address, so nothing unconfirmed is added. The stack
 * goes into b->unwound; its length, or -EINVAL for a malformed copy.
 */
static int fix_leaf(struct stack_builder *b, const struct offcpu_wait_record *r, size_t size,
		    const __u64 *ips, uint32_t nr)
{
	size_t off = OFFCPU_WAIT_HEADER_SIZE + (r->kernel_frames + r->user_frames) * sizeof(__u64);
	uint32_t max = (uint32_t)depth_max(r->stack_depth);
	uint64_t pcs[LEAF_STEPS + 2];
	const struct offcpu_user_copy *copy;
	const struct proc_maps *maps;
	struct unwind_result res;
	struct unwind_regs regs;
	struct unwind_stack stack;
	uint32_t i, j, n = 0, meet = 0;

	copy = copy_at(r, size, off, &regs, &stack);
	if (!copy)
		return -EINVAL;
	if (nr >= 2 && copy->size && copy->regs[UNWIND_REG_RIP] == ips[0]) {
		maps = symbolizer__maps(b->symbolizer, r->pid, ips[0], r->end_ts_ns);
		if (maps && !unwinder__unwind(b->unwinder, r->pid, maps, &regs, &stack, pcs,
					      ARRAY_SIZE(pcs), &res)) {
			for (j = 1; j < res.nr && !meet; j++)
				if (pcs[j] == ips[1])
					meet = j;
		}
	}
	for (i = 0; i < nr && n < max; i++) {
		b->unwound[n++] = ips[i];
		for (j = 1; i == 0 && j < meet && n < max; j++)
			b->unwound[n++] = pcs[j];
	}
	return (int)n;
}

/* --call-graph dwarf: the copy at byte off of the record, unwound. */
static int copied_stack(struct stack_builder *b, const struct user_ips *u, const void *r,
			size_t size, size_t off, uint8_t stack_depth, struct built_stacks *out)
{
	int nr = unwind_copy(b, r, size, off, u, depth_max(stack_depth), &out->cut_short);

	if (nr <= 0)
		return nr;
	out->user_stack = symbolize_unwound(b, u, (uint32_t)nr, &out->parked);
	return out->user_stack ? 0 : -ENOMEM;
}

/* fp mode: the frame chain, its leaf's callers put in. */
static int mended_stack(struct stack_builder *b, const struct user_ips *u,
			const struct offcpu_wait_record *r, size_t size, uint32_t user_frames,
			struct built_stacks *out)
{
	int nr;

	user_frames = user_frames_kept(b, r, user_frames, &out->cut_short);
	nr = fix_leaf(b, r, size, r->ips + r->kernel_frames, user_frames);
	if (nr < 0)
		return nr;
	out->user_stack = symbolize_unwound(b, u, (uint32_t)nr, &out->parked);
	return out->user_stack ? 0 : -ENOMEM;
}

/* A frame chain the BPF side walked, as it walked it. */
static int walked_stack(struct stack_builder *b, const struct user_ips *u, const __u64 *ips,
			uint32_t nr, struct built_stacks *out)
{
	out->user_stack = symbolize_user(b, u, ips, nr, &out->parked);
	return out->user_stack ? 0 : -ENOMEM;
}

static int wait_user_stack(struct stack_builder *b, const struct offcpu_wait_record *r, size_t size,
			   struct built_stacks *out)
{
	const __u64 *ips = r->ips + r->kernel_frames;
	uint32_t user_frames = walked_frames(ips, r->user_frames);
	const struct user_ips u = { .pid = r->pid,
				    .seen_ns = r->end_ts_ns,
				    .fp_walk = r->user_stack != OFFCPU_USTACK_COPIED };

	if (r->user_stack == OFFCPU_USTACK_COPIED)
		return copied_stack(b, &u, r, size,
				    OFFCPU_WAIT_HEADER_SIZE + r->kernel_frames * sizeof(__u64),
				    r->stack_depth, out);
	if (!user_frames)
		return 0;
	if (r->user_stack == OFFCPU_USTACK_TAKEN_LEAF)
		return mended_stack(b, &u, r, size, user_frames, out);
	if (r->user_stack == OFFCPU_USTACK_TAKEN) {
		user_frames = user_frames_kept(b, r, user_frames, &out->cut_short);
		return walked_stack(b, &u, ips, user_frames, out);
	}
	return 0;
}

/*
 * The user stack with the Python frames of its wait in place of the
 * evaluator's; without a user stack, the Python frames alone.
 */
static int put_in_python(struct stack_builder *b, const struct python_frames *python,
			 struct built_stacks *out)
{
	const struct stack *user = out->user_stack;
	size_t n = python_merge(user ? user->frames : NULL, user ? user->nr : 0, python->frames,
				python->nr, python->c_call_ends, b->merged, ARRAY_SIZE(b->merged));

	if (!n)
		return 0;
	out->user_stack = profile__intern_stack(b->profile, b->merged, n);
	return user && !out->user_stack ? -ENOMEM : 0;
}

int stack_builder__wait(struct stack_builder *b, const struct offcpu_wait_record *r, size_t size,
			const struct python_frames *python, struct built_stacks *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (r->kernel_frames) {
		out->kernel_stack = symbolize_kernel(b, r->ips, r->kernel_frames);
		if (!out->kernel_stack)
			return -ENOMEM;
	}
	err = wait_user_stack(b, r, size, out);
	if (err || !python)
		return err;
	return put_in_python(b, python, out);
}

int stack_builder__waker(struct stack_builder *b, const struct offcpu_waker_record *r, size_t size,
			 struct built_stacks *out)
{
	const __u64 *ips = r->ips + r->kernel_frames;
	uint32_t user_frames;
	const struct user_ips u = { .pid = r->pid,
				    .seen_ns = r->ts_ns,
				    .fp_walk = r->user_stack != OFFCPU_USTACK_COPIED };

	memset(out, 0, sizeof(*out));
	if (r->kernel_frames) {
		out->kernel_stack = symbolize_kernel(b, r->ips, r->kernel_frames);
		if (!out->kernel_stack)
			return -ENOMEM;
	}
	if (r->user_stack == OFFCPU_USTACK_COPIED)
		return copied_stack(b, &u, r, size,
				    OFFCPU_WAKER_HEADER_SIZE + r->kernel_frames * sizeof(__u64),
				    r->stack_depth, out);
	user_frames = walked_frames(ips, r->user_frames);
	return user_frames ? walked_stack(b, &u, ips, user_frames, out) : 0;
}
