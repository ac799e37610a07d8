// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "classify/goroutine.h"
#include "classify/states.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/log.h"
#include "lib/u32_key.h"
#include "offcpu.h"
#include "proc/cgroups.h"
#include "proc/proc_root.h"
#include "proc/proctitle.h"
#include "python/python.h"
#include "python/python_merge.h"
#include "trace/collector.h"
#include "trace/label_reader.h"
#include "trace/reaper.h"
#include "trace/thread_accounts.h"
#include "unwind/stack_end.h"
#include "unwind/unwind.h"

/* The title of a process as shown: a line of text, not its whole argv. */
#define PROCESS_TITLE_MAX 256

/* A frame-pointer loop: a cycle of at most this many return addresses... */
#define LOOP_MAX_PERIOD 8
/* ...seen at least this many times in a row, up to the last frame. */
#define LOOP_MIN_CYCLES 4

/* A stack as the kernel gave it, with what it symbolized to. */
struct cached_stack {
	const struct stack *stack;
	const char *parked; /* A Go goroutine's park class, or NULL */
	uint32_t nr;
	uint64_t ips[];
};

/*
 * What the collector knows of a live process. User addresses mean
 * something only in their process image: each process has its own stack
 * cache, dropped when it execs or exits, so memory follows the live
 * processes rather than every process ever seen.
 */
struct process_info {
	uint32_t pid;
	struct hash_table *stacks; /* raw -> cached_stack */
	const char *title;	   /* interned; NULL: none, or the same as comm */
	struct proctitle_age title_age;
	/* Times CPython was looked for in this image (look_for_python()). */
	uint8_t python_tries;
	/* When the first look was (a wait's end), for the late one. */
	uint64_t python_looked_ns;
	/* When the maps last looked at were read (symbolizer__maps_since). */
	uint64_t python_maps_ns;
};

/*
 * What is held for one thread until its next record: the first member of
 * each such entry, so that a look frees those of threads gone (reap_threads).
 */
struct thread_leftover {
	uint32_t tid;
	bool looked; /* held at the last look already */
};

/* A thread's Python frames, named, waiting for their wait's record. */
struct python_pending {
	struct thread_leftover left;
	uint64_t end_ts_ns;
	uint64_t c_call_ends;
	size_t nr;
	struct frame frames[OFFCPU_PY_MAX_FRAMES];
};

/* Waits of one thread that take the user stack of its next record. */
struct chain {
	struct thread_leftover left;
	struct wait *waits;
	size_t nr;
};

/*
 * --wakers: the waker's stacks of a wait of a thread still to come
 * (OFFCPU_RECORD_WAKER), newest first. In dwarf mode a waker's record is
 * sent at the wakeup, so a thread that blocks again before its wait's
 * record is sent (from rseq_update) has the next wait's too.
 */
struct waker_stacks {
	struct thread_leftover left;
	uint64_t start_ts_ns;
	const struct stack *kernel_stack;
	const struct stack *user_stack;
	struct waker_stacks *older;
};

/* A thread's waker records held at most, the oldest dropped beyond (unmatched). */
#define WAKER_STACKS_HELD 4

/* Classifying runs every rule over every frame: once per stacks and state. */
struct cached_class {
	const struct stack *kernel_stack;
	const struct stack *user_stack;
	unsigned int state;
	const struct labels *labels;
	const char *parked; /* A static string: compared by address */
	const char *wait_class;
};

struct collector {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct hash_table *kernel_stacks; /* raw -> cached_stack */
	struct hash_table *processes;	  /* pid -> process_info */
	struct hash_table *chains;	  /* tid -> chain */
	struct hash_table *classes;	  /* (stacks, state) -> cached_class */
	struct hash_table *waker_stacks;  /* Wakee tid -> waker_stacks */
	struct cached_stack *key;	  /* lookup key, room for the deepest stack */
	struct unwinder *unwinder;	  /* --call-graph dwarf's copies */
	uint64_t unwound[OFFCPU_MAX_STACK_DEPTH];
	const struct rule_set *rules;
	struct label_reader *label_reader; /* NULL: no labels */
	uint32_t state_mask;
	bool malformed_reported;
	uint64_t short_min_ns; /* collector__set_weights */
	uint32_t sample_rate;
	struct thread_accounts *threads; /* collector__account_threads */
	const char *parked; /* Of the user stack symbolize() gave last */
	/*
	 * The user stack being symbolized is a frame-pointer
	 * walk, which may take any word for a return address (a CFI unwind
	 * stops where no CFI is): its frames in no executable mapping are cut.
	 * Only there, since a mapping the symbolizer has not seen yet (a
	 * stale snapshot) would cut a CFI-unwound stack too.
	 */
	bool fp_walk;
	struct frame frames[OFFCPU_MAX_STACK_DEPTH];
	struct cgroups *cgroups; /* Made at the first wait */
	/* CPython processes, and the frames their waits bring. */
	struct python *python;
	struct symbol_limits python_limits;
	struct hash_table *python_pending; /* tid -> python_pending */
	collector_python_fn python_sink;
	void *python_sink_ctx;
	struct frame merged[OFFCPU_MAX_STACK_DEPTH + OFFCPU_PY_MAX_FRAMES];
	/* Processes whose exit record was lost, freed (collector__reap). */
	struct reaper *reaper;
	bool drop_exits; /* collector_opts.drop_exits: exit records are ignored */
	bool log_reaps;	 /* collector_opts.log_reaps: each look is logged */
};

/*
 * Frames above the blocking code: the scheduler core and, should a stack
 * ever be taken from inside the tracepoint, the tracing and BPF frames.
 */
static const char *const leaf_frames_to_skip[] = {
	"__schedule",	  "schedule",	"__traceiter_*", "__bpf_trace_*",
	"bpf_trace_run*", "bpf_prog_*", "__probestub_*",
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

static uint64_t hash_class(const void *key)
{
	const struct cached_class *k = key;
	const void *stacks[3] = { k->kernel_stack, k->user_stack, k->parked };

	return hash_table__hash_bytes(&k->labels, sizeof(k->labels),
				      hash_table__hash_bytes(stacks, sizeof(stacks), k->state));
}

static bool equal_class(const void *a, const void *b)
{
	const struct cached_class *x = a, *y = b;

	return x->kernel_stack == y->kernel_stack && x->user_stack == y->user_stack &&
	       x->state == y->state && x->labels == y->labels && x->parked == y->parked;
}

/* A reused PID counts as alive: its entries merely stay apart a while longer. */
static bool process_alive(void *ctx, uint32_t pid)
{
	(void)ctx;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/*
 * The unwinder's CFI cache, within offcpu's RSS bound of 64 MiB: libc's
 * .eh_frame is 0.3 MiB, its .debug_frame more; 16 MiB holds the files a
 * busy machine's blocking threads run, the rest are read again.
 */
static const struct unwinder_opts unwinder_opts = {
	.max_modules = 128,
	.max_bytes = 16 << 20,
};

int collector__new(struct profile *profile, struct symbolizer *symbolizer,
		   const struct collector_opts *o, struct collector **out)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->profile = profile;
	c->symbolizer = symbolizer;
	profile->process_alive = process_alive;
	c->rules = o->rules;
	c->state_mask = o->state_mask;
	c->kernel_stacks = hash_table__new(hash_raw, equal_raw);
	c->processes = hash_table__new(u32_key__hash, u32_key__equal);
	c->chains = hash_table__new(u32_key__hash, u32_key__equal);
	c->classes = hash_table__new(hash_class, equal_class);
	c->waker_stacks = hash_table__new(u32_key__hash, u32_key__equal);
	c->key = malloc(sizeof(*c->key) + OFFCPU_MAX_STACK_DEPTH * sizeof(c->key->ips[0]));
	limits__defaults(&c->python_limits);
	c->python_pending = hash_table__new(u32_key__hash, u32_key__equal);
	c->drop_exits = o->drop_exits;
	c->log_reaps = o->log_reaps;
	if (!c->kernel_stacks || !c->processes || !c->chains || !c->classes || !c->waker_stacks ||
	    !c->key || !c->python_pending || reaper__new(&c->reaper) ||
	    python__new(profile->strings, &c->python_limits, &c->python) ||
	    unwinder__new(&unwinder_opts, &c->unwinder)) {
		collector__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static void process_info_free(void *value)
{
	struct process_info *p = value;

	hash_table__free_values(p->stacks, free);
	free(p);
}

static void chain_free(void *value)
{
	struct chain *chain = value;

	free(chain->waits);
	free(chain);
}

static void waker_stacks_free(void *value)
{
	struct waker_stacks *ws = value, *older;

	for (; ws; ws = older) {
		older = ws->older;
		free(ws);
	}
}

/* ws and the older ones after it, freed: their wait never came. */
static void drop_waker_stacks(struct collector *c, struct waker_stacks *ws)
{
	struct waker_stacks *older;

	for (; ws; ws = older) {
		older = ws->older;
		c->profile->counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED]++;
		free(ws);
	}
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	hash_table__free_values(c->kernel_stacks, free);
	hash_table__free_values(c->classes, free);
	hash_table__free_values(c->processes, process_info_free);
	hash_table__free_values(c->chains, chain_free);
	hash_table__free_values(c->waker_stacks, waker_stacks_free);
	hash_table__free_values(c->python_pending, free);
	python__free(c->python);
	free(c->key);
	unwinder__free(c->unwinder);
	cgroups__free(c->cgroups);
	thread_accounts__free(c->threads);
	reaper__free(c->reaper);
	free(c);
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

static struct process_info *process_of(struct collector *c, uint32_t pid)
{
	bool added;
	struct process_info *p = u32_key__find_or_add(c->processes, pid, sizeof(*p),
						      offsetof(struct process_info, pid), &added);

	if (!p || !added)
		return p;
	p->stacks = hash_table__new(hash_raw, equal_raw);
	if (!p->stacks) {
		hash_table__remove(c->processes, &pid);
		process_info_free(p);
		return NULL;
	}
	/* Who it is, so that a reused PID tells (reaper.h). */
	reaper__hold(c->reaper, pid);
	return p;
}

/*
 * The title as of a wait that ended at end_ts_ns: read again when the last
 * read is PROCTITLE_REFRESH_NS older; a process gone keeps its last one.
 */
static const char *title_of(struct collector *c, struct process_info *p, const char *comm,
			    uint64_t end_ts_ns)
{
	char title[PROCESS_TITLE_MAX];

	if (!proctitle__due(&p->title_age, end_ts_ns))
		return p->title;
	if (proctitle__read((int)p->pid, title, sizeof(title)))
		p->title = strcmp(title, comm) ? strpool__intern(c->profile->strings, title) : NULL;
	return p->title;
}

/*
 * A user stack, however unwound, ends where the thread's
 * own frames do (unwind/stack_end.h); a Go M that parked a goroutine keeps,
 * not its frames, but why it parked.
 */
static size_t walk_end(struct collector *c, uint32_t pid, const struct frame *frames, size_t nr,
		       const char **parked)
{
	bool maps_known = c->fp_walk && symbolizer__maps_known(c->symbolizer, pid);
	size_t kept = stack_end__user(frames, nr, maps_known);

	if (kept && kept < nr && stack_end__is_goroutine_switch(&frames[kept - 1]))
		*parked = goroutine__park_class(frames + kept, nr - kept);
	return kept;
}

/* A user stack's end is found here whichever way it was unwound; c->parked is set. */
static const struct stack *symbolize(struct collector *c, uint32_t pid, const __u64 *ips,
				     uint32_t nr, bool kernel, uint64_t seen_ns)
{
	struct process_info *p = kernel ? NULL : process_of(c, pid);
	struct hash_table *cache = kernel ? c->kernel_stacks : p ? p->stacks : NULL;
	struct cached_stack *cached, *found;
	const struct frame *first;
	bool name_later = false;
	size_t i, kept;

	if (!cache)
		return NULL;
	/* Most stacks were seen before: look up with the reusable key, copy on a miss. */
	c->key->nr = nr;
	memcpy(c->key->ips, ips, nr * sizeof(ips[0]));
	found = hash_table__find(cache, c->key);
	if (found) {
		if (!kernel)
			c->parked = found->parked;
		return found->stack;
	}
	cached = malloc(sizeof(*cached) + nr * sizeof(ips[0]));
	if (!cached)
		return NULL;
	memcpy(cached, c->key, sizeof(*cached) + nr * sizeof(ips[0]));
	for (i = 0; i < nr; i++) {
		struct frame *f = &c->frames[i];

		if (kernel)
			symbolizer__kernel(c->symbolizer, ips[i], f);
		else
			name_later |=
			    symbolizer__user(c->symbolizer, pid, ips[i], i == 0, seen_ns, f);
		if (!f->sym)
			c->profile->counters[OFFCPU_CNT_SYMBOL_MISS]++;
	}
	first = c->frames;
	kept = nr;
	while (kernel && kept > 1 && skip_leaf(first)) {
		first++;
		kept--;
	}
	cached->parked = NULL;
	if (!kernel) {
		kept = walk_end(c, pid, first, kept, &cached->parked);
		c->parked = cached->parked;
	}
	cached->stack = profile__intern_stack(c->profile, first, kept);
	/*
	 * A frame in a file skipped for want of room, which
	 * offcpu serve reads once files are freed: not cached, so the next
	 * wait with this stack is named again (and its misses counted again).
	 */
	if (cached->stack && name_later) {
		const struct stack *stack = cached->stack;

		free(cached);
		return stack;
	}
	if (!cached->stack || hash_table__insert(cache, cached, cached)) {
		free(cached);
		return NULL;
	}
	return cached->stack;
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
static uint32_t user_frames_kept(struct collector *c, const struct offcpu_wait_record *r,
				 uint32_t user_frames, bool *cut_short)
{
	const __u64 *ips = r->ips + r->kernel_frames;
	uint32_t kept;

	if (!r->stack_depth || user_frames < r->stack_depth)
		return user_frames;
	*cut_short = true;
	kept = loop_cut(ips, user_frames);
	if (kept < user_frames)
		c->profile->counters[OFFCPU_CNT_USTACK_LOOP]++;
	return kept;
}

/*
 * A dwarf-mode record's user stack: the copy after the kernel frames,
 * unwound with the CFI of the files mapped. A stack that stops before the
 * thread's root is counted, and kept as far as it went. Returns the number
 * of frames in c->unwound, or -EINVAL for a malformed copy.
 */
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
 * The copy at byte off of a record of size bytes (a wait's or a waker's),
 * of process pid as seen at seen_ns, unwound into c->unwound, at most max
 * frames.
 */
static int unwind_copy(struct collector *c, const void *r, size_t size, size_t off, uint32_t pid,
		       uint64_t seen_ns, size_t max, bool *cut_short)
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
	maps = symbolizer__maps(c->symbolizer, pid, copy->regs[UNWIND_REG_RIP], seen_ns);
	if (!maps ||
	    unwinder__unwind(c->unwinder, pid, maps, &regs, &stack, c->unwound, max, &res)) {
		*cut_short = true;
		return 0;
	}
	*cut_short = res.stop != UNWIND_STOP_ROOT;
	c->profile->counters[OFFCPU_CNT_CFI_REJECTED] += res.cfi_rejected;
	return (int)res.nr;
}

/* Callers of the leaf the frame chain may skip: libc's wrappers, their caller. */
#define LEAF_STEPS 4

/*
 * fp mode: the frame chain (ips, nr) skips the callers of a leaf without
 * frame pointers: the walk starts from the frame pointer of the first
 * function that keeps one. Stepping from the leaf with CFI over the words
 * copied at the SP finds them; they are put in only where that walk meets
 * the chain's second address, so nothing unconfirmed is added. The stack
 * goes into c->unwound; its length, or -EINVAL for a malformed copy.
 */
static int fix_leaf(struct collector *c, const struct offcpu_wait_record *r, size_t size,
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
		maps = symbolizer__maps(c->symbolizer, r->pid, ips[0], r->end_ts_ns);
		if (maps && !unwinder__unwind(c->unwinder, r->pid, maps, &regs, &stack, pcs,
					      ARRAY_SIZE(pcs), &res)) {
			for (j = 1; j < res.nr && !meet; j++)
				if (pcs[j] == ips[1])
					meet = j;
		}
	}
	for (i = 0; i < nr && n < max; i++) {
		c->unwound[n++] = ips[i];
		for (j = 1; i == 0 && j < meet && n < max; j++)
			c->unwound[n++] = pcs[j];
	}
	return (int)n;
}

static const char *wait_class_of(struct collector *c, const struct wait *w, const char *parked)
{
	struct cached_class key = { .kernel_stack = w->kernel_stack,
				    .user_stack = w->user_stack,
				    .state = w->state,
				    .labels = w->labels,
				    .parked = parked },
			    *cached;
	const struct stack *k = w->kernel_stack, *u = w->user_stack;
	const char *by_labels;

	cached = hash_table__find(c->classes, &key);
	if (cached)
		return cached->wait_class;
	cached = malloc(sizeof(*cached));
	if (!cached)
		return NULL;
	*cached = key;
	by_labels = classify__from_labels(c->rules, w->state, w->labels);
	cached->wait_class = strpool__intern(
	    c->profile->strings,
	    by_labels
		?: classify__wait_parked(c->rules, w->state, k ? k->frames : NULL, k ? k->nr : 0,
					 u ? u->frames : NULL, u ? u->nr : 0, parked));
	if (!cached->wait_class || hash_table__insert(c->classes, cached, cached)) {
		free(cached);
		return NULL;
	}
	return cached->wait_class;
}

static int add_chain(struct collector *c, const struct wait *w)
{
	struct chain *chain = u32_key__find_or_add(c->chains, w->tid, sizeof(*chain),
						   offsetof(struct chain, left.tid), NULL);
	struct wait *grown;

	if (!chain)
		return -ENOMEM;
	grown = realloc(chain->waits, (chain->nr + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	chain->waits = grown;
	chain->waits[chain->nr++] = *w;
	return 0;
}

/*
 * The thread's waits that were waiting for this user stack; cut_short: it
 * stopped before the thread's root, which each of them counts.
 */
/* parked: what user_stack's goroutine parked for, or NULL. */
static int close_chain(struct collector *c, uint32_t tid, const struct stack *user_stack,
		       bool cut_short, const char *parked, const struct labels *labels)
{
	struct chain *chain = hash_table__remove(c->chains, &tid);
	size_t i;
	int err = 0;

	if (!chain)
		return 0;
	for (i = 0; i < chain->nr && !err; i++) {
		struct wait *w = &chain->waits[i];

		w->user_stack = user_stack;
		/* Blocked again in the same system call: under the same wait event too. */
		if (!w->labels)
			w->labels = labels;
		if (!user_stack)
			c->profile->counters[OFFCPU_CNT_USTACK_LOST]++;
		else if (cut_short)
			c->profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT]++;
		/* Its user frames are known only now. */
		w->wait_class = wait_class_of(c, w, user_stack ? parked : NULL);
		err = w->wait_class ? profile__add(c->profile, w) : -ENOMEM;
	}
	chain_free(chain);
	return err;
}

/*
 * Records come from offcpu's own BPF program, so a malformed one is a bug
 * or a BPF object from another build: said once, with what it was, before
 * the -EINVAL that stops the reading is reported.
 */
static int malformed(struct collector *c, const void *data, size_t size, const char *why)
{
	uint32_t type;

	if (c->malformed_reported)
		return -EINVAL;
	c->malformed_reported = true;
	if (size < sizeof(type)) {
		log__error("malformed ring buffer record: %zu bytes: %s", size, why);
		return -EINVAL;
	}
	memcpy(&type, data, sizeof(type));
	log__error("malformed ring buffer record: type %u, %zu bytes: %s", type, size, why);
	return -EINVAL;
}

static const struct stack *symbolize_unwound(struct collector *c, uint32_t pid, uint64_t seen_ns,
					     uint32_t nr)
{
	__u64 pcs[OFFCPU_MAX_STACK_DEPTH];
	uint32_t i;

	for (i = 0; i < nr; i++)
		pcs[i] = c->unwound[i];
	return symbolize(c, pid, pcs, nr, false, seen_ns);
}

/* The wait's cgroup by its path; NULL when out of memory. */
static const char *cgroup_of(struct collector *c, uint64_t id, uint64_t now_ns)
{
	if (!c->cgroups && cgroups__new(NULL, c->profile->strings, &c->cgroups))
		return NULL;
	return cgroups__name(c->cgroups, id, now_ns);
}

/*
 * The waker and the run-queue part of a wait; with --wakers, the
 * waker's stacks its OFFCPU_RECORD_WAKER brought just before.
 */
static int fill_wakeup(struct collector *c, const struct offcpu_wait_record *r, struct wait *w)
{
	char comm[OFFCPU_COMM_LEN + 1];
	struct waker_stacks *ws, *newer = NULL;
	uint64_t start;

	w->runq_ns = r->runq_ns < r->duration_ns ? r->runq_ns : r->duration_ns;
	if (r->waker >= OFFCPU_WAKER_TASK && r->waker <= OFFCPU_WAKER_SOFTIRQ) {
		memcpy(comm, r->waker_comm, OFFCPU_COMM_LEN);
		comm[OFFCPU_COMM_LEN] = '\0';
		w->waker.context = r->waker;
		w->waker.pid = r->waker_pid;
		w->waker.tid = r->waker_tid;
		w->waker.cpu = r->waker_cpu;
		w->waker.comm = strpool__intern(c->profile->strings, comm);
		if (!w->waker.comm)
			return -ENOMEM;
	}
	if (!r->waker_stack)
		return 0;
	/*
	 * A thread's waits come in order: the stacks of waits that began
	 * before this one never will find theirs (not kept, or lost).
	 */
	start = r->end_ts_ns - r->duration_ns;
	for (ws = hash_table__find(c->waker_stacks, &r->tid); ws && ws->start_ts_ns > start;
	     ws = ws->older)
		newer = ws;
	if (!ws)
		return 0;
	if (newer)
		newer->older = NULL;
	else
		hash_table__remove(c->waker_stacks, &r->tid);
	if (ws->start_ts_ns != start) {
		drop_waker_stacks(c, ws);
		return 0;
	}
	w->waker_kernel_stack = ws->kernel_stack;
	w->waker_user_stack = ws->user_stack;
	drop_waker_stacks(c, ws->older);
	free(ws);
	return 0;
}

/* The waker's user stack of r, as its record brought it. */
static int waker_user_stack(struct collector *c, const struct offcpu_waker_record *r, size_t size,
			    const struct stack **out)
{
	uint32_t kernel_frames = r->kernel_frames, user_frames = r->user_frames;
	bool cut_short = false;
	int nr;

	c->fp_walk = r->user_stack != OFFCPU_USTACK_COPIED;
	if (r->user_stack == OFFCPU_USTACK_COPIED) {
		nr = unwind_copy(c, r, size,
				 OFFCPU_WAKER_HEADER_SIZE + kernel_frames * sizeof(__u64), r->pid,
				 r->ts_ns, depth_max(r->stack_depth), &cut_short);
		if (nr < 0)
			return malformed(c, r, size, "shorter than its waker's user stack copy");
		if (!nr)
			return 0;
		*out = symbolize_unwound(c, r->pid, r->ts_ns, (uint32_t)nr);
		return *out ? 0 : -ENOMEM;
	}
	/* Frame-pointer walks end on a zero return address: not a frame. */
	while (user_frames && !r->ips[kernel_frames + user_frames - 1])
		user_frames--;
	if (!user_frames)
		return 0;
	*out = symbolize(c, r->pid, r->ips + kernel_frames, user_frames, false, r->ts_ns);
	return *out ? 0 : -ENOMEM;
}

/* Symbolized at once: the waker's process may be gone by the wait's record. */
static int waker_record(struct collector *c, const struct offcpu_waker_record *r, size_t size)
{
	uint32_t kernel_frames = r->kernel_frames, user_frames = r->user_frames;
	struct waker_stacks *ws, *last;
	size_t held;
	int err;

	if (size < OFFCPU_WAKER_HEADER_SIZE)
		return malformed(c, r, size, "shorter than a waker record's header");
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH || user_frames > OFFCPU_MAX_STACK_DEPTH ||
	    size < OFFCPU_WAKER_HEADER_SIZE + (kernel_frames + user_frames) * sizeof(__u64))
		return malformed(c, r, size, "shorter than its waker frames");
	if (r->user_stack == OFFCPU_USTACK_COPIED && user_frames)
		return malformed(c, r, size, "both a waker's user frames and a copy");
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->left.tid = r->tid;
	ws->start_ts_ns = r->start_ts_ns;
	if (kernel_frames) {
		ws->kernel_stack = symbolize(c, r->pid, r->ips, kernel_frames, true, r->ts_ns);
		if (!ws->kernel_stack) {
			free(ws);
			return -ENOMEM;
		}
	}
	err = waker_user_stack(c, r, size, &ws->user_stack);
	if (err) {
		free(ws);
		return err;
	}
	ws->older = hash_table__remove(c->waker_stacks, &r->tid);
	for (held = 1, last = ws; last->older && held < WAKER_STACKS_HELD; held++)
		last = last->older;
	drop_waker_stacks(c, last->older);
	last->older = NULL;
	if (hash_table__insert(c->waker_stacks, &ws->left.tid, ws)) {
		waker_stacks_free(ws);
		return -ENOMEM;
	}
	return 0;
}

int collector__account_threads(struct collector *c)
{
	return c->threads ? 0 : thread_accounts__new(&c->threads);
}

void collector__set_weights(struct collector *c, uint64_t short_min_ns, uint32_t sample_rate)
{
	c->short_min_ns = short_min_ns;
	c->sample_rate = sample_rate;
}

/*
 * What the wait stands for: see collector__set_weights. A wait open at the
 * end was never drawn by --sample-rate (every one is written): it weighs
 * once. Saturates, never wraps.
 */
static uint64_t weight_of(const struct collector *c, const struct offcpu_wait_record *r)
{
	uint64_t weight = r->duration_ns < c->short_min_ns ? c->short_min_ns : r->duration_ns;
	uint32_t rate = r->flags & OFFCPU_WAIT_OPEN_AFTER ? 1 : c->sample_rate;

	if (rate > 1 && weight > UINT64_MAX / rate)
		return UINT64_MAX;
	return rate > 1 ? weight * rate : weight;
}

void collector__set_python_sink(struct collector *c, collector_python_fn fn, void *ctx)
{
	c->python_sink = fn;
	c->python_sink_ctx = ctx;
}

/*
 * Looks for CPython in a process, in the maps the symbolizer
 * holds of it (one read of a process's maps for both: CPython's own reads
 * doubled offcpu's, 124-146 against 55-70 for 40 short processes), and
 * hands what it found to the BPF side: at its exec (or its first wait, for
 * a process running before offcpu), and at a wait after the symbolizer
 * has read them again (a libpython is mapped by ld.so after the exec, and
 * the symbolizer reads the maps of a process just exec'd every millisecond
 * until ld.so has mapped its libraries: symbolizer__tick). Once, at a wait
 * PYTHON_LOOK_AGAIN_NS after the first look, they are read again if older
 * than it and ld.so may not have mapped the libraries then: a first wait
 * may come before ld.so has mapped libpython (a preemption in ld.so, read
 * at once: pyenv's 3.9 to 3.13, libpython shared, went unfound one run in
 * three on a loaded machine), and the symbolizer may not have looked since
 * (more processes just exec'd than it follows). PYTHON_LOOKS looks per
 * image at most.
 */
#define PYTHON_LOOKS 3
#define PYTHON_LOOK_AGAIN_NS (100 * 1000 * 1000ULL)

static void look_for_python(struct collector *c, struct process_info *p, uint64_t now_ns)
{
	struct offcpu_python_layout layout;
	const struct proc_maps *maps;
	uint64_t read_ns;
	bool late;

	if (!c->python_sink || p->python_tries >= PYTHON_LOOKS)
		return;
	late = p->python_tries && now_ns && now_ns - p->python_looked_ns >= PYTHON_LOOK_AGAIN_NS;
	if (!late && p->python_tries == PYTHON_LOOKS - 1)
		return;
	maps = symbolizer__maps_since(c->symbolizer, p->pid, late ? now_ns : 0, &read_ns);
	/* Nothing read since the last look: nothing new to look at. */
	if (p->python_tries && read_ns == p->python_maps_ns) {
		if (late)
			p->python_tries = PYTHON_LOOKS;
		return;
	}
	if (!p->python_tries)
		p->python_looked_ns = now_ns ? now_ns : clock__monotonic_ns();
	p->python_tries = late ? PYTHON_LOOKS : p->python_tries + 1;
	p->python_maps_ns = read_ns;
	python__forget(c->python, p->pid);
	if (python__detect(c->python, p->pid, maps, &layout))
		return;
	p->python_tries = PYTHON_LOOKS;
	log__info("pid %u runs CPython %u.%u: its Python frames are walked", p->pid,
		  layout.version >> 8, layout.version & 0xff);
	if (c->python_sink(c->python_sink_ctx, p->pid, &layout))
		log__info("pid %u runs CPython, but its frames cannot be walked: the map is full",
			  p->pid);
}

/* The frames are named now, while the process lives: its wait comes right after. */
static int python_record(struct collector *c, const struct offcpu_python_record *r, size_t size)
{
	struct python_pending *p;

	if (size < OFFCPU_PYTHON_HEADER_SIZE || r->frames > OFFCPU_PY_MAX_FRAMES ||
	    size < OFFCPU_PYTHON_HEADER_SIZE + r->frames * sizeof(r->frame[0]))
		return malformed(c, r, size, "shorter than its Python frames");
	p = u32_key__find_or_add(c->python_pending, r->tid, sizeof(*p),
				 offsetof(struct python_pending, left.tid), NULL);
	if (!p)
		return -ENOMEM;
	p->left.looked = false;
	p->end_ts_ns = r->end_ts_ns;
	p->c_call_ends = r->c_call_ends;
	p->nr = python__name(c->python, r, p->frames, OFFCPU_PY_MAX_FRAMES,
			     &c->profile->counters[OFFCPU_CNT_PY_UNNAMED]);
	return 0;
}

/* The user stack with the Python frames of its wait in place of the evaluator's. */
static const struct stack *with_python(struct collector *c, const struct offcpu_wait_record *r,
				       const struct stack *user)
{
	struct python_pending *p = hash_table__find(c->python_pending, &r->tid);
	size_t n;

	if (!p || p->end_ts_ns != r->end_ts_ns)
		return user;
	n = python_merge(user ? user->frames : NULL, user ? user->nr : 0, p->frames, p->nr,
			 p->c_call_ends, c->merged, ARRAY_SIZE(c->merged));
	free(hash_table__remove(c->python_pending, &r->tid));
	return n ? profile__intern_stack(c->profile, c->merged, n) : user;
}

static int wait_record(struct collector *c, const struct offcpu_wait_record *r, size_t size)
{
	uint32_t kernel_frames, user_frames;
	struct process_info *process;
	bool filtered, cut_short = false;
	const char *parked = NULL;
	struct wait w = { 0 };
	char comm[OFFCPU_COMM_LEN + 1];
	int err;

	if (size < OFFCPU_WAIT_HEADER_SIZE)
		return malformed(c, r, size, "shorter than a wait's header");
	kernel_frames = r->kernel_frames;
	user_frames = r->user_frames;
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH || user_frames > OFFCPU_MAX_STACK_DEPTH)
		return malformed(c, r, size, "more frames than a stack holds");
	if (size < OFFCPU_WAIT_HEADER_SIZE + (kernel_frames + user_frames) * sizeof(__u64))
		return malformed(c, r, size, "shorter than its frames");
	/* Shown or not, a wait recorded is a wait accounted for. */
	if (c->threads) {
		err = thread_accounts__add_wait(c->threads, r->tid, r->duration_ns);
		if (err)
			return err;
	}
	memcpy(comm, r->comm, OFFCPU_COMM_LEN);
	comm[OFFCPU_COMM_LEN] = '\0';
	w.end_ts_ns = r->end_ts_ns;
	w.duration_ns = r->duration_ns;
	w.weight_ns = weight_of(c, r);
	w.pid = r->pid;
	w.tid = r->tid;
	w.cpu = r->cpu;
	w.state = r->state < OFFCPU_STATE_COUNT ? r->state : OFFCPU_STATE_OTHER;
	w.open = r->flags & (OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER);
	if (r->flags & OFFCPU_WAIT_LEAF_MISSED)
		c->profile->counters[OFFCPU_CNT_KERNEL_LEAF_MISSED]++;
	w.comm = strpool__intern(c->profile->strings, comm);
	if (!w.comm)
		return -ENOMEM;
	if (kernel_frames) {
		w.kernel_stack = symbolize(c, r->pid, r->ips, kernel_frames, true, r->end_ts_ns);
		if (!w.kernel_stack)
			return -ENOMEM;
	}
	if (w.kernel_stack)
		w.state = classify__state(w.state, w.kernel_stack->frames, w.kernel_stack->nr);
	/* Frame-pointer walks end on a zero return address: not a frame. */
	while (user_frames && !r->ips[kernel_frames + user_frames - 1])
		user_frames--;
	c->fp_walk = r->user_stack != OFFCPU_USTACK_COPIED;
	if (r->user_stack == OFFCPU_USTACK_COPIED) {
		int nr =
		    unwind_copy(c, r, size, OFFCPU_WAIT_HEADER_SIZE + kernel_frames * sizeof(__u64),
				r->pid, r->end_ts_ns, depth_max(r->stack_depth), &cut_short);

		if (nr < 0)
			return malformed(c, r, size, "shorter than its user stack copy");
		if (nr) {
			w.user_stack = symbolize_unwound(c, r->pid, r->end_ts_ns, (uint32_t)nr);
			if (!w.user_stack)
				return -ENOMEM;
		}
	} else if (r->user_stack == OFFCPU_USTACK_TAKEN_LEAF && user_frames) {
		int nr;

		user_frames = user_frames_kept(c, r, user_frames, &cut_short);
		nr = fix_leaf(c, r, size, r->ips + kernel_frames, user_frames);
		if (nr < 0)
			return malformed(c, r, size, "shorter than its user stack copy");
		w.user_stack = symbolize_unwound(c, r->pid, r->end_ts_ns, (uint32_t)nr);
		if (!w.user_stack)
			return -ENOMEM;
	} else if (r->user_stack == OFFCPU_USTACK_TAKEN && user_frames) {
		user_frames = user_frames_kept(c, r, user_frames, &cut_short);
		w.user_stack =
		    symbolize(c, r->pid, r->ips + kernel_frames, user_frames, false, r->end_ts_ns);
		if (!w.user_stack)
			return -ENOMEM;
	}
	if (w.user_stack)
		parked = c->parked;
	err = fill_wakeup(c, r, &w);
	if (err)
		return err;
	if (hash_table__size(c->python_pending)) {
		const struct stack *native = w.user_stack;

		w.user_stack = with_python(c, r, native);
		if (native && !w.user_stack)
			return -ENOMEM;
	}
	process = process_of(c, r->pid);
	if (!process)
		return -ENOMEM;
	look_for_python(c, process, r->end_ts_ns);
	w.title = title_of(c, process, comm, r->end_ts_ns);
	w.cgroup = cgroup_of(c, r->cgroup_id, r->end_ts_ns);
	if (!w.cgroup)
		return -ENOMEM;
	if (c->label_reader && r->read_mask) {
		struct label_values lv;

		label_reader__labels(c->label_reader, r->pid, r->read_mask, r->read_values,
				     r->read_str, &lv);
		w.labels = profile__intern_labels(c->profile, lv.items, lv.nr, &err);
		if (err)
			return err;
	}
	filtered = c->state_mask && !(c->state_mask & (1u << w.state));
	if (filtered)
		c->profile->counters[OFFCPU_CNT_FILTERED]++;
	if (r->user_stack == OFFCPU_USTACK_FROM_NEXT)
		return filtered ? 0 : add_chain(c, &w);
	/*
	 * A wait recovered at a later switch-out has no user
	 * stack: the thread's chain waits on for its next record's.
	 */
	if (r->flags & OFFCPU_WAIT_RECOVERED) {
		if (filtered)
			return 0;
		w.wait_class = wait_class_of(c, &w, NULL);
		return w.wait_class ? profile__add(c->profile, &w) : -ENOMEM;
	}
	/* Even a wait filtered out brings the user stack its thread's chain waits for. */
	err = close_chain(c, w.tid, w.user_stack, cut_short, parked, w.labels);
	if (err || filtered)
		return err;
	if (cut_short)
		c->profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT]++;
	w.wait_class = wait_class_of(c, &w, parked);
	if (!w.wait_class)
		return -ENOMEM;
	return profile__add(c->profile, &w);
}

/* A new image or a gone process: its old user addresses mean nothing now. */
static void forget_process(struct collector *c, uint32_t pid)
{
	struct process_info *p = hash_table__remove(c->processes, &pid);

	if (p)
		process_info_free(p);
}

/*
 * A process is gone: its exit record came, or the reaper found it gone
 * (collector__reap). Its waits still in the ring buffer were reserved
 * before its exit record, so they were read before it.
 */
static void process_gone(struct collector *c, uint32_t pid)
{
	symbolizer__exit(c->symbolizer, pid);
	forget_process(c, pid);
	python__forget(c->python, pid);
	if (c->label_reader)
		label_reader__exit(c->label_reader, pid);
	reaper__forget(c->reaper, pid);
}

static void look_at(void *ctx, uint32_t pid)
{
	reaper__look_at(ctx, pid);
}

static int task_record(struct collector *c, const struct offcpu_task_record *r)
{
	switch (r->type) {
	case OFFCPU_RECORD_EXEC: {
		struct process_info *p;

		symbolizer__exec(c->symbolizer, r->pid);
		forget_process(c, r->pid);
		python__forget(c->python, r->pid);
		p = process_of(c, r->pid);
		if (p)
			look_for_python(c, p, 0);
		if (c->label_reader)
			label_reader__exec(c->label_reader, r->pid);
		return 0;
	}
	case OFFCPU_RECORD_FORK:
		symbolizer__fork(c->symbolizer, r->parent_pid, r->pid);
		python__fork(c->python, r->parent_pid, r->pid);
		if (c->label_reader)
			label_reader__fork(c->label_reader, r->parent_pid, r->pid);
		return 0;
	case OFFCPU_RECORD_RUNNING: {
		struct process_info *p;

		symbolizer__exec(c->symbolizer, r->pid);
		/* Its waits open now may not end by the stop: their Python frames are walked. */
		p = process_of(c, r->pid);
		if (p)
			look_for_python(c, p, 0);
		return 0;
	}
	default:
		if (!c->drop_exits)
			process_gone(c, r->pid);
		return 0;
	}
}

/*
 * The tids of table's entries whose thread is gone (no /proc/TID) and
 * that were held at the look before this one already: a thread's records
 * come within the reader's 50 ms poll of its exit, a look 10 s apart.
 */
static int gone_threads(struct hash_table *table, uint32_t **tids, size_t *nr)
{
	struct hash_table_iter it = { 0 };
	size_t cap = 0;
	void *value;

	*tids = NULL;
	*nr = 0;
	while (hash_table__next(table, &it, NULL, &value)) {
		struct thread_leftover *left = value;

		if (!left->looked) {
			left->looked = true;
			continue;
		}
		if (!proc_root__gone(left->tid))
			continue;
		if (*nr == cap) {
			uint32_t *grown = realloc(*tids, (cap = cap ? 2 * cap : 16) * sizeof(**tids));

			if (!grown)
				return -ENOMEM;
			*tids = grown;
		}
		(*tids)[(*nr)++] = left->tid;
	}
	return 0;
}

/*
 * What threads that exited left for a next record that never comes:
 * their chained waits (added without a user stack, counted lost, as at a
 * recording's end), wakers' stacks (unmatched) and Python frames. A
 * recording frees them at its end; offcpu serve held them for good, one
 * set per thread that ever exited so.
 */
static int reap_threads(struct collector *c)
{
	struct hash_table *tables[] = { c->chains, c->waker_stacks, c->python_pending };
	uint32_t *tids;
	size_t nr, i, t;
	int err = 0;

	for (t = 0; t < ARRAY_SIZE(tables) && !err; t++) {
		err = gone_threads(tables[t], &tids, &nr);
		for (i = 0; i < nr && !err; i++) {
			if (tables[t] == c->chains) {
				err = close_chain(c, tids[i], NULL, false, NULL, NULL);
			} else if (tables[t] == c->waker_stacks) {
				drop_waker_stacks(c, hash_table__remove(tables[t], &tids[i]));
			} else {
				free(hash_table__remove(tables[t], &tids[i]));
			}
		}
		c->profile->counters[OFFCPU_CNT_THREAD_LEFTOVERS_REAPED] += i;
		free(tids);
	}
	return err;
}

int collector__reap(struct collector *c, uint64_t now_ns)
{
	struct hash_table_iter it = { 0 };
	uint64_t started = clock__monotonic_ns();
	size_t nr, held, i;
	uint32_t *pids;
	const void *key;
	int err;

	if (!reaper__look_due(c->reaper, now_ns))
		return 0;
	while (hash_table__next(c->processes, &it, &key, NULL))
		reaper__look_at(c->reaper, *(const uint32_t *)key);
	symbolizer__for_each_process(c->symbolizer, look_at, c->reaper);
	err = reaper__end_look(c->reaper, &pids, &nr, &held);
	for (i = 0; i < nr; i++) {
		process_gone(c, pids[i]);
		if (c->log_reaps)
			fprintf(stderr, "reaped: pid %" PRIu32 "\n", pids[i]);
	}
	free(pids);
	c->profile->counters[OFFCPU_CNT_PROCESSES_REAPED] += nr;
	err = reap_threads(c) ?: err;
	if (c->log_reaps)
		fprintf(stderr, "reap: held %zu reaped %zu took %" PRIu64 " us\n", held, nr,
			(clock__monotonic_ns() - started) / 1000);
	return err;
}

int collector__record(struct collector *c, const void *data, size_t size)
{
	const struct offcpu_task_record *header = data;

	if (size < sizeof(header->type))
		return malformed(c, data, size, "shorter than its type");
	switch (header->type) {
	case OFFCPU_RECORD_WAIT:
		return wait_record(c, data, size);
	case OFFCPU_RECORD_WAKER:
		return waker_record(c, data, size);
	case OFFCPU_RECORD_PYTHON:
		return python_record(c, data, size);
	case OFFCPU_RECORD_EXEC:
	case OFFCPU_RECORD_FORK:
	case OFFCPU_RECORD_EXIT:
	case OFFCPU_RECORD_RUNNING:
		if (size < sizeof(*header))
			return malformed(c, data, size, "shorter than a process record");
		return task_record(c, header);
	case OFFCPU_RECORD_THREAD:
		if (size < sizeof(struct offcpu_thread_record))
			return malformed(c, data, size, "shorter than a thread record");
		return c->threads ? thread_accounts__exit(c->threads, data, c->profile) : 0;
	default:
		return malformed(c, data, size, "unknown type");
	}
}

/* A new, empty table for *cache, its cached stacks freed; -ENOMEM keeps the old. */
static int renew_cache(struct hash_table **cache, hash_table_hash_fn hash,
		       hash_table_equal_fn equal)
{
	struct hash_table *fresh = hash_table__new(hash, equal);

	if (!fresh)
		return -ENOMEM;
	hash_table__free_values(*cache, free);
	*cache = fresh;
	return 0;
}

static int intern_again(struct collector *c, const struct stack **stack)
{
	if (!*stack)
		return 0;
	*stack = profile__intern_stack(c->profile, (*stack)->frames, (*stack)->nr);
	return *stack ? 0 : -ENOMEM;
}

int collector__forget_stacks(struct collector *c)
{
	struct hash_table_iter it = { 0 };
	void *value;
	size_t i;
	int err;

	err = renew_cache(&c->kernel_stacks, hash_raw, equal_raw);
	err = err ?: renew_cache(&c->classes, hash_class, equal_class);
	while (!err && hash_table__next(c->processes, &it, NULL, &value)) {
		struct process_info *p = value;

		err = renew_cache(&p->stacks, hash_raw, equal_raw);
	}
	memset(&it, 0, sizeof(it));
	while (!err && hash_table__next(c->chains, &it, NULL, &value)) {
		struct chain *chain = value;

		for (i = 0; i < chain->nr && !err; i++) {
			struct wait *w = &chain->waits[i];

			err = intern_again(c, &w->kernel_stack);
			err = err ?: intern_again(c, &w->user_stack);
			err = err ?: intern_again(c, &w->waker_kernel_stack);
			err = err ?: intern_again(c, &w->waker_user_stack);
		}
	}
	/* --wakers: the wakers' stacks waiting for their wait's record. */
	memset(&it, 0, sizeof(it));
	while (!err && hash_table__next(c->waker_stacks, &it, NULL, &value)) {
		struct waker_stacks *ws;

		for (ws = value; ws && !err; ws = ws->older) {
			err = intern_again(c, &ws->kernel_stack);
			err = err ?: intern_again(c, &ws->user_stack);
		}
	}
	return err;
}

void collector__mark_strings(const struct collector *c, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;
	size_t i;

	while (hash_table__next(c->processes, &it, NULL, &value))
		strpool__mark(strings, ((const struct process_info *)value)->title);
	memset(&it, 0, sizeof(it));
	while (hash_table__next(c->chains, &it, NULL, &value)) {
		const struct chain *chain = value;

		for (i = 0; i < chain->nr; i++)
			profile__mark_wait(&chain->waits[i], strings);
	}
	memset(&it, 0, sizeof(it));
	while (hash_table__next(c->classes, &it, NULL, &value))
		strpool__mark(strings, ((const struct cached_class *)value)->wait_class);
	memset(&it, 0, sizeof(it));
	while (hash_table__next(c->python_pending, &it, NULL, &value)) {
		const struct python_pending *p = value;

		profile__mark_frames(p->frames, p->nr, strings, c->profile->inlines);
	}
	python__mark_strings(c->python, strings);
	cgroups__mark_strings(c->cgroups, strings);
}

static void resolve_lines(void *ctx, struct frame *f)
{
	/* An interpreted frame has its source from its code object already. */
	if (f->kind)
		return;
	symbolizer__resolve_lines(ctx, f);
}

void collector__set_label_reader(struct collector *c, struct label_reader *lr)
{
	c->label_reader = lr;
}

int collector__finish(struct collector *c)
{
	struct hash_table_iter it = { 0 };
	const void *key;
	void *value;
	int err = 0;

	/* Removing while iterating is unsafe: take one at a time. */
	while (!err && hash_table__next(c->chains, &it, &key, NULL)) {
		uint32_t tid = *(const uint32_t *)key;

		err = close_chain(c, tid, NULL, false, NULL, NULL);
		memset(&it, 0, sizeof(it));
	}
	memset(&it, 0, sizeof(it));
	while (hash_table__next(c->waker_stacks, &it, NULL, &value)) {
		const struct waker_stacks *ws;

		for (ws = value; ws; ws = ws->older)
			c->profile->counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED]++;
	}
	c->profile->counters[OFFCPU_CNT_PROC_GONE] = symbolizer__processes_gone(c->symbolizer);
	profile__for_each_frame(c->profile, resolve_lines, c->symbolizer);
	return err;
}
