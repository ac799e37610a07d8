// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "output/folded_lines.h"
#include "output/frame_names.h"
#include "output/output.h"

struct line_buffer {
	char *text;
	size_t len;
	size_t cap;
};

static int append(struct line_buffer *b, const char *s, bool separator)
{
	size_t n = strlen(s) + 1;

	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *grown = realloc(b->text, cap);

		if (!grown)
			return -ENOMEM;
		b->text = grown;
		b->cap = cap;
	}
	if (separator && b->len)
		b->text[b->len++] = ';';
	memcpy(b->text + b->len, s, n);
	b->len += n - 1;
	return 0;
}

/* " (file.c:123)" after a name, for the text report's --lines. */
static void append_source(char *name, size_t size, const char *file, uint32_t line)
{
	size_t len = strlen(name);
	char *p;

	if (!file)
		return;
	frame_names__append_source(name, size, file, line, false);
	for (p = name + len; *p; p++) {
		if (*p == ';')
			*p = '_';
	}
}

/*
 * A user frame, root first: its own function, then the functions inlined
 * into it from the outermost in, each a frame of its own as in perf.
 */
static int append_user_frame(struct line_buffer *b, const struct frame *f, bool with_lines,
			     bool for_text)
{
	const struct frame_inline *chain[FRAME_NAMES_MAX_INLINES], *in;
	size_t nr = frame_names__inline_chain(f, chain, FRAME_NAMES_MAX_INLINES), i;
	char name[600];
	int err;

	frame_names__frame(f, name, sizeof(name));
	/* An interpreted frame's name has its source already. */
	if (with_lines && !f->kind)
		append_source(name, sizeof(name), f->file, f->line);
	/*
	 * Folded frames never hold a space (scripts split folded
	 * lines at the first one): "name_(file.py:LINE)" there. Its name and
	 * file had theirs made '_' already; this one is ours.
	 */
	if (f->kind && !for_text) {
		char *p;

		for (p = name; *p; p++)
			if (*p == ' ')
				*p = '_';
	}
	err = append(b, name, true);
	for (i = 0; i < nr && !err; i++) {
		in = chain[i];
		frame_names__inline(in, name, sizeof(name));
		if (with_lines)
			append_source(name, sizeof(name), in->file, in->line);
		err = append(b, name, true);
	}
	return err;
}

/* "--", the waker's kernel then user frames leaf first, its name on top. */
static int render_waker(const struct profile_entry *e, struct line_buffer *b)
{
	const struct stack *k = e->key.waker_kernel_stack, *u = e->key.waker_user_stack;
	const char *context = output__waker_context(e->key.waker.context);
	char name[600];
	uint32_t i;
	int err;

	if (!k && !u)
		return 0;
	err = append(b, "--", true);
	for (i = 0; k && i < k->nr && !err; i++) {
		frame_names__frame(&k->frames[i], name, sizeof(name) - 4);
		strcat(name, "_[k]");
		err = append(b, name, true);
	}
	for (i = 0; u && i < u->nr && !err; i++) {
		frame_names__frame(&u->frames[i], name, sizeof(name));
		err = append(b, name, true);
	}
	if (err)
		return err;
	if (e->key.waker.context == OFFCPU_WAKER_TASK) {
		frame_names__folded(e->key.waker.comm ? e->key.waker.comm : "", name, sizeof(name));
	} else {
		snprintf(name, sizeof(name), "[%s]", context ? context : "unknown");
	}
	return append(b, name, true);
}

/*
 * A sample has "[on-cpu]" where a wait has its "[state];[wait class]", and
 * neither a still-waiting frame nor a waker.
 */
static int render(const struct profile_entry *e, bool sample, bool with_lines, bool for_text,
		  bool objects, struct line_buffer *b)
{
	char name[600];
	int err;
	uint32_t i;

	b->len = 0;
	frame_names__folded(e->key.comm, name, sizeof(name));
	err = append(b, name, true);
	if (sample) {
		err = err ?: append(b, FOLDED_ON_CPU_FRAME, true);
	} else {
		snprintf(name, sizeof(name), "[%s]", states__name(e->key.state));
		err = err ?: append(b, name, true);
		/* A recording read back may name any class. */
		name[0] = '[';
		frame_names__folded(e->key.wait_class, name + 1, sizeof(name) - 2);
		strcat(name, "]");
		err = err ?: append(b, name, true);
	}
	if (e->key.open & OFFCPU_WAIT_OPEN_AFTER)
		err = err ?: append(b, OUTPUT_STILL_WAITING_FRAME, true);
	/* A rule pack's labels, "[pg.wait_event=Lock:tuple]", under the class. */
	for (i = 0; e->key.labels && i < e->key.labels->nr && !err; i++) {
		char label[300];

		snprintf(label, sizeof(label), "%s=%s", e->key.labels->items[i].name,
			 e->key.labels->items[i].value);
		name[0] = '[';
		frame_names__folded(label, name + 1, sizeof(name) - 2);
		strcat(name, "]");
		err = append(b, name, true);
	}
	/* --group-by object: "[mutex orders_lock]", under the labels. */
	if (objects && e->key.object && !err) {
		char object[500];

		output__object_name(e->key.object, object, sizeof(object));
		name[0] = '[';
		frame_names__folded(object, name + 1, sizeof(name) - 2);
		strcat(name, "]");
		err = append(b, name, true);
	}
	if (e->key.user_stack) {
		for (i = e->key.user_stack->nr; i > 0 && !err; i--)
			err = append_user_frame(b, &e->key.user_stack->frames[i - 1], with_lines,
						for_text);
	}
	if (e->key.kernel_stack) {
		for (i = e->key.kernel_stack->nr; i > 0 && !err; i--) {
			frame_names__frame(&e->key.kernel_stack->frames[i - 1], name,
					   sizeof(name) - 4);
			strcat(name, "_[k]");
			err = append(b, name, true);
		}
	}
	return err || sample ? err : render_waker(e, b);
}

/* The entry's waker into its line's; waits no wakeup ended are not counted. */
static void add_waker(struct folded_line *line, const struct profile_entry *e)
{
	const struct waker *k = &e->key.waker;
	uint64_t blocked = e->total_ns - e->runq_ns;
	size_t i;

	line->runq_ns += e->runq_ns;
	if (!output__waker_context(k->context))
		return;
	for (i = 0; i < line->nr_wakers; i++) {
		const struct waker *seen = &line->wakers[i].waker;

		if (seen->context == k->context &&
		    (k->context != OFFCPU_WAKER_TASK ||
		     (seen->tid == k->tid && seen->pid == k->pid && seen->comm == k->comm)))
			break;
	}
	if (i == line->nr_wakers) {
		if (i == FOLDED_LINE_WAKERS) {
			line->others_blocked_ns += blocked;
			line->others_count += e->count;
			return;
		}
		line->wakers[line->nr_wakers++].waker = *k;
	}
	line->wakers[i].blocked_ns += blocked;
	line->wakers[i].count += e->count;
}

static int compare_by_total(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->text, y->text);
}

static int compare_by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

/*
 * The entries' lines into lines (room for nr more), their time as --time
 * weighs it; index finds a line by its text.
 */
static int add_lines(struct profile_entry **entries, size_t nr, bool samples, bool with_lines,
		     bool for_text, bool objects, enum output_time time, struct hash_table *index,
		     struct folded_lines *lines)
{
	struct line_buffer b = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		uint64_t ns = output__entry_time(entries[i], time);
		struct folded_line *line;

		if (!ns && time != OUTPUT_TIME_OFF_CPU)
			continue;
		err = render(entries[i], samples, with_lines, for_text, objects, &b);
		if (err)
			break;
		line = hash_table__find(index, b.text);
		if (!line) {
			line = &lines->lines[lines->nr];
			line->text = strdup(b.text);
			if (!line->text || hash_table__insert(index, line->text, line)) {
				free(line->text);
				err = -ENOMEM;
				break;
			}
			lines->nr++;
		}
		line->total_ns += ns;
		line->count += entries[i]->count;
		add_waker(line, entries[i]);
		estimate__add(&line->estimated, &entries[i]->estimated);
	}
	free(b.text);
	return err;
}

/* What a build takes: the waits, the on-CPU samples, or both. */
enum folded_sources {
	FOLDED_WAITS = 1,
	FOLDED_SAMPLES = 2,
};

static int build(const struct profile *p, bool by_total, bool with_lines, bool objects,
		 enum output_time time, unsigned int sources, struct folded_lines *out)
{
	struct hash_table *index =
	    hash_table__new(hash_table__hash_string, hash_table__equal_string);
	struct profile_entry **entries = NULL, **samples = NULL;
	struct folded_lines lines = { 0 };
	size_t nr = 0, nr_samples = 0;
	int err = 0;

	if (!index)
		return -ENOMEM;
	if (sources & FOLDED_WAITS)
		err = profile__sorted_entries(p, &entries, &nr);
	if (!err && (sources & FOLDED_SAMPLES))
		err = profile__sorted_samples(p, &samples, &nr_samples);
	if (!err) {
		lines.lines = calloc(nr + nr_samples ?: 1, sizeof(*lines.lines));
		if (!lines.lines)
			err = -ENOMEM;
	}
	if (!err)
		err = add_lines(entries, nr, false, with_lines, by_total, objects, time, index,
				&lines);
	if (!err)
		err = add_lines(samples, nr_samples, true, with_lines, by_total, false, time, index,
				&lines);
	free(entries);
	free(samples);
	hash_table__free(index);
	if (err) {
		folded_lines__free(&lines);
		return err;
	}
	qsort(lines.lines, lines.nr, sizeof(*lines.lines),
	      by_total ? compare_by_total : compare_by_text);
	*out = lines;
	return 0;
}

int folded_lines__build(const struct profile *p, bool by_total, bool with_lines,
			struct folded_lines *out)
{
	return build(p, by_total, with_lines, false, OUTPUT_TIME_OFF_CPU, FOLDED_WAITS, out);
}

int folded_lines__build_samples(const struct profile *p, bool by_total, bool with_lines,
				struct folded_lines *out)
{
	return build(p, by_total, with_lines, false, OUTPUT_TIME_OFF_CPU, FOLDED_SAMPLES, out);
}

int folded_lines__build_time(const struct profile *p, bool by_total, bool with_lines, bool objects,
			     enum output_time time, struct folded_lines *out)
{
	return build(p, by_total, with_lines, objects, time,
		     FOLDED_WAITS | (time == OUTPUT_TIME_OFF_CPU ? FOLDED_SAMPLES : 0), out);
}

void folded_lines__free(struct folded_lines *lines)
{
	size_t i;

	for (i = 0; i < lines->nr; i++)
		free(lines->lines[i].text);
	free(lines->lines);
	lines->lines = NULL;
	lines->nr = 0;
}
