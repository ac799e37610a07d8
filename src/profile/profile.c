// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "profile/profile.h"

/*
 * Two identities for a stack. Exact: the addresses too, for formats that
 * list every wait with its addresses. Symbolic: where the code is (symbol,
 * module and offset in it), so the same code path in two processes (other
 * addresses under ASLR) is one stack, and memory follows the distinct code
 * paths, not the processes seen.
 */
static uint64_t hash_frames(const struct stack *s, bool exact)
{
	uint64_t h = s->nr;
	uint32_t i;

	for (i = 0; i < s->nr; i++) {
		const struct frame *f = &s->frames[i];
		uint64_t parts[4] = { exact ? f->addr : 0, (uintptr_t)f->sym, (uintptr_t)f->module,
				      f->module_off };

		h = hash_table__hash_bytes(parts, sizeof(parts), h);
	}
	return h;
}

static bool frames_equal(const struct frame *a, const struct frame *b, bool exact)
{
	return (!exact || a->addr == b->addr) && a->sym == b->sym && a->off == b->off &&
	       a->module == b->module && a->module_off == b->module_off && a->kernel == b->kernel;
}

static bool stacks_equal(const struct stack *x, const struct stack *y, bool exact)
{
	uint32_t i;

	if (x->nr != y->nr)
		return false;
	for (i = 0; i < x->nr; i++) {
		if (!frames_equal(&x->frames[i], &y->frames[i], exact))
			return false;
	}
	return true;
}

static uint64_t hash_stack_exact(const void *key)
{
	return hash_frames(key, true);
}

static bool equal_stack_exact(const void *a, const void *b)
{
	return stacks_equal(a, b, true);
}

static uint64_t hash_stack_symbolic(const void *key)
{
	return hash_frames(key, false);
}

static bool equal_stack_symbolic(const void *a, const void *b)
{
	return stacks_equal(a, b, false);
}

/* Issue #16: a wait not ended at the stop is an aggregate of its own; one begun before is not. */
static unsigned int still_open(const struct wait *w)
{
	return (w->open & OFFCPU_WAIT_OPEN_AFTER) != 0;
}

static const char *const open_names[] = { NULL, "before", "after", "both" };

const char *profile__open_name(unsigned int open)
{
	return open_names[open & (OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER)];
}

int profile__open_from_name(const char *name, unsigned int *open)
{
	unsigned int i;

	for (i = 1; i < sizeof(open_names) / sizeof(open_names[0]); i++) {
		if (!strcmp(name, open_names[i])) {
			*open = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Identity of an aggregate: every field of struct wait but the per-wait ones. */
static uint64_t hash_entry(const void *key)
{
	const struct wait *w = key;
	uint64_t h = hash_table__hash_bytes(&w->pid, sizeof(w->pid), 0);

	h = hash_table__hash_bytes(&w->tid, sizeof(w->tid), h);
	h = hash_table__hash_bytes(&w->state, sizeof(w->state), h);
	h = hash_table__hash_bytes(&w->comm, sizeof(w->comm), h);
	h = hash_table__hash_bytes(&w->title, sizeof(w->title), h);
	h = hash_table__hash_bytes(&w->wait_class, sizeof(w->wait_class), h);
	h = hash_table__hash_bytes(&w->kernel_stack, sizeof(w->kernel_stack), h);
	h = hash_table__hash_bytes(&w->user_stack, sizeof(w->user_stack), h);
	return h + still_open(w);
}

static bool equal_entry(const void *a, const void *b)
{
	const struct wait *x = a, *y = b;

	return x->pid == y->pid && x->tid == y->tid && x->state == y->state && x->comm == y->comm &&
	       x->title == y->title && x->wait_class == y->wait_class &&
	       x->kernel_stack == y->kernel_stack && x->user_stack == y->user_stack &&
	       still_open(x) == still_open(y);
}

int profile__new(bool keep_waits, struct profile **out)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->keep_waits = keep_waits;
	p->compact_at = PROFILE_COMPACT_ENTRIES;
	p->strings = strpool__new();
	p->inlines = inline_pool__new();
	p->stacks = keep_waits ? hash_table__new(hash_stack_exact, equal_stack_exact)
			       : hash_table__new(hash_stack_symbolic, equal_stack_symbolic);
	p->entries = hash_table__new(hash_entry, equal_entry);
	if (!p->strings || !p->inlines || !p->stacks || !p->entries) {
		profile__free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	hash_table__free_values(p->stacks, free);
	hash_table__free_values(p->entries, free);
	free(p->waits);
	strpool__free(p->strings);
	inline_pool__free(p->inlines);
	free(p);
}

const struct stack *profile__intern_stack(struct profile *p, const struct frame *frames, size_t nr)
{
	struct stack *s = malloc(sizeof(*s) + nr * sizeof(*frames)), *found;

	if (!s)
		return NULL;
	s->nr = (uint32_t)nr;
	memcpy(s->frames, frames, nr * sizeof(*frames));
	found = hash_table__find(p->stacks, s);
	if (found) {
		free(s);
		return found;
	}
	if (hash_table__insert(p->stacks, s, s)) {
		free(s);
		return NULL;
	}
	return s;
}

/*
 * Folds the entries of processes that have exited into one per comm, title,
 * state, class and stacks, under PROFILE_EXITED_ID: their time stays where
 * it was, only which thread it was is given up.
 */
static int compact(struct profile *p)
{
	struct profile_entry **dead = malloc(hash_table__size(p->entries) * sizeof(*dead));
	struct hash_table_iter it = { 0 };
	size_t nr = 0, i;
	const void *key;
	void *value;

	if (!dead)
		return -ENOMEM;
	while (hash_table__next(p->entries, &it, &key, &value)) {
		struct profile_entry *e = value;

		if (e->key.pid != PROFILE_EXITED_ID &&
		    !p->process_alive(p->process_alive_ctx, e->key.pid))
			dead[nr++] = e;
	}
	for (i = 0; i < nr; i++) {
		struct profile_entry *e = dead[i], *into;

		hash_table__remove(p->entries, &e->key);
		e->key.pid = PROFILE_EXITED_ID;
		e->key.tid = PROFILE_EXITED_ID;
		into = hash_table__find(p->entries, &e->key);
		if (into) {
			into->count += e->count;
			into->total_ns += e->total_ns;
			free(e);
		} else if (hash_table__insert(p->entries, &e->key, e)) {
			free(e);
			free(dead);
			return -ENOMEM;
		}
	}
	free(dead);
	/* Live threads alone past the mark: move it, not compact on every wait. */
	if (hash_table__size(p->entries) * 2 > p->compact_at)
		p->compact_at = hash_table__size(p->entries) * 2;
	return 0;
}

int profile__add(struct profile *p, const struct wait *w)
{
	struct profile_entry *e = hash_table__find(p->entries, w);

	/*
	 * Every sum a report shows is part of the total: if it cannot wrap,
	 * none can. Past 2^64 ns (584 years, so only a forged recording) the
	 * wait is refused, before anything is added: a wrong total is worse.
	 */
	if (w->duration_ns > UINT64_MAX - p->total_ns)
		return -EOVERFLOW;
	if (p->keep_waits) {
		if (p->nr_waits == p->waits_cap) {
			size_t cap = p->waits_cap ? p->waits_cap * 2 : 1024;
			struct wait *grown = realloc(p->waits, cap * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			p->waits = grown;
			p->waits_cap = cap;
		}
		p->waits[p->nr_waits++] = *w;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->key = *w;
		e->key.end_ts_ns = 0;
		e->key.duration_ns = 0;
		e->key.cpu = 0;
		e->key.open &= OFFCPU_WAIT_OPEN_AFTER;
		if (hash_table__insert(p->entries, &e->key, e)) {
			free(e);
			return -ENOMEM;
		}
	}
	e->count++;
	e->total_ns += w->duration_ns;
	p->total_count++;
	p->total_ns += w->duration_ns;
	if (p->process_alive && hash_table__size(p->entries) >= p->compact_at)
		return compact(p);
	return 0;
}

static int compare_entries(const void *a, const void *b)
{
	const struct profile_entry *x = *(struct profile_entry *const *)a;
	const struct profile_entry *y = *(struct profile_entry *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->key.pid != y->key.pid)
		return x->key.pid < y->key.pid ? -1 : 1;
	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid;
}

void profile__for_each_frame(struct profile *p, void (*fn)(void *ctx, struct frame *f), void *ctx)
{
	struct hash_table_iter it = { 0 };
	const void *key;
	void *value;
	uint32_t i;

	while (hash_table__next(p->stacks, &it, &key, &value)) {
		struct stack *s = value;

		for (i = 0; i < s->nr; i++)
			fn(ctx, &s->frames[i]);
	}
}

int profile__sorted_entries(const struct profile *p, struct profile_entry ***out, size_t *nr)
{
	size_t n = hash_table__size(p->entries), i = 0;
	struct hash_table_iter it = { 0 };
	struct profile_entry **array;
	void *value;

	array = calloc(n ? n : 1, sizeof(*array));
	if (!array)
		return -ENOMEM;
	while (hash_table__next(p->entries, &it, NULL, &value))
		array[i++] = value;
	qsort(array, n, sizeof(*array), compare_entries);
	*out = array;
	*nr = n;
	return 0;
}
