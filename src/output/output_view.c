// SPDX-License-Identifier: GPL-2.0
/*
 * The profile as the aggregate views show it. Kernel threads waiting for
 * work are most of an idle system's off-CPU time and none of what its
 * user asked about: a default system-wide svg was 99.76% grey idle, the
 * user's waits a sliver at its edge, and a pprof window was led by
 * worker_thread (38.93%). Every back-end but json (a record of each wait,
 * which offcpu report reads back) is handed the profile without them, and
 * their sums, to say what it left out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/hash_table.h"
#include "output/output.h"

bool output__hides(const struct output_opts *opts, const struct wait *w)
{
	const char *c = w->wait_class;

	return !opts->show_idle && c && !strncmp(c, "idle", 4) && (!c[4] || c[4] == ':');
}

static uint64_t hash_entry(const void *key)
{
	return hash_table__hash_bytes(&key, sizeof(key), 0);
}

static bool equal_entry(const void *a, const void *b)
{
	return a == b;
}

/*
 * A copy of the profile's header sharing all it holds but its entries:
 * those shown, keyed by themselves (the back-ends walk them, none looks
 * one up), and the totals of those. The waits list goes with the entries
 * left out, for no aggregate view reads it.
 */
static int build_view(const struct profile *p, const struct output_opts *opts,
		      struct profile *view, struct output_hidden *hidden)
{
	struct hash_table_iter it = { 0 };
	void *value;

	*view = *p;
	view->waits = NULL;
	view->nr_waits = 0;
	view->on_add = NULL;
	memset(&view->estimated, 0, sizeof(view->estimated));
	view->entries = hash_table__new(hash_entry, equal_entry);
	if (!view->entries)
		return -ENOMEM;
	while (hash_table__next(p->entries, &it, NULL, &value)) {
		struct profile_entry *e = value;

		if (!output__hides(opts, &e->key)) {
			if (hash_table__insert(view->entries, e, e))
				return -ENOMEM;
			estimate__add(&view->estimated, &e->estimated);
			continue;
		}
		hidden->ns += e->total_ns;
		hidden->count += e->count;
		hidden->runq_ns += e->runq_ns;
		estimate__add(&hidden->estimated, &e->estimated);
	}
	view->total_ns -= hidden->ns;
	view->total_count -= hidden->count;
	view->total_runq_ns -= hidden->runq_ns;
	return 0;
}

int output_format__write(const struct output_format *f, FILE *out, const struct profile *p,
			 const struct output_opts *opts)
{
	struct output_opts view_opts = *opts;
	struct profile view;
	int err;

	memset(&view_opts.hidden, 0, sizeof(view_opts.hidden));
	if (f->lists_waits || opts->show_idle)
		return f->write(out, p, &view_opts);
	err = build_view(p, opts, &view, &view_opts.hidden);
	err = err ?: f->write(out, &view, &view_opts);
	hash_table__free(view.entries);
	return err;
}

bool output__describe_hidden(const struct profile *shown, const struct output_opts *opts,
			     char *buf, size_t size)
{
	const struct output_hidden *h = &opts->hidden;
	uint64_t whole_ns = shown->total_ns + h->ns;
	char time[32];

	if (!h->count)
		return false;
	output__format_duration(h->ns, time, sizeof(time));
	snprintf(buf, size,
		 "%s (%.1f%%) in %llu wait%s of kernel threads idling (wait class idle); "
		 "-k or -c/-p/-t shows them",
		 time, whole_ns ? 100.0 * (double)h->ns / (double)whole_ns : 0.0,
		 (unsigned long long)h->count, h->count == 1 ? "" : "s");
	return true;
}
