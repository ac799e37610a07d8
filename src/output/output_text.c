// SPDX-License-Identifier: GPL-2.0
/* The human report: totals by state, wait class and thread, top stacks, counters. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "output/folded_lines.h"
#include "output/frame_names.h"
#include "output/output.h"
#include "output/wait_graph.h"
#include "output/text_accounting.h"
#include "output/text_column.h"
#include "output/text_label.h"
#include "output/text_objects.h"
#include "output/text_stack.h"
#include "output/text_wall.h"
#include "trace/counters.h"

struct group {
	char *label;
	uint64_t total_ns;
	uint64_t count;
	uint64_t runq_ns; /* Of total_ns, runnable; the rest blocked */
	struct estimate estimated;
};

struct groups {
	struct hash_table *index;
	struct group *items;
	size_t nr;
};

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int groups_add(struct groups *g, const char *label, const struct profile_entry *e,
		      size_t cap)
{
	struct group *item = hash_table__find(g->index, label);

	if (!item) {
		if (g->nr == cap)
			return -ENOMEM;
		item = &g->items[g->nr];
		item->label = strdup(label);
		if (!item->label || hash_table__insert(g->index, item->label, item)) {
			free(item->label);
			return -ENOMEM;
		}
		g->nr++;
	}
	item->total_ns += e->total_ns;
	item->count += e->count;
	item->runq_ns += e->runq_ns;
	estimate__add(&item->estimated, &e->estimated);
	return 0;
}

static int compare_groups(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void groups_free(struct groups *g)
{
	size_t i;

	for (i = 0; i < g->nr; i++)
		free(g->items[i].label);
	free(g->items);
	hash_table__free(g->index);
}

/*
 * The name column of a table: as wide as its widest name, from what the
 * thread table has always taken ("comm pid tid") to a width that holds
 * PostgreSQL's titles ("postgres: app shop 10.1.2.3(54321) idle in
 * transaction", 55), beyond which a name is cut and ends in an ellipsis.
 * json and pprof keep every name whole.
 */
#define NAME_COLUMNS_MIN 34
#define NAME_COLUMNS_MAX 64

struct group_by_section {
	const char *title;
	const char *header;
	/* Cut to --top, or OUTPUT_TOP_THREADS without it; else whole unless --top is given. */
	bool is_top_list;
};

static const struct group_by_section sections[] = {
	[GROUP_BY_TID] = { "By thread", "comm                  pid      tid", true },
	[GROUP_BY_PID] = { "By process", "process                        pid", true },
	[GROUP_BY_COMM] = { "By command name", "comm", true },
	[GROUP_BY_TITLE] = { "By process title", "title", true },
	[GROUP_BY_STATE] = { "By thread state", "state", false },
	[GROUP_BY_WAIT] = { "By wait class", "wait class", false },
	[GROUP_BY_WAKER] = { "By waker", "waker                 pid      tid", true },
	[GROUP_BY_OBJECT] = { "By object", "object", true },
	[GROUP_BY_LABEL] = { "By label", "label", false }, /* Named by the label */
};

/*
 * The part of a total estimated from waits kept by chance, and
 * its relative standard error; nothing where it is all exact.
 */
static void print_estimate(FILE *out, const struct estimate *e, bool column)
{
	char time[32];

	if (!e->ns) {
		if (column)
			fprintf(out, "%14s %7s", "-", "");
		return;
	}
	output__format_duration(e->ns, time, sizeof(time));
	if (column)
		fprintf(out, "%14s %6.1f%%", time, 100.0 * estimate__relative_error(e));
	else
		fprintf(out, " (%s estimated, ±%.1f%%)", time, 100.0 * estimate__relative_error(e));
}

static int print_groups(FILE *out, uint64_t total_ns, struct profile_entry **entries, size_t nr,
			enum report_group_by by, const char *label_name, uint32_t top,
			bool estimates)
{
	const char *title = sections[by].title, *header = sections[by].header;
	char label_title[96];
	size_t limit = top ?: (sections[by].is_top_list ? OUTPUT_TOP_THREADS : SIZE_MAX);
	struct groups g = { 0 };
	char label[300], time[32];
	size_t name_columns = NAME_COLUMNS_MIN, i;
	int err = 0;

	g.index = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	g.items = calloc(nr ? nr : 1, sizeof(*g.items));
	if (!g.index || !g.items) {
		hash_table__free(g.index);
		free(g.items);
		return -ENOMEM;
	}
	for (i = 0; i < nr && !err; i++) {
		text_label__of(&entries[i]->key, by, label_name, label, sizeof(label));
		err = groups_add(&g, label, entries[i], nr);
	}
	if (by == GROUP_BY_LABEL) {
		snprintf(label_title, sizeof(label_title), "By %s", label_name);
		title = label_title;
		header = label_name;
	}
	if (!err) {
		qsort(g.items, g.nr, sizeof(*g.items), compare_groups);
		for (i = 0; i <= g.nr && i <= limit; i++) {
			/* The header's, then each row's shown. */
			const char *name = i ? g.items[i - 1].label : header;
			size_t width = text_column__width(name);

			if (width > name_columns)
				name_columns = width < NAME_COLUMNS_MAX ? width : NAME_COLUMNS_MAX;
		}
		if (limit != SIZE_MAX)
			fprintf(out, "\n%s (top %zu)\n", title, limit);
		else
			fprintf(out, "\n%s\n", title);
		fputs("  ", out);
		text_column__print(out, header, name_columns);
		fprintf(out, " %14s %7s %9s %14s %14s", "off-CPU", "share", "waits", "blocked",
			"run queue");
		fprintf(out, estimates ? " %14s %7s\n" : "\n", "estimated", "±error");
		for (i = 0; i < g.nr && i < limit; i++) {
			char blocked[32], runq[32];

			output__format_duration(g.items[i].total_ns, time, sizeof(time));
			output__format_duration(g.items[i].total_ns - g.items[i].runq_ns, blocked,
						sizeof(blocked));
			output__format_duration(g.items[i].runq_ns, runq, sizeof(runq));
			fputs("  ", out);
			text_column__print(out, g.items[i].label, name_columns);
			fprintf(out, " %14s %6.1f%% %9" PRIu64 " %14s %14s", time,
				share(g.items[i].total_ns, total_ns), g.items[i].count, blocked,
				runq);
			if (estimates) {
				fputc(' ', out);
				print_estimate(out, &g.items[i].estimated, true);
			}
			fputc('\n', out);
		}
		if (g.nr > limit)
			fprintf(out, "  ... %zu more\n", g.nr - limit);
	}
	groups_free(&g);
	return err;
}

/*
 * Who woke whom (the wait-for graph's heaviest edges), and its
 * knots: the groups of threads that wait for no one outside themselves,
 * where the bottleneck of the waits they end must lie (wPerf).
 */
static int print_wakers(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	size_t limit = opts->top ?: OUTPUT_TOP_THREADS, i, j;
	char time[32], runq[32], edge[200];
	struct wait_graph *g;
	int err = wait_graph__build(p, opts->group_by == GROUP_BY_PID, &g);

	if (err)
		return err;
	if (!g->nr_edges) {
		wait_graph__free(g);
		return 0;
	}
	fprintf(out, "\nWoken by (top %zu)\n", limit);
	fprintf(out, "  %-50s %14s %9s %14s\n", "waker -> wakee", "blocked", "waits",
		"then run queue");
	for (i = 0; i < g->nr_edges && i < limit; i++) {
		const struct wait_graph_edge *e = &g->edges[i];

		snprintf(edge, sizeof(edge), "%s -> %s", g->nodes[e->from].label,
			 g->nodes[e->to].label);
		output__format_duration(e->blocked_ns, time, sizeof(time));
		output__format_duration(e->runq_ns, runq, sizeof(runq));
		fprintf(out, "  %-50s %14s %9" PRIu64 " %14s\n", edge, time, e->count, runq);
	}
	if (g->nr_edges > limit)
		fprintf(out, "  ... %zu more\n", g->nr_edges - limit);
	fprintf(out, "\nKnots: likely bottlenecks, waiting for no one outside (top %zu)\n", limit);
	for (i = 0; i < g->nr_knots && i < limit; i++) {
		const struct wait_graph_knot *k = &g->knots[i];

		output__format_duration(k->woken_ns, time, sizeof(time));
		fprintf(out, "  #%zu woke %s of blocked time:", i + 1, time);
		for (j = 0; j < k->nr && j < 8; j++)
			fprintf(out, "%s %s", j ? "," : "", g->nodes[k->nodes[j]].label);
		fprintf(out, "%s\n", k->nr > 8 ? ", ..." : "");
	}
	if (g->nr_knots > limit)
		fprintf(out, "  ... %zu more\n", g->nr_knots - limit);
	wait_graph__free(g);
	return 0;
}

static int compare_line_wakers(const void *a, const void *b)
{
	const struct folded_waker *x = a, *y = b;

	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	return x->waker.tid < y->waker.tid ? -1 : x->waker.tid > y->waker.tid;
}

/*
 * Under a top stack's heading, how much of it was run-queue time
 * and who woke it, heaviest first: "    run queue 1.200 ms; woken by
 * writer 4242 (10), [hardirq] (2)". Nothing for a line without either.
 */
static void print_line_wakers(FILE *out, struct folded_line *line)
{
	char time[32], label[96], comm[4 * OFFCPU_COMM_LEN + 1];
	size_t i;

	if (!line->runq_ns && !line->nr_wakers)
		return;
	output__format_duration(line->runq_ns, time, sizeof(time));
	fprintf(out, "    run queue %s", time);
	qsort(line->wakers, line->nr_wakers, sizeof(line->wakers[0]), compare_line_wakers);
	for (i = 0; i < line->nr_wakers && i < 3; i++) {
		const struct waker *k = &line->wakers[i].waker;

		if (k->context == OFFCPU_WAKER_TASK) {
			frame_names__printable(k->comm ? k->comm : "", comm, sizeof(comm));
			if (k->tid == PROFILE_EXITED_ID)
				snprintf(label, sizeof(label), "%s (exited)", comm);
			else
				snprintf(label, sizeof(label), "%s %u", comm, k->tid);
		} else {
			snprintf(label, sizeof(label), "[%s]", output__waker_context(k->context));
		}
		fprintf(out, "%s%s (%" PRIu64 ")", i ? ", " : "; woken by ", label,
			line->wakers[i].count);
	}
	if (line->nr_wakers > 3 || line->others_count)
		fprintf(out, ", ...");
	fputc('\n', out);
}

static int print_top_stacks(FILE *out, const struct profile *p, uint64_t total_ns,
			    const struct output_opts *opts, bool open_apart)
{
	size_t limit = opts->top ?: OUTPUT_TOP_STACKS, shown = 0;
	struct folded_lines lines;
	char time[32];
	size_t i;
	int err = folded_lines__build(p, true, opts->lines, &lines);

	if (err)
		return err;
	fprintf(out, "\nTop stacks (leaf first)\n");
	for (i = 0; i < lines.nr && shown < limit; i++) {
		struct folded_line *line = &lines.lines[i];
		size_t len = strcspn(line->text, ";");

		/*
		 * "comm;[state];[wait]", whole: a cut could split a character. A
		 * recording's empty comm leaves no field of its own.
		 */
		len = text_stack__next_field(line->text, len);
		len = text_stack__next_field(line->text, len);
		/* "[still-waiting]" belongs to the heading too. */
		if (!strncmp(line->text + len, ";" OUTPUT_STILL_WAITING_FRAME,
			     sizeof(OUTPUT_STILL_WAITING_FRAME))) {
			if (open_apart)
				continue;
			len += sizeof(OUTPUT_STILL_WAITING_FRAME);
		}
		/* And the "[pg.wait_event=...]" label pseudo-frames after it. */
		while (line->text[len] == ';' && text_stack__is_label_frame(line->text + len + 1))
			len = text_stack__next_field(line->text, len);
		shown++;
		output__format_duration(line->total_ns, time, sizeof(time));
		fprintf(out, "  #%zu %.*s  %s, %.1f%%, %" PRIu64 " wait%s", shown, (int)len,
			line->text, time, share(line->total_ns, total_ns), line->count,
			line->count == 1 ? "" : "s");
		print_estimate(out, &line->estimated, false);
		fputc('\n', out);
		print_line_wakers(out, line);
		text_stack__print_leaf_first(out, line->text + len);
	}
	if (shown == 0)
		fprintf(out, "  (no waits recorded)\n");
	folded_lines__free(&lines);
	return 0;
}

static void print_stack_leaf_first(FILE *out, const struct stack *s, const char *side)
{
	char name[600];
	uint32_t i;

	if (!s || !s->nr)
		return;
	fprintf(out, "    %s:\n", side);
	for (i = 0; i < s->nr; i++) {
		frame_names__frame(&s->frames[i], name, sizeof(name));
		fprintf(out, "      %s\n", name);
	}
}

/* Longest so far first: the whole wait, not its part inside the window. */
static int compare_so_far(const void *a, const void *b)
{
	const struct profile_entry *x = *(struct profile_entry *const *)a;
	const struct profile_entry *y = *(struct profile_entry *const *)b;

	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid;
}

/*
 * The waits that had not ended at the stop, longest first, with
 * their stacks: a hung thread is what its user came for. Cut as the top
 * stacks are: a system's idle shells and pipe readers were 449 lines of a
 * first report, before its tables. Each says how long it has waited so
 * far, from before the recording too.
 */
/* What a thread still waiting waits on, and who holds it: what is stuck on what. */
static void print_waiting_on(FILE *out, const struct wait_object *o)
{
	char object[700], comm[4 * OFFCPU_COMM_LEN + 1];

	if (!o)
		return;
	text_label__object(o, object, sizeof(object));
	fprintf(out, "    on %s", object);
	if (o->holder_tid) {
		frame_names__printable(o->holder_comm ? o->holder_comm : "", comm, sizeof(comm));
		fprintf(out, ", held by %s %" PRIu32, comm, o->holder_tid);
	}
	fputc('\n', out);
}

static void print_still_waiting(FILE *out, struct profile_entry **entries, size_t nr,
				const struct output_opts *opts)
{
	size_t limit = opts->top ?: OUTPUT_TOP_STACKS, i;
	char time[32], comm[4 * OFFCPU_COMM_LEN + 1], wait_class[300];

	if (!nr)
		return;
	qsort(entries, nr, sizeof(*entries), compare_so_far);
	fprintf(out, "\nStill waiting (longest first)\n");
	for (i = 0; i < nr && i < limit; i++) {
		const struct wait *w = &entries[i]->key;

		output__format_duration(entries[i]->duration_ns, time, sizeof(time));
		/* As the tables show them: this line goes to root's terminal too. */
		frame_names__printable(w->comm ? w->comm : "", comm, sizeof(comm));
		frame_names__printable(w->wait_class ? w->wait_class : "", wait_class,
				       sizeof(wait_class));
		fprintf(out, "  #%zu tid %u (%s) [%s] [%s]  %s so far%s\n", i + 1, w->tid, comm,
			states__name(w->state), wait_class, time,
			entries[i]->count > 1 ? " (summed)" : "");
		print_waiting_on(out, w->object);
		print_stack_leaf_first(out, w->kernel_stack, "kernel");
		print_stack_leaf_first(out, w->user_stack, "user");
	}
	if (nr > limit)
		fprintf(out, "  ... %zu more still waiting; --top %zu shows them\n", nr - limit, nr);
}

/*
 * The health counters that counted something, one a line; the rest, most
 * of them in a healthy run (all of a snapshot's), in one line.
 */
static void print_health_counters(FILE *out, const uint64_t *counters)
{
	int width = 24; /* as --stats aligns them */
	size_t zero = 0;
	unsigned int i;

	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		if ((int)strlen(counters__name(i)) > width)
			width = (int)strlen(counters__name(i));
	fprintf(out, "\nHealth counters\n");
	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		if (counters[i])
			fprintf(out, "  %-*s %" PRIu64 "\n", width, counters__name(i), counters[i]);
		else
			zero++;
	}
	if (zero)
		fprintf(out, "  %s counters: 0\n", zero == OFFCPU_CNT_MAX ? "all" : "other");
}

int output_text__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	const struct output_hidden *hidden = &opts->hidden;
	struct profile_entry **entries, **open_entries;
	uint64_t open_ns = 0, open_count = 0, rest_ns, whole_ns = p->total_ns + hidden->ns;
	uint64_t whole_count = p->total_count + hidden->count;
	struct estimate whole_estimated = p->estimated;
	bool estimates, open_apart;
	char time[32], said[256];
	size_t nr, nr_open = 0, kept = 0, i;
	int err = profile__sorted_entries(p, &entries, &nr);

	if (err)
		return err;
	estimate__add(&whole_estimated, &hidden->estimated);
	estimates = whole_estimated.ns > 0;
	/* The headline counts every wait; the tables and their shares, those shown. */
	output__format_duration(whole_ns, time, sizeof(time));
	fprintf(out, "offcpu: %" PRIu64 " wait%s, %s off CPU in total", whole_count,
		whole_count == 1 ? "" : "s", time);
	print_estimate(out, &whole_estimated, false);
	fputc('\n', out);
	if (output__describe_hidden(p, opts, said, sizeof(said)))
		fprintf(out, "hidden: %s\n", said);
	if (whole_ns) {
		uint64_t runq_ns = p->total_runq_ns + hidden->runq_ns;
		char blocked[32];

		output__format_duration(whole_ns - runq_ns, blocked, sizeof(blocked));
		output__format_duration(runq_ns, time, sizeof(time));
		fprintf(out,
			"blocked %s, run queue %s (%.1f%%: runnable, waiting for a CPU after the "
			"wakeup)\n",
			blocked, time, share(runq_ns, whole_ns));
	}
	/* Under -F, the whole of each thread's time first, on CPU and off. */
	if (text_wall__sampled(p)) {
		err = text_wall__print(out, p, opts);
		if (err) {
			free(entries);
			return err;
		}
	}
	text_accounting__print(out, p, hidden);
	/*
	 * Waits still open at the stop are listed apart, and kept
	 * out of the tables and stacks: a daemon asleep for hours would
	 * otherwise outweigh everything the recording measured. Unless every
	 * wait is still open (offcpu snapshot): then the tables sum them.
	 */
	open_entries = malloc((nr ? nr : 1) * sizeof(*open_entries));
	if (!open_entries) {
		free(entries);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		if (entries[i]->key.open & OFFCPU_WAIT_OPEN_AFTER) {
			open_entries[nr_open++] = entries[i];
			open_ns += entries[i]->total_ns;
			open_count += entries[i]->count;
		} else {
			entries[kept++] = entries[i];
		}
	}
	open_apart = kept > 0;
	if (open_apart && open_count) {
		output__format_duration(open_ns, time, sizeof(time));
		fprintf(out,
			"still waiting: %s in %" PRIu64
			" wait%s not ended at the stop, listed after the tables, left out of them\n",
			time, open_count, open_count == 1 ? "" : "s");
	}
	if (open_apart) {
		nr = kept;
		rest_ns = p->total_ns - open_ns;
	} else {
		memcpy(entries, open_entries, nr_open * sizeof(*entries));
		nr = nr_open;
		rest_ns = p->total_ns;
	}
	/* The summary first: a first system-wide report's tables began at its line 468. */
	err = print_groups(out, rest_ns, entries, nr, GROUP_BY_STATE, NULL, opts->top, estimates);
	err = err ?: print_groups(out, rest_ns, entries, nr, GROUP_BY_WAIT, NULL, opts->top,
				  estimates);
	/* --group-by state or wait would repeat a table above; object, the table below. */
	if (opts->group_by != GROUP_BY_STATE && opts->group_by != GROUP_BY_WAIT &&
	    opts->group_by != GROUP_BY_OBJECT)
		err = err ?: print_groups(out, rest_ns, entries, nr, opts->group_by,
					  opts->group_label, opts->top, estimates);
	err = err ?: text_objects__print(out, p, entries, nr, rest_ns, opts->top);
	free(entries);
	if (!err)
		print_still_waiting(out, open_entries, nr_open, opts);
	free(open_entries);
	err = err ?: print_wakers(out, p, opts);
	/* When every wait is still open (a snapshot), the list above has each stack already. */
	if (open_apart || !nr_open)
		err = err ?: print_top_stacks(out, p, rest_ns, opts, open_apart);
	if (text_wall__sampled(p))
		err = err ?: text_wall__print_stacks(out, p, opts);
	if (err)
		return err;
	text_accounting__print_threads(out, p, opts->top);
	print_health_counters(out, p->counters);
	return 0;
}
