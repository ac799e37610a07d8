// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "classify/states.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/log.h"
#include "lib/u32_key.h"
#include "objects/objects.h"
#include "offcpu.h"
#include "proc/cgroups.h"
#include "proc/proc_root.h"
#include "proc/proctitle.h"
#include "python/python.h"
#include "trace/collector.h"
#include "trace/label_reader.h"
#include "trace/reaper.h"
#include "trace/stack_builder.h"
#include "trace/thread_accounts.h"

/* The title of a process as shown: a line of text, not its whole argv. */
#define PROCESS_TITLE_MAX 256

/*
 * What the collector knows of a live process, until it execs or exits (its
 * user stacks: stack_builder.h).
 */
struct process_info {
	uint32_t pid;
	const char *title; /* interned; NULL: none, or the same as comm */
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
	/* What each waited on, named again once the user stack can tell a lock's kind. */
	struct offcpu_object *objects;
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
	struct stack_builder *stacks;
	struct hash_table *processes;	 /* pid -> process_info */
	struct hash_table *chains;	 /* tid -> chain */
	struct hash_table *classes;	 /* (stacks, state) -> cached_class */
	struct hash_table *waker_stacks; /* Wakee tid -> waker_stacks */
	const struct rule_set *rules;
	struct label_reader *label_reader; /* NULL: no labels */
	uint32_t state_mask;
	bool malformed_reported;
	uint64_t short_min_ns; /* collector__set_weights */
	uint32_t sample_rate;
	struct thread_accounts *threads; /* collector__account_threads */
	struct cgroups *cgroups;	 /* Made at the first wait */
	/* CPython processes, and the frames their waits bring. */
	struct python *python;
	struct symbol_limits python_limits;
	struct hash_table *python_pending; /* tid -> python_pending */
	collector_python_fn python_sink;
	void *python_sink_ctx;
	/* What waits waited on: locks, their holders, sleeps, children. */
	struct objects *objects;
	struct symbol_limits object_limits;
	/* Processes whose exit record was lost, freed (collector__reap). */
	struct reaper *reaper;
	bool drop_exits; /* collector_opts.drop_exits: exit records are ignored */
	bool log_reaps;	 /* collector_opts.log_reaps: each look is logged */
};

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

static struct process_info *process_of(struct collector *c, uint32_t pid)
{
	bool added;
	struct process_info *p = u32_key__find_or_add(c->processes, pid, sizeof(*p),
						      offsetof(struct process_info, pid), &added);

	/* Who it is, so that a reused PID tells (reaper.h). */
	if (p && added)
		reaper__hold(c->reaper, pid);
	return p;
}

/* A process's user stacks are cached from now: it is held from now, as its title is. */
static int user_stacks_new(void *ctx, uint32_t pid)
{
	return process_of(ctx, pid) ? 0 : -ENOMEM;
}

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
	c->processes = hash_table__new(u32_key__hash, u32_key__equal);
	c->chains = hash_table__new(u32_key__hash, u32_key__equal);
	c->classes = hash_table__new(hash_class, equal_class);
	c->waker_stacks = hash_table__new(u32_key__hash, u32_key__equal);
	limits__defaults(&c->python_limits);
	limits__defaults(&c->object_limits);
	c->python_pending = hash_table__new(u32_key__hash, u32_key__equal);
	c->drop_exits = o->drop_exits;
	c->log_reaps = o->log_reaps;
	if (!c->processes || !c->chains || !c->classes || !c->waker_stacks || !c->python_pending ||
	    reaper__new(&c->reaper) || objects__new(&c->object_limits, &c->objects) ||
	    python__new(profile->strings, &c->python_limits, &c->python) ||
	    stack_builder__new(
		profile, symbolizer,
		&(struct stack_builder_opts){ .process_new = user_stacks_new, .ctx = c },
		&c->stacks)) {
		collector__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static void chain_free(void *value)
{
	struct chain *chain = value;

	free(chain->waits);
	free(chain->objects);
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
	hash_table__free_values(c->classes, free);
	hash_table__free_values(c->processes, free);
	hash_table__free_values(c->chains, chain_free);
	hash_table__free_values(c->waker_stacks, waker_stacks_free);
	hash_table__free_values(c->python_pending, free);
	python__free(c->python);
	objects__free(c->objects);
	stack_builder__free(c->stacks);
	cgroups__free(c->cgroups);
	thread_accounts__free(c->threads);
	reaper__free(c->reaper);
	free(c);
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

/* parked: what w's user stack's goroutine parked for, or NULL. */
static int add_classified(struct collector *c, struct wait *w, const char *parked)
{
	w->wait_class = wait_class_of(c, w, parked);
	return w->wait_class ? profile__add(c->profile, w) : -ENOMEM;
}

/* What it waited on, once its user stack can tell a lock's kind. */
static int name_object(struct collector *c, uint32_t pid, const struct offcpu_object *object,
		       struct wait *w)
{
	struct object_name name;
	struct wait_object o;
	int err;

	if (!objects__name(c->objects, pid, object, w->user_stack, w->kernel_stack, &name))
		return 0;
	if (name.failed)
		c->profile->counters[OFFCPU_CNT_OBJECT_FAILURES]++;
	o = (struct wait_object){
		.kind = name.kind,
		.name = name.name,
		.addr = name.addr,
		.holder_pid = name.holder_pid,
		.holder_tid = name.holder_tid,
		.holder_comm = name.holder_tid ? name.holder_comm : NULL,
	};
	w->object = profile__intern_object(c->profile, &o, &err);
	return err;
}

static int add_chain(struct collector *c, const struct wait *w, const struct offcpu_object *object)
{
	struct chain *chain = u32_key__find_or_add(c->chains, w->tid, sizeof(*chain),
						   offsetof(struct chain, left.tid), NULL);
	struct offcpu_object *objects;
	struct wait *grown;

	if (!chain)
		return -ENOMEM;
	grown = realloc(chain->waits, (chain->nr + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	chain->waits = grown;
	objects = realloc(chain->objects, (chain->nr + 1) * sizeof(*objects));
	if (!objects)
		return -ENOMEM;
	chain->objects = objects;
	chain->objects[chain->nr] = *object;
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
		err = name_object(c, w->pid, &chain->objects[i], w);
		if (!user_stack)
			c->profile->counters[OFFCPU_CNT_USTACK_LOST]++;
		else if (cut_short)
			c->profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT]++;
		/* Its user frames are known only now. */
		err = err ?: add_classified(c, w, user_stack ? parked : NULL);
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

/* Symbolized at once: the waker's process may be gone by the wait's record. */
static int waker_record(struct collector *c, const struct offcpu_waker_record *r, size_t size)
{
	uint32_t kernel_frames = r->kernel_frames, user_frames = r->user_frames;
	struct waker_stacks *ws, *last;
	struct built_stacks stacks;
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
	err = stack_builder__waker(c->stacks, r, size, &stacks);
	if (err) {
		free(ws);
		return err == -EINVAL
			   ? malformed(c, r, size, "shorter than its waker's user stack copy")
			   : err;
	}
	ws->kernel_stack = stacks.kernel_stack;
	ws->user_stack = stacks.user_stack;
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

/* The Python frames python_record named for this wait, or NULL. */
static struct python_pending *python_of(struct collector *c, const struct offcpu_wait_record *r)
{
	struct python_pending *p;

	if (!hash_table__size(c->python_pending))
		return NULL;
	p = hash_table__find(c->python_pending, &r->tid);
	return p && p->end_ts_ns == r->end_ts_ns ? p : NULL;
}

static int check_wait(struct collector *c, const struct offcpu_wait_record *r, size_t size)
{
	if (size < OFFCPU_WAIT_HEADER_SIZE)
		return malformed(c, r, size, "shorter than a wait's header");
	if (r->kernel_frames > OFFCPU_MAX_STACK_DEPTH || r->user_frames > OFFCPU_MAX_STACK_DEPTH)
		return malformed(c, r, size, "more frames than a stack holds");
	if (size < OFFCPU_WAIT_HEADER_SIZE + (r->kernel_frames + r->user_frames) * sizeof(__u64))
		return malformed(c, r, size, "shorter than its frames");
	return 0;
}

/* Shown or not, a wait recorded is a wait accounted for. */
static int account_wait(struct collector *c, const struct offcpu_wait_record *r)
{
	return c->threads ? thread_accounts__add_wait(c->threads, r->tid, r->duration_ns) : 0;
}

static int decode_wait(struct collector *c, const struct offcpu_wait_record *r, struct wait *w)
{
	char comm[OFFCPU_COMM_LEN + 1];

	memcpy(comm, r->comm, OFFCPU_COMM_LEN);
	comm[OFFCPU_COMM_LEN] = '\0';
	w->end_ts_ns = r->end_ts_ns;
	w->duration_ns = r->duration_ns;
	w->weight_ns = weight_of(c, r);
	w->pid = r->pid;
	w->tid = r->tid;
	w->cpu = r->cpu;
	w->state = r->state < OFFCPU_STATE_COUNT ? r->state : OFFCPU_STATE_OTHER;
	w->open = r->flags & (OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER);
	if (r->flags & OFFCPU_WAIT_LEAF_MISSED)
		c->profile->counters[OFFCPU_CNT_KERNEL_LEAF_MISSED]++;
	w->comm = strpool__intern(c->profile->strings, comm);
	return w->comm ? 0 : -ENOMEM;
}

/* The wait's stacks, its Python frames put in (and no longer pending). */
static int build_stacks(struct collector *c, const struct offcpu_wait_record *r, size_t size,
			struct wait *w, struct built_stacks *out)
{
	struct python_pending *p = python_of(c, r);
	struct python_frames python = { 0 };
	int err;

	if (p)
		python = (struct python_frames){ p->frames, p->nr, p->c_call_ends };
	err = stack_builder__wait(c->stacks, r, size, p ? &python : NULL, out);
	if (err == -EINVAL)
		return malformed(c, r, size, "shorter than its user stack copy");
	if (err)
		return err;
	if (p)
		free(hash_table__remove(c->python_pending, &r->tid));
	w->kernel_stack = out->kernel_stack;
	w->user_stack = out->user_stack;
	return 0;
}

static int fill_labels(struct collector *c, const struct offcpu_wait_record *r, struct wait *w)
{
	struct label_values lv;
	int err = 0;

	if (!c->label_reader || !r->read_mask)
		return 0;
	label_reader__labels(c->label_reader, r->pid, r->read_mask, r->read_values, r->read_str,
			     &lv);
	w->labels = profile__intern_labels(c->profile, lv.items, lv.nr, &err);
	return err;
}

/* What the record tells beyond its stacks: the waker, the title, the cgroup, labels. */
static int enrich_wait(struct collector *c, const struct offcpu_wait_record *r, struct wait *w)
{
	struct process_info *process;
	int err = fill_wakeup(c, r, w);

	if (err)
		return err;
	process = process_of(c, r->pid);
	if (!process)
		return -ENOMEM;
	look_for_python(c, process, r->end_ts_ns);
	w->title = title_of(c, process, w->comm, r->end_ts_ns);
	w->cgroup = cgroup_of(c, r->cgroup_id, r->end_ts_ns);
	if (!w->cgroup)
		return -ENOMEM;
	return fill_labels(c, r, w);
}

/*
 * Into the profile, or, for a wait whose user stack the thread's next
 * record brings, into its chain; the chain the thread had waits no more.
 */
static int add_wait(struct collector *c, const struct offcpu_wait_record *r, struct wait *w,
		    const struct built_stacks *stacks)
{
	bool filtered = c->state_mask && !(c->state_mask & (1u << w->state));
	int err;

	if (filtered)
		c->profile->counters[OFFCPU_CNT_FILTERED]++;
	if (r->user_stack == OFFCPU_USTACK_FROM_NEXT)
		return filtered ? 0 : add_chain(c, w, &r->object);
	/*
	 * A wait recovered at a later switch-out has no user
	 * stack: the thread's chain waits on for its next record's.
	 */
	if (r->flags & OFFCPU_WAIT_RECOVERED)
		return filtered ? 0 : add_classified(c, w, NULL);
	/* Even a wait filtered out brings the user stack its thread's chain waits for. */
	err = close_chain(c, w->tid, w->user_stack, stacks->cut_short, stacks->parked, w->labels);
	if (err || filtered)
		return err;
	if (stacks->cut_short)
		c->profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT]++;
	return add_classified(c, w, stacks->parked);
}

static int wait_record(struct collector *c, const struct offcpu_wait_record *r, size_t size)
{
	struct built_stacks stacks;
	struct wait w = { 0 };
	int err;

	err = check_wait(c, r, size);
	err = err ?: account_wait(c, r);
	err = err ?: decode_wait(c, r, &w);
	err = err ?: build_stacks(c, r, size, &w, &stacks);
	err = err ?: enrich_wait(c, r, &w);
	/* One whose user stack comes with the thread's next record is named with it. */
	if (!err && r->user_stack != OFFCPU_USTACK_FROM_NEXT)
		err = name_object(c, r->pid, &r->object, &w);
	if (err)
		return err;
	if (w.kernel_stack)
		w.state = classify__state(w.state, w.kernel_stack->frames, w.kernel_stack->nr);
	return add_wait(c, r, &w, &stacks);
}

/*
 * An on-CPU sample (-F): a wait's record in layout, stacks and all, that
 * goes into the profile's samples. No thread state or duration filter
 * applies: those are the waits'.
 */
static int sample_record(struct collector *c, const struct offcpu_wait_record *r, size_t size)
{
	struct built_stacks stacks;
	struct wait s = { 0 };
	int err;

	err = check_wait(c, r, size);
	err = err ?: decode_wait(c, r, &s);
	err = err ?: build_stacks(c, r, size, &s, &stacks);
	err = err ?: enrich_wait(c, r, &s);
	if (err)
		return err;
	s.state = OFFCPU_STATE_RUNNING;
	s.weight_ns = 0;
	s.open = 0;
	if (stacks.cut_short)
		c->profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT]++;
	if (!c->profile->oncpu.period_ns)
		c->profile->oncpu.period_ns = r->duration_ns;
	return profile__add_sample(c->profile, &s);
}

/* A new image or a gone process: its old user addresses mean nothing now. */
static void forget_process(struct collector *c, uint32_t pid)
{
	free(hash_table__remove(c->processes, &pid));
	stack_builder__forget_process(c->stacks, pid);
	objects__forget(c->objects, pid);
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
			uint32_t *grown =
			    realloc(*tids, (cap = cap ? 2 * cap : 16) * sizeof(**tids));

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
	case OFFCPU_RECORD_ONCPU:
		return sample_record(c, data, size);
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

/* A new, empty class cache, the old one's classes freed; -ENOMEM keeps the old. */
static int renew_classes(struct collector *c)
{
	struct hash_table *fresh = hash_table__new(hash_class, equal_class);

	if (!fresh)
		return -ENOMEM;
	hash_table__free_values(c->classes, free);
	c->classes = fresh;
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

	err = stack_builder__forget_stacks(c->stacks);
	err = err ?: renew_classes(c);
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
