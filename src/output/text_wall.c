// SPDX-License-Identifier: GPL-2.0
/*
 * Where each thread's time went, on CPU and off. Waits alone say where a
 * thread waited, not whether waiting is what took its time: a thread that
 * computes for 2 s and sleeps for 50 ms leads no off-CPU table. Each
 * sample stands for one period of CPU time, so n of them are n periods,
 * give or take sqrt(n) periods (one standard deviation of a count).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "output/folded_lines.h"
#include "output/frame_names.h"
#include "output/text_column.h"
#include "output/text_label.h"
#include "output/text_stack.h"
#include "output/text_wall.h"

/* The wait classes a row names as where its blocked time went. */
#define ROW_CLASSES 2
/* The name column, as the thread table's: as wide as its widest name, within these. */
#define NAME_COLUMNS_MIN 34
#define NAME_COLUMNS_MAX 64

struct wall_class {
	const char *name;
	uint64_t blocked_ns;
};

struct wall_row {
	uint64_t id; /* pid and tid, or the pid alone: the index's key */
	char *label;
	const struct wait *named_by; /* its heaviest entry's key, whose names it shows */
	uint64_t named_ns;
	uint32_t pid;
	uint64_t on_ns;
	uint64_t samples;
	uint64_t runq_ns;
	uint64_t blocked_ns;
	struct wall_class *classes;
	size_t nr_classes;
	uint32_t *tids; /* its threads' */
	size_t nr_tids;
};

struct wall_rows {
	struct hash_table *index;
	struct wall_row *items;
	size_t nr;
	size_t cap;
};

bool text_wall__sampled(const struct profile *p)
{
	return p->oncpu.count > 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ns sampled by n samples of equal weight: ns / n a period, times sqrt(n). */
static uint64_t sampling_error(uint64_t ns, uint64_t n)
{
	return n ? (uint64_t)((double)ns / sqrt((double)n) + 0.5) : 0;
}

/* "±1.234 ms"; "-" without a sample, whose error no count says. */
static void format_error(uint64_t ns, uint64_t n, char *buf, size_t size)
{
	char time[32];

	if (!n) {
		snprintf(buf, size, "-");
		return;
	}
	output__format_duration(sampling_error(ns, n), time, sizeof(time));
	snprintf(buf, size, "±%s", time);
}

static bool by_process(const struct output_opts *opts)
{
	return opts->group_by == GROUP_BY_PID;
}

static uint64_t hash_id(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(uint64_t), 0);
}

static bool equal_id(const void *a, const void *b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

/*
 * As the thread table names a thread ("comm pid tid") or a process
 * ("title pid"), by the names its time was most under: a thread is one
 * row whatever it called itself, as its time adds up to its life only whole.
 */
static void row_label(const struct wait *w, bool process, char *buf, size_t size)
{
	text_label__of(w, process ? GROUP_BY_PID : GROUP_BY_TID, NULL, buf, size);
}

/* Whether a row is named after entry a (its time, its key) rather than b: the heavier, else the
 * first. */
static bool names_first(uint64_t a_ns, const struct wait *a, uint64_t b_ns, const struct wait *b)
{
	const char *a_name = a->title ? a->title : a->comm, *b_name = b->title ? b->title : b->comm;

	if (a_ns != b_ns)
		return a_ns > b_ns;
	if (a->tid != b->tid)
		return a->tid < b->tid;
	return strcmp(a_name ? a_name : "", b_name ? b_name : "") < 0;
}

static struct wall_row *row_of(struct wall_rows *rows, const struct profile_entry *e, bool process)
{
	const struct wait *w = &e->key;
	uint64_t id = (uint64_t)w->pid << 32 | (process ? 0 : w->tid);
	struct wall_row *r = hash_table__find(rows->index, &id);
	uint32_t *tids;
	size_t i;

	if (!r) {
		if (rows->nr == rows->cap)
			return NULL;
		r = &rows->items[rows->nr];
		r->id = id;
		r->pid = w->pid;
		if (hash_table__insert(rows->index, &r->id, r))
			return NULL;
		rows->nr++;
	}
	if (!r->named_by || names_first(e->total_ns, w, r->named_ns, r->named_by)) {
		r->named_by = w;
		r->named_ns = e->total_ns;
	}
	for (i = 0; i < r->nr_tids; i++) {
		if (r->tids[i] == w->tid)
			return r;
	}
	tids = realloc(r->tids, (r->nr_tids + 1) * sizeof(*tids));
	if (!tids)
		return NULL;
	r->tids = tids;
	r->tids[r->nr_tids++] = w->tid;
	return r;
}

static int add_class(struct wall_row *r, const char *name, uint64_t blocked_ns)
{
	struct wall_class *grown;
	size_t i;

	if (!blocked_ns)
		return 0;
	for (i = 0; i < r->nr_classes; i++) {
		if (!strcmp(r->classes[i].name, name)) {
			r->classes[i].blocked_ns += blocked_ns;
			return 0;
		}
	}
	grown = realloc(r->classes, (r->nr_classes + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	r->classes = grown;
	r->classes[r->nr_classes++] = (struct wall_class){ name, blocked_ns };
	return 0;
}

static int compare_classes(const void *a, const void *b)
{
	const struct wall_class *x = a, *y = b;

	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t row_total(const struct wall_row *r)
{
	return r->on_ns + r->runq_ns + r->blocked_ns;
}

static int compare_rows(const void *a, const void *b)
{
	const struct wall_row *x = a, *y = b;

	if (row_total(x) != row_total(y))
		return row_total(x) > row_total(y) ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void rows_free(struct wall_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		free(rows->items[i].label);
		free(rows->items[i].classes);
		free(rows->items[i].tids);
	}
	free(rows->items);
	hash_table__free(rows->index);
}

/* Every wait (still open too: its time in the window) and every sample, by row. */
static int rows_build(const struct profile *p, bool process, struct wall_rows *rows)
{
	struct hash_table_iter it = { 0 };
	char label[300];
	void *value;
	size_t i;
	int err = 0;

	rows->cap = hash_table__size(p->entries) + hash_table__size(p->oncpu.entries);
	rows->index = hash_table__new(hash_id, equal_id);
	rows->items = calloc(rows->cap ? rows->cap : 1, sizeof(*rows->items));
	if (!rows->index || !rows->items)
		return -ENOMEM;
	while (!err && hash_table__next(p->entries, &it, NULL, &value)) {
		const struct profile_entry *e = value;
		struct wall_row *r = row_of(rows, e, process);

		if (!r)
			return -ENOMEM;
		r->runq_ns += e->runq_ns;
		r->blocked_ns += e->total_ns - e->runq_ns;
		err = add_class(r, e->key.wait_class ? e->key.wait_class : "",
				e->total_ns - e->runq_ns);
	}
	memset(&it, 0, sizeof(it));
	while (!err && hash_table__next(p->oncpu.entries, &it, NULL, &value)) {
		const struct profile_entry *e = value;
		struct wall_row *r = row_of(rows, e, process);

		if (!r)
			return -ENOMEM;
		r->on_ns += e->total_ns;
		r->samples += e->count;
	}
	for (i = 0; i < rows->nr && !err; i++) {
		row_label(rows->items[i].named_by, process, label, sizeof(label));
		rows->items[i].label = strdup(label);
		if (!rows->items[i].label)
			err = -ENOMEM;
	}
	return err;
}

/*
 * Its threads' run time from offcpu's own switches, if each exited under
 * it (-- COMMAND); false if one did not, or none.
 */
static bool exact_run_ns(const struct profile *p, const struct wall_row *r, uint64_t *out)
{
	size_t i, j;

	*out = 0;
	if (r->pid == PROFILE_EXITED_ID)
		return false;
	for (i = 0; i < r->nr_tids; i++) {
		for (j = 0; j < p->nr_threads; j++) {
			if (p->threads[j].pid == r->pid && p->threads[j].tid == r->tids[i])
				break;
		}
		if (j == p->nr_threads)
			return false;
		*out += p->threads[j].run_ns;
	}
	return r->nr_tids > 0;
}

/*
 * "sleep 97.8%, other 2.2%": where most of a row's blocked time went,
 * without the classes too small to show as more than 0.0%.
 */
static void print_classes(FILE *out, struct wall_row *r)
{
	uint64_t rest_ns = r->blocked_ns;
	char name[300];
	size_t i;

	qsort(r->classes, r->nr_classes, sizeof(*r->classes), compare_classes);
	for (i = 0; i < r->nr_classes && i < ROW_CLASSES; i++) {
		if (share(r->classes[i].blocked_ns, r->blocked_ns) < 0.05)
			break;
		frame_names__printable(r->classes[i].name, name, sizeof(name));
		fprintf(out, "%s%s %.1f%%", i ? ", " : "  ", name,
			share(r->classes[i].blocked_ns, r->blocked_ns));
		rest_ns -= r->classes[i].blocked_ns;
	}
	if (i && share(rest_ns, r->blocked_ns) >= 0.05)
		fputs(", ...", out);
}

static void print_headline(FILE *out, const struct profile *p)
{
	const struct profile_samples *s = &p->oncpu;
	uint64_t period_ns = s->period_ns ? s->period_ns : s->total_ns / s->count;
	char time[32], period[32], error[40];

	output__format_duration(s->total_ns, time, sizeof(time));
	output__format_duration(period_ns, period, sizeof(period));
	format_error(s->total_ns, s->count, error, sizeof(error));
	fprintf(out, "on CPU %s sampled (%s): %" PRIu64 " sample%s, one every %s of CPU time\n",
		time, error, s->count, s->count == 1 ? "" : "s", period);
}

int text_wall__print(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	bool process = by_process(opts), exact = p->nr_threads > 0;
	size_t limit = opts->top ?: OUTPUT_TOP_THREADS, name_columns = NAME_COLUMNS_MIN, i;
	const char *header =
	    process ? "process                        pid" : "comm                  pid      tid";
	struct wall_rows rows = { 0 };
	int err = rows_build(p, process, &rows);

	if (err) {
		rows_free(&rows);
		return err;
	}
	print_headline(out, p);
	qsort(rows.items, rows.nr, sizeof(*rows.items), compare_rows);
	for (i = 0; i < rows.nr && i < limit; i++) {
		size_t width = text_column__width(rows.items[i].label);

		if (width > name_columns)
			name_columns = width < NAME_COLUMNS_MAX ? width : NAME_COLUMNS_MAX;
	}
	fprintf(out, "\nWhere the time went, by %s (top %zu; on CPU sampled, %s)\n",
		process ? "process" : "thread", limit, "± one standard deviation");
	fputs("  ", out);
	text_column__print(out, header, name_columns);
	fprintf(out, " %12s %12s", "on CPU", "±");
	if (exact)
		fprintf(out, " %12s", "run time");
	fprintf(out, " %12s %12s %12s  %s\n", "run queue", "blocked", "total", "blocked in");
	for (i = 0; i < rows.nr && i < limit; i++) {
		struct wall_row *r = &rows.items[i];
		char on[32], error[40], runq[32], blocked[32], total[32];
		uint64_t run_ns;

		output__format_duration(r->on_ns, on, sizeof(on));
		format_error(r->on_ns, r->samples, error, sizeof(error));
		output__format_duration(r->runq_ns, runq, sizeof(runq));
		output__format_duration(r->blocked_ns, blocked, sizeof(blocked));
		output__format_duration(row_total(r), total, sizeof(total));
		fputs("  ", out);
		text_column__print(out, r->label, name_columns);
		/* "±" is two bytes and one column, in the header's too. */
		fprintf(out, " %12s %12s", on, error);
		if (exact) {
			if (exact_run_ns(p, r, &run_ns))
				output__format_duration(run_ns, on, sizeof(on));
			else
				snprintf(on, sizeof(on), "-");
			fprintf(out, " %12s", on);
		}
		fprintf(out, " %12s %12s %12s", runq, blocked, total);
		print_classes(out, r);
		fputc('\n', out);
	}
	if (rows.nr > limit)
		fprintf(out, "  ... %zu more\n", rows.nr - limit);
	if (exact)
		fprintf(out, "  run time: on CPU exactly, from offcpu's own switches, of the "
			     "threads that exited (Thread coverage below)\n");
	rows_free(&rows);
	return 0;
}

int text_wall__print_stacks(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	size_t limit = opts->top ?: OUTPUT_TOP_STACKS, i;
	struct folded_lines lines;
	char time[32], error[40];
	int err = folded_lines__build_samples(p, true, opts->lines, &lines);

	if (err)
		return err;
	fprintf(out, "\nTop on-CPU stacks (leaf first)\n");
	for (i = 0; i < lines.nr && i < limit; i++) {
		const struct folded_line *line = &lines.lines[i];
		/* "comm;[on-cpu]" and its labels' pseudo-frames, as a wait's heading. */
		size_t len = text_stack__next_field(line->text, strcspn(line->text, ";"));

		while (line->text[len] == ';' && text_stack__is_label_frame(line->text + len + 1))
			len = text_stack__next_field(line->text, len);
		output__format_duration(line->total_ns, time, sizeof(time));
		format_error(line->total_ns, line->count, error, sizeof(error));
		fprintf(out, "  #%zu %.*s  %s %s, %.1f%%, %" PRIu64 " sample%s\n", i + 1, (int)len,
			line->text, time, error, share(line->total_ns, p->oncpu.total_ns),
			line->count, line->count == 1 ? "" : "s");
		text_stack__print_leaf_first(out, line->text + len);
	}
	if (lines.nr > limit)
		fprintf(out, "  ... %zu more\n", lines.nr - limit);
	folded_lines__free(&lines);
	return 0;
}
