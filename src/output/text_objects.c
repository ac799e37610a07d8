// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "output/frame_names.h"
#include "output/output.h"
#include "output/text_column.h"
#include "output/text_label.h"
#include "output/text_objects.h"
#include "profile/wait_chains.h"

#define LABEL_LEN 700
#define NAME_COLUMNS_MIN 34
#define NAME_COLUMNS_MAX 64

struct object_row {
	char label[LABEL_LEN];
	uint64_t total_ns;
	uint64_t count;
	/* The holder it had most, by the time waited on it. */
	const struct wait_object *holder;
	uint64_t holder_ns;
};

static int compare_rows(const void *a, const void *b)
{
	const struct object_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->label, y->label);
}

static int compare_entries(const void *a, const void *b)
{
	const struct profile_entry *x = *(struct profile_entry *const *)a;
	const struct profile_entry *y = *(struct profile_entry *const *)b;
	char lx[LABEL_LEN], ly[LABEL_LEN];
	int c;

	text_label__object(x->key.object, lx, sizeof(lx));
	text_label__object(y->key.object, ly, sizeof(ly));
	c = strcmp(lx, ly);
	if (c)
		return c;
	/* One holder's entries together, so each is summed at once. */
	return x->key.object->holder_tid < y->key.object->holder_tid   ? -1
	       : x->key.object->holder_tid > y->key.object->holder_tid ? 1
								       : 0;
}

/* The rows of the sorted entries: one per object, its heaviest holder. */
static size_t make_rows(struct profile_entry **sorted, size_t nr, struct object_row *rows)
{
	size_t n = 0, i;
	uint64_t holder_ns = 0;

	for (i = 0; i < nr; i++) {
		const struct wait_object *o = sorted[i]->key.object;
		struct object_row *row = n ? &rows[n - 1] : NULL;
		char label[LABEL_LEN];

		text_label__object(o, label, sizeof(label));
		if (!row || strcmp(row->label, label)) {
			row = &rows[n++];
			memset(row, 0, sizeof(*row));
			snprintf(row->label, sizeof(row->label), "%s", label);
			holder_ns = 0;
		}
		if (i && sorted[i - 1]->key.object->holder_tid != o->holder_tid)
			holder_ns = 0;
		row->total_ns += sorted[i]->total_ns;
		row->count += sorted[i]->count;
		holder_ns += sorted[i]->total_ns;
		if (o->holder_tid && holder_ns > row->holder_ns) {
			row->holder = o;
			row->holder_ns = holder_ns;
		}
	}
	return n;
}

/*
 * What the row's holder did while the waits on it lasted: its chain, over
 * every interned object of the row with that holder (one per address).
 */
static void print_chain(FILE *out, const struct profile *p, const struct object_row *row)
{
	struct wait_chain sum = { 0 };
	struct hash_table_iter it = { 0 };
	char label[LABEL_LEN], comm[4 * OFFCPU_COMM_LEN + 1], what[512];
	uint64_t seen = 0;
	void *value;
	size_t i;

	while (hash_table__next(p->objects, &it, NULL, &value)) {
		const struct wait_object *o = value;
		const struct wait_chain *c;

		if (o->holder_tid != row->holder->holder_tid)
			continue;
		text_label__object(o, label, sizeof(label));
		c = strcmp(label, row->label) ? NULL : wait_chains__find(p->chains, o);
		if (!c)
			continue;
		sum.waited_ns += c->waited_ns;
		for (i = 0; i < WAIT_CHAIN_PARTS && c->parts[i].what; i++)
			wait_chain__add_part(&sum, c->parts[i].what, c->parts[i].ns);
		sum.other_ns += c->other_ns;
	}
	if (!sum.waited_ns)
		return;
	frame_names__printable(row->holder->holder_comm ? row->holder->holder_comm : "", comm,
			       sizeof(comm));
	fprintf(out, "      held by %s %" PRIu32 ", meanwhile itself", comm,
		row->holder->holder_tid);
	for (i = 0; i < WAIT_CHAIN_PARTS && sum.parts[i].what; i++) {
		frame_names__printable(sum.parts[i].what, what, sizeof(what));
		fprintf(out, "%s %.0f%% %s", i ? ";" : "",
			100.0 * (double)sum.parts[i].ns / (double)sum.waited_ns, what);
		seen += sum.parts[i].ns;
	}
	seen += sum.other_ns;
	if (sum.other_ns)
		fprintf(out, "; %.0f%% off CPU otherwise",
			100.0 * (double)sum.other_ns / (double)sum.waited_ns);
	if (seen < sum.waited_ns && 200 * (sum.waited_ns - seen) >= sum.waited_ns)
		fprintf(out, "%s %.0f%% on CPU or not seen", i ? ";" : "",
			100.0 * (double)(sum.waited_ns - seen) / (double)sum.waited_ns);
	fputc('\n', out);
}

static void print_rows(FILE *out, const struct profile *p, const struct object_row *rows, size_t nr,
		       uint64_t total_ns, size_t limit)
{
	size_t name_columns = NAME_COLUMNS_MIN, i;
	char time[32], comm[4 * OFFCPU_COMM_LEN + 1];

	for (i = 0; i < nr && i < limit; i++) {
		size_t width = text_column__width(rows[i].label);

		if (width > name_columns)
			name_columns = width < NAME_COLUMNS_MAX ? width : NAME_COLUMNS_MAX;
	}
	fprintf(out, "\nBy object (top %zu)\n  ", limit);
	text_column__print(out, "object", name_columns);
	fprintf(out, " %14s %7s %9s  %s\n", "off-CPU", "share", "waits", "holder");
	for (i = 0; i < nr && i < limit; i++) {
		const struct object_row *row = &rows[i];

		output__format_duration(row->total_ns, time, sizeof(time));
		fputs("  ", out);
		text_column__print(out, row->label, name_columns);
		fprintf(out, " %14s %6.1f%% %9" PRIu64, time,
			total_ns ? 100.0 * (double)row->total_ns / (double)total_ns : 0.0,
			row->count);
		if (row->holder) {
			frame_names__printable(row->holder->holder_comm ?: "", comm, sizeof(comm));
			fprintf(out, "  %s %" PRIu32 " (%.0f%%)", comm, row->holder->holder_tid,
				100.0 * (double)row->holder_ns / (double)row->total_ns);
		}
		fputc('\n', out);
		if (row->holder)
			print_chain(out, p, row);
	}
	if (nr > limit)
		fprintf(out, "  ... %zu more\n", nr - limit);
}

int text_objects__print(FILE *out, const struct profile *p, struct profile_entry **entries,
			size_t nr, uint64_t total_ns, uint32_t top)
{
	struct profile_entry **with = calloc(nr ? nr : 1, sizeof(*with));
	struct object_row *rows = NULL;
	size_t n = 0, i, nr_rows;

	if (!with)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (entries[i]->key.object)
			with[n++] = entries[i];
	}
	if (n) {
		rows = calloc(n, sizeof(*rows));
		if (!rows) {
			free(with);
			return -ENOMEM;
		}
		qsort(with, n, sizeof(*with), compare_entries);
		nr_rows = make_rows(with, n, rows);
		qsort(rows, nr_rows, sizeof(*rows), compare_rows);
		print_rows(out, p, rows, nr_rows, total_ns, top ?: OUTPUT_TOP_THREADS);
	}
	free(rows);
	free(with);
	return 0;
}
