// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "profile/wait_chains.h"

/*
 * A thread's waits kept: a lock held over more waits than this has its
 * earlier ones missed, and the chain says so as time not seen asleep.
 */
#define SPANS 16
/*
 * Threads whose waits are kept at once (400 bytes each): past it, all are
 * let go, and a chain misses the holder's waits from before.
 */
#define MAX_THREADS 8192

struct span {
	uint64_t start_ns;
	uint64_t end_ns;
	const char *what; /* interned */
};

struct chain_entry;

/*
 * A wait on a lock this thread held that ended before the thread's own
 * wait then in progress did (cut short by a signal or a timeout): that
 * wait's part inside it is added when it arrives.
 */
struct pending {
	struct chain_entry *chain;
	uint64_t start_ns;
	uint64_t end_ns;
};

#define PENDING 8

struct thread_spans {
	uint32_t tid;
	uint32_t next; /* where the next span goes, round the ring */
	struct span spans[SPANS];
	uint64_t last_end_ns; /* of its latest wait */
	struct pending pending[PENDING];
};

struct chain_entry {
	const struct wait_object *object;
	struct wait_chain chain;
};

struct wait_chains {
	struct strpool *strings;
	struct hash_table *threads; /* tid -> struct thread_spans */
	struct hash_table *chains;  /* struct wait_object * -> struct chain_entry */
};

static uint64_t hash_pointer(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(void *), 0);
}

static bool equal_pointer(const void *a, const void *b)
{
	return *(void *const *)a == *(void *const *)b;
}

int wait_chains__new(struct strpool *strings, struct wait_chains **out)
{
	struct wait_chains *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->strings = strings;
	c->threads = hash_table__new(u32_key__hash, u32_key__equal);
	c->chains = hash_table__new(hash_pointer, equal_pointer);
	if (!c->threads || !c->chains) {
		wait_chains__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void wait_chains__free(struct wait_chains *c)
{
	if (!c)
		return;
	hash_table__free_values(c->threads, free);
	hash_table__free_values(c->chains, free);
	free(c);
}

/*
 * The first frame past the leaf's module (libc's wrappers: the program's
 * own code that called them), and its caller; else the leaf's.
 */
static void where(const struct stack *s, char *buf, size_t size)
{
	uint32_t i = 0;

	buf[0] = '\0';
	if (!s || !s->nr)
		return;
	while (i + 1 < s->nr && s->frames[i + 1].module == s->frames[0].module)
		i++;
	if (i + 1 < s->nr)
		i++;
	if (!s->frames[i].sym)
		return;
	if (i + 1 < s->nr && s->frames[i + 1].sym)
		snprintf(buf, size, " at %s <- %s", s->frames[i].sym, s->frames[i + 1].sym);
	else
		snprintf(buf, size, " at %s", s->frames[i].sym);
}

static const char *what_of(struct wait_chains *c, const struct wait *w)
{
	char text[320], at[256];
	bool runnable = w->state == OFFCPU_STATE_PREEMPTED || w->state == OFFCPU_STATE_RUNNING;

	if (runnable)
		return strpool__intern(c->strings, "runnable, waiting for a CPU");
	where(w->user_stack ? w->user_stack : w->kernel_stack, at, sizeof(at));
	snprintf(text, sizeof(text), "asleep in %s%s", w->wait_class ? w->wait_class : "?", at);
	return strpool__intern(c->strings, text);
}

void wait_chain__add_part(struct wait_chain *chain, const char *what, uint64_t ns)
{
	size_t i;

	for (i = 0; i < WAIT_CHAIN_PARTS; i++) {
		if (!chain->parts[i].what)
			chain->parts[i].what = what;
		if (chain->parts[i].what == what) {
			chain->parts[i].ns += ns;
			return;
		}
	}
	chain->other_ns += ns;
}

static void add_overlap(struct chain_entry *e, const struct span *s, uint64_t start_ns,
			uint64_t end_ns)
{
	uint64_t from = s->start_ns > start_ns ? s->start_ns : start_ns;
	uint64_t to = s->end_ns < end_ns ? s->end_ns : end_ns;

	if (s->what && to > from)
		wait_chain__add_part(&e->chain, s->what, to - from);
}

/* A wait of the holder t has come: its part of the waits on its locks still pending. */
static void settle_pending(struct thread_spans *t, const struct span *s)
{
	size_t i;

	for (i = 0; i < PENDING; i++) {
		struct pending *p = &t->pending[i];

		if (!p->chain)
			continue;
		add_overlap(p->chain, s, p->start_ns, p->end_ns);
		if (p->end_ns <= s->end_ns)
			p->chain = NULL;
	}
}

static void add_pending(struct thread_spans *t, struct chain_entry *e, uint64_t start_ns,
			uint64_t end_ns)
{
	size_t i;

	for (i = 0; i < PENDING; i++) {
		if (!t->pending[i].chain) {
			t->pending[i] = (struct pending){ e, start_ns, end_ns };
			return;
		}
	}
}

/* What the holder's kept waits overlap of [start_ns, end_ns). */
static int add_to_chain(struct wait_chains *c, const struct wait *w, uint64_t start_ns)
{
	struct thread_spans *t = u32_key__find_or_add(c->threads, w->object->holder_tid, sizeof(*t),
						      offsetof(struct thread_spans, tid), NULL);
	struct chain_entry *e = hash_table__find(c->chains, &w->object);
	size_t i;

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->object = w->object;
		if (hash_table__insert(c->chains, &e->object, e)) {
			free(e);
			return -ENOMEM;
		}
	}
	e->chain.waited_ns += w->duration_ns;
	e->chain.count++;
	for (i = 0; t && i < SPANS; i++)
		add_overlap(e, &t->spans[i], start_ns, w->end_ts_ns);
	/* The holder may be in a wait that has not ended yet. */
	if (t && t->last_end_ns < w->end_ts_ns)
		add_pending(t, e, start_ns, w->end_ts_ns);
	return 0;
}

int wait_chains__add(struct wait_chains *c, const struct wait *w)
{
	uint64_t start_ns = w->end_ts_ns - w->duration_ns;
	struct thread_spans *t;
	const char *what;

	if (hash_table__size(c->threads) >= MAX_THREADS) {
		hash_table__free_values(c->threads, free);
		c->threads = hash_table__new(u32_key__hash, u32_key__equal);
		if (!c->threads)
			return -ENOMEM;
	}
	if (w->object && w->object->holder_tid && w->object->holder_tid != w->tid &&
	    add_to_chain(c, w, start_ns))
		return -ENOMEM;
	t = u32_key__find_or_add(c->threads, w->tid, sizeof(*t), offsetof(struct thread_spans, tid),
				 NULL);
	what = t ? what_of(c, w) : NULL;
	if (!what)
		return -ENOMEM;
	t->spans[t->next] = (struct span){ start_ns, w->end_ts_ns, what };
	settle_pending(t, &t->spans[t->next]);
	t->next = (t->next + 1) % SPANS;
	if (w->end_ts_ns > t->last_end_ns)
		t->last_end_ns = w->end_ts_ns;
	return 0;
}

const struct wait_chain *wait_chains__find(const struct wait_chains *c, const struct wait_object *o)
{
	const struct chain_entry *e = hash_table__find(c->chains, &o);

	return e ? &e->chain : NULL;
}

void wait_chains__mark_strings(const struct wait_chains *c, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;
	size_t i;

	while (hash_table__next(c->threads, &it, NULL, &value)) {
		const struct thread_spans *t = value;

		for (i = 0; i < SPANS; i++)
			strpool__mark(strings, t->spans[i].what);
	}
	memset(&it, 0, sizeof(it));
	while (hash_table__next(c->chains, &it, NULL, &value)) {
		const struct chain_entry *e = value;

		for (i = 0; i < WAIT_CHAIN_PARTS; i++)
			strpool__mark(strings, e->chain.parts[i].what);
	}
}
