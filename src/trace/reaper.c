// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "proc/proc_stat.h"
#include "trace/reaper.h"

/* Who a process held is, as read when it was first held. */
enum identity {
	IDENTITY_UNKNOWN, /* the read failed (not for its being gone): taken at the next */
	IDENTITY_KNOWN,	  /* start_ticks */
	IDENTITY_GONE,	  /* already gone then: whatever runs at its PID now is another */
};

struct held {
	uint32_t pid;
	enum identity identity;
	uint64_t start_ticks;
	unsigned int gone_looks; /* in a row */
	uint64_t round;		 /* of the last look that found it held */
	bool reap;
};

struct reaper {
	struct hash_table *held; /* pid -> held */
	uint64_t round;
	uint64_t last_look_ns;
	bool looked;
	/* The look's verdicts, gathered by end_look's pass. */
	uint32_t *pids;
	size_t nr, cap;
	int err;
};

int reaper__new(struct reaper **out)
{
	struct reaper *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->held = hash_table__new(u32_key__hash, u32_key__equal);
	if (!r->held) {
		free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void reaper__free(struct reaper *r)
{
	if (!r)
		return;
	hash_table__free_values(r->held, free);
	free(r);
}

/* 0 alive (st filled), -ENOENT gone, another -errno: cannot tell now. */
static int look(uint32_t pid, struct proc_stat *st)
{
	int err = proc_stat__read(pid, st);

	if (!err && proc_stat__exited(st))
		return -ENOENT;
	return err;
}

static void identify(struct held *h, int err, const struct proc_stat *st)
{
	h->identity = !err ? IDENTITY_KNOWN : err == -ENOENT ? IDENTITY_GONE : IDENTITY_UNKNOWN;
	h->start_ticks = err ? 0 : st->start_ticks;
}

void reaper__hold(struct reaper *r, uint32_t pid)
{
	struct held *h =
	    u32_key__find_or_add(r->held, pid, sizeof(*h), offsetof(struct held, pid), NULL);
	struct proc_stat st;

	/* Out of memory: it is added, and identified, at the next look. */
	if (!h)
		return;
	identify(h, look(pid, &st), &st);
	h->gone_looks = 0;
	h->round = r->round;
}

void reaper__forget(struct reaper *r, uint32_t pid)
{
	free(hash_table__remove(r->held, &pid));
}

bool reaper__look_due(struct reaper *r, uint64_t now_ns)
{
	if (!r->looked) {
		/* The first look is an interval after the start, as every next one. */
		r->looked = true;
		r->last_look_ns = now_ns;
		return false;
	}
	if (now_ns - r->last_look_ns < REAPER_INTERVAL_NS)
		return false;
	r->last_look_ns = now_ns;
	r->round++;
	return true;
}

void reaper__look_at(struct reaper *r, uint32_t pid)
{
	bool added;
	struct held *h =
	    u32_key__find_or_add(r->held, pid, sizeof(*h), offsetof(struct held, pid), &added);
	struct proc_stat st;
	int err;

	if (!h || h->round == r->round)
		return;
	h->round = r->round;
	h->reap = false;
	err = look(pid, &st);
	if (added)
		identify(h, err, &st);
	if (err == -ENOENT) {
		h->reap = ++h->gone_looks >= REAPER_GONE_LOOKS;
		return;
	}
	if (err)
		return;
	h->gone_looks = 0;
	if (h->identity == IDENTITY_UNKNOWN)
		identify(h, 0, &st);
	h->reap = h->identity == IDENTITY_GONE || st.start_ticks != h->start_ticks;
}

static bool drop(void *ctx, const void *key, void *value)
{
	struct reaper *r = ctx;
	struct held *h = value;
	uint32_t *grown;

	(void)key;
	if (h->round != r->round) {
		free(h);
		return true;
	}
	if (!h->reap || r->err)
		return false;
	if (r->nr == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		grown = realloc(r->pids, r->cap * sizeof(*grown));
		if (!grown) {
			r->err = -ENOMEM;
			return false;
		}
		r->pids = grown;
	}
	r->pids[r->nr++] = h->pid;
	free(h);
	return true;
}

int reaper__end_look(struct reaper *r, uint32_t **pids, size_t *nr, size_t *held)
{
	int err;

	r->pids = NULL;
	r->nr = r->cap = 0;
	r->err = 0;
	hash_table__remove_if(r->held, drop, r);
	err = r->err;
	*pids = r->pids;
	*nr = r->nr;
	*held = hash_table__size(r->held) + r->nr;
	r->pids = NULL;
	return err;
}
