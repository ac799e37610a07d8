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
#include "trace/counters.h"

struct group {
	char *label;
	uint64_t total_ns;
	uint64_t count;
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
};

/*
 * Names as frame_names__printable shows them: a thread or process may name
 * itself with terminal commands, and this report goes to root's terminal.
 */
static void label_of(const struct profile_entry *e, enum report_group_by by, char *buf, size_t size)
{
	const char *name = e->key.title ? e->key.title : e->key.comm;
	bool exited = e->key.pid == PROFILE_EXITED_ID;
	/* A traced comm is 16 bytes at most, each "\xNN" at most; titles are cut to the column. */
	char comm[4 * OFFCPU_COMM_LEN + 1], column[26];

	switch (by) {
	case GROUP_BY_TID:
		frame_names__printable(e->key.comm, comm, sizeof(comm));
		if (exited)
			snprintf(buf, size, "%-16s %17s", comm, "(exited)");
		else
			snprintf(buf, size, "%-16s %8u %8u", comm, e->key.pid, e->key.tid);
		break;
	case GROUP_BY_PID:
		frame_names__printable(name, column, sizeof(column));
		if (exited)
			snprintf(buf, size, "%-25s %8s", column, "(exited)");
		else
			snprintf(buf, size, "%-25s %8u", column, e->key.pid);
		break;
	case GROUP_BY_COMM:
		frame_names__printable(e->key.comm, buf, size);
		break;
	case GROUP_BY_TITLE:
		frame_names__printable(name, buf, size);
		break;
	case GROUP_BY_STATE:
		snprintf(buf, size, "%s", states__name(e->key.state));
		break;
	case GROUP_BY_WAIT:
		frame_names__printable(e->key.wait_class, buf, size);
		break;
	}
}

static int print_groups(FILE *out, uint64_t total_ns, struct profile_entry **entries, size_t nr,
			enum report_group_by by, uint32_t top)
{
	const char *title = sections[by].title, *header = sections[by].header;
	size_t limit = top ?: (sections[by].is_top_list ? OUTPUT_TOP_THREADS : SIZE_MAX);
	struct groups g = { 0 };
	char label[300], time[32];
	size_t i;
	int err = 0;

	g.index = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	g.items = calloc(nr ? nr : 1, sizeof(*g.items));
	if (!g.index || !g.items) {
		hash_table__free(g.index);
		free(g.items);
		return -ENOMEM;
	}
	for (i = 0; i < nr && !err; i++) {
		label_of(entries[i], by, label, sizeof(label));
		err = groups_add(&g, label, entries[i], nr);
	}
	if (!err) {
		qsort(g.items, g.nr, sizeof(*g.items), compare_groups);
		if (limit != SIZE_MAX)
			fprintf(out, "\n%s (top %zu)\n", title, limit);
		else
			fprintf(out, "\n%s\n", title);
		fprintf(out, "  %-34s %14s %7s %9s\n", header, "off-CPU", "share", "waits");
		for (i = 0; i < g.nr && i < limit; i++) {
			output__format_duration(g.items[i].total_ns, time, sizeof(time));
			fprintf(out, "  %-34s %14s %6.1f%% %9" PRIu64 "\n", g.items[i].label, time,
				share(g.items[i].total_ns, total_ns), g.items[i].count);
		}
		if (g.nr > limit)
			fprintf(out, "  ... %zu more\n", g.nr - limit);
	}
	groups_free(&g);
	return err;
}

/*
 * Leaf first, as BCC's offcputime prints: where it blocked on top. frames
 * is ";root;...;leaf", walked from its end: a user frame can bring up to
 * FRAME_NAMES_MAX_INLINES inlined names with it, so no array sized by the
 * stack depth can hold every name, and the leaf is the one a cut would lose.
 * The folded "_[k]" suffix read as part of a name: each run of kernel or
 * user frames is headed by a "kernel:" or "user:" line instead.
 */
static void print_frames_leaf_first(FILE *out, const char *frames)
{
	static const char kernel_suffix[] = "_[k]";
	const size_t suffix_len = sizeof(kernel_suffix) - 1;
	const char *end = frames + strlen(frames), *sep, *name;
	int side = -1, kernel;
	size_t len;

	while (end > frames) {
		sep = memrchr(frames, ';', (size_t)(end - frames));
		name = sep ? sep + 1 : frames;
		len = (size_t)(end - name);
		kernel = len > suffix_len && !memcmp(end - suffix_len, kernel_suffix, suffix_len);
		if (kernel)
			len -= suffix_len;
		/* The "--" between a waker's stack and the wakee's belongs to neither. */
		if (len == 2 && !memcmp(name, "--", 2)) {
			fprintf(out, "    --\n");
			side = -1;
		} else {
			if (kernel != side)
				fprintf(out, "    %s:\n", kernel ? "kernel" : "user");
			side = kernel;
			fprintf(out, "      %.*s\n", (int)len, name);
		}
		if (!sep)
			break;
		end = sep;
	}
}

static bool is_idle(const char *wait_class)
{
	return !strncmp(wait_class, "idle", 4) && (!wait_class[4] || wait_class[4] == ':');
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
		const struct folded_line *line = &lines.lines[i];
		size_t len = strcspn(line->text, ";"), wait;

		/* "comm;[state];[wait]", whole: a cut could split a character. */
		len += strcspn(line->text + len + 1, ";") + 1;
		wait = len + 2;
		len += strcspn(line->text + len + 1, ";") + 1;
		/* Issue #16: "[still-waiting]" belongs to the heading too. */
		if (!strncmp(line->text + len, ";" OUTPUT_STILL_WAITING_FRAME,
			     sizeof(OUTPUT_STILL_WAITING_FRAME))) {
			if (open_apart)
				continue;
			len += sizeof(OUTPUT_STILL_WAITING_FRAME);
		}
		if (!opts->show_idle && line->text[len - 1] == ']' && wait < len &&
		    (!strncmp(line->text + wait, "idle]", 5) ||
		     !strncmp(line->text + wait, "idle:", 5)))
			continue;
		shown++;
		output__format_duration(line->total_ns, time, sizeof(time));
		fprintf(out, "  #%zu %.*s  %s, %.1f%%, %" PRIu64 " wait%s\n", shown, (int)len,
			line->text, time, share(line->total_ns, total_ns), line->count,
			line->count == 1 ? "" : "s");
		print_frames_leaf_first(out, line->text + len);
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

/*
 * Issue #16: the waits that had not ended at the stop come first, longest
 * first, with their stacks: a hung thread is what its user came for.
 * Idle kernel threads are left to -k, as in the tables.
 */
static void print_still_waiting(FILE *out, struct profile_entry **entries, size_t nr,
				const struct output_opts *opts)
{
	uint32_t limit = opts->top ? opts->top : OUTPUT_TOP_STACKS;
	char time[32];
	size_t i, shown = 0;

	for (i = 0; i < nr && shown < limit; i++) {
		const struct wait *w = &entries[i]->key;

		if (!(w->open & OFFCPU_WAIT_OPEN_AFTER))
			continue;
		if (!shown++)
			fprintf(out, "\nStill waiting (longest first)\n");
		output__format_duration(entries[i]->total_ns, time, sizeof(time));
		fprintf(out, "  #%zu tid %u (%s) [%s] [%s]  %s so far%s\n", shown, w->tid, w->comm,
			states__name(w->state), w->wait_class, time,
			entries[i]->count > 1 ? " (summed)" : "");
		print_stack_leaf_first(out, w->kernel_stack, "kernel");
		print_stack_leaf_first(out, w->user_stack, "user");
	}
}

int output_text__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct profile_entry **entries, **open_entries;
	uint64_t hidden_ns = 0, hidden_count = 0, open_ns = 0, open_count = 0, rest_ns;
	char time[32];
	size_t nr, shown = 0, nr_open = 0, kept = 0, i;
	bool open_apart;
	int err = profile__sorted_entries(p, &entries, &nr);

	if (err)
		return err;
	/*
	 * Kernel threads waiting for work are most of an idle system's
	 * off-CPU time and none of what its user asked about: they are left
	 * out of the tables, and the shares are of the rest.
	 */
	for (i = 0; i < nr; i++) {
		if (!opts->show_idle && is_idle(entries[i]->key.wait_class)) {
			hidden_ns += entries[i]->total_ns;
			hidden_count += entries[i]->count;
		} else {
			entries[shown++] = entries[i];
		}
	}
	output__format_duration(p->total_ns, time, sizeof(time));
	fprintf(out, "offcpu: %" PRIu64 " wait%s, %s off CPU in total\n", p->total_count,
		p->total_count == 1 ? "" : "s", time);
	if (hidden_count) {
		output__format_duration(hidden_ns, time, sizeof(time));
		fprintf(out,
			"hidden: %s (%.1f%%) in %" PRIu64
			" wait%s of kernel threads idling (wait class idle); -k or -c/-p/-t shows "
			"them\n",
			time, share(hidden_ns, p->total_ns), hidden_count,
			hidden_count == 1 ? "" : "s");
	}
	/*
	 * Issue #16: waits still open at the stop are listed first, and kept
	 * out of the tables and stacks below: a daemon asleep for hours would
	 * otherwise outweigh everything the recording measured. Unless every
	 * wait is still open (offcpu snapshot): then the tables sum them.
	 */
	open_entries = malloc((shown ? shown : 1) * sizeof(*open_entries));
	if (!open_entries) {
		free(entries);
		return -ENOMEM;
	}
	for (i = 0; i < shown; i++) {
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
			" wait%s not ended at the stop, listed first, left out of the tables\n",
			time, open_count, open_count == 1 ? "" : "s");
	}
	print_still_waiting(out, open_entries, nr_open, opts);
	if (open_apart) {
		shown = kept;
		rest_ns = p->total_ns - hidden_ns - open_ns;
	} else {
		memcpy(entries, open_entries, nr_open * sizeof(*entries));
		shown = nr_open;
		rest_ns = p->total_ns - hidden_ns;
	}
	free(open_entries);
	err = print_groups(out, rest_ns, entries, shown, GROUP_BY_STATE, opts->top);
	err = err ?: print_groups(out, rest_ns, entries, shown, GROUP_BY_WAIT, opts->top);
	/* --group-by state or wait would repeat a table above. */
	if (opts->group_by != GROUP_BY_STATE && opts->group_by != GROUP_BY_WAIT)
		err = err ?: print_groups(out, rest_ns, entries, shown, opts->group_by, opts->top);
	free(entries);
	err = err ?: print_top_stacks(out, p, rest_ns, opts, open_apart);
	if (err)
		return err;
	fprintf(out, "\nHealth counters\n");
	counters__print(out, p->counters, "  ");
	return 0;
}
