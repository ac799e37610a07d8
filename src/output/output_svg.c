// SPDX-License-Identifier: GPL-2.0
/*
 * An interactive flame graph in one self-contained SVG file: the frames
 * are laid out and colored here as static rectangles, with the legend (so
 * the picture shows even where scripts do not run), and a small embedded
 * script adds zoom, search, tooltips and the flame/icicle toggle. No
 * network, no external font.
 *
 * From the root down: the base wait class ("lock"), the full class when it
 * has a detail ("lock:futex"), the thread state, the command name, then
 * the user frames and the kernel frames, so one click zooms into all lock
 * waits or all preempted time. Colors follow the wait class.
 *
 * On-CPU samples (-F) stand beside the classes under an "[on-cpu]" frame,
 * then the command name and the frames, in the warm colors of a CPU flame
 * graph; the waits then take cool hues, so either side reads at a glance.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/array.h"
#include "lib/hash_table.h"
#include "lib/strpool.h"
#include "lib/utf8.h"
#include "output/folded_lines.h"
#include "output/frame_names.h"
#include "output/output.h"

/*
 * Every coordinate of the picture, named once: the frames are laid out here
 * and again by the script when it zooms, which reads these from the <svg>
 * element's data-* attributes (write_header) rather than keeping its own.
 */
#define IMAGE_WIDTH 1200
#define SIDE_MARGIN 10
#define PLOT_WIDTH (IMAGE_WIDTH - 2 * SIDE_MARGIN)
#define BOTTOM_MARGIN 28 /* the footer: details and search results */
#define FRAME_HEIGHT 16
#define FRAME_GAP 1 /* between a frame and the one above it */
#define FONT_SIZE 12
/*
 * Monospace fonts advance 0.6 em a character (DejaVu Sans Mono 1233/2048,
 * Liberation Mono 1229/2048): how many characters fit a frame or a legend
 * entry, with no font metrics at hand.
 */
#define CHAR_WIDTH (0.6 * FONT_SIZE)
#define LABEL_DX 3 /* a frame's name, inside its rectangle */
#define LABEL_DY (FRAME_HEIGHT - 4)
#define HEADER_BASELINE 18 /* title and buttons */
#define SEARCH_BUTTON_X (IMAGE_WIDTH - 170)
#define ORIENTATION_BUTTON_X (IMAGE_WIDTH - 90)
#define SUBTITLE_BASELINE 36 /* what the view left out, under the title */
#define LEGEND_BASELINE 40   /* the legend's first row, without a subtitle */
#define LEGEND_ROW_HEIGHT 18 /* a legend wider than the picture goes on in rows */
#define LEGEND_SWATCH 12
#define LEGEND_SWATCH_RISE 10 /* its top above the baseline */
#define LEGEND_LABEL_DX (LEGEND_SWATCH + 4)
#define LEGEND_ITEM_GAP 12
/* The hint, at the right of the legend's last row if it fits there, else below it. */
#define HINT_TEXT                                                                              \
	"width: time off CPU; click a frame to zoom; colors: wait class; outlined: kernel"
#define HINT_TEXT_SAMPLED                                                                      \
	"width: time on and off CPU; click a frame to zoom; colors: warm on CPU, cool by "     \
	"wait class; outlined: kernel"
#define HINT_FONT_SIZE 11
#define HEADER_BELOW 16 /* from the header's last baseline to the frames */
#define FOOTER_RISE 8 /* footer baseline above the bottom edge */
/*
 * Siblings narrower than this many pixels at full width are merged into one
 * frame: 10,000 unique stacks stay a picture (and a file) one can use, and
 * their time still counts where it belongs.
 */
#define MIN_FRAME_PIXELS 0.5

enum node_kind {
	NODE_ROOT,
	NODE_CLASS,
	NODE_STATE,
	NODE_COMM,
	NODE_USER,
	NODE_KERNEL,
	NODE_MERGED
};

struct node {
	const char *name; /* interned */
	enum node_kind kind;
	const char *base_class; /* interned: colors the node */
	uint64_t total_ns;
	uint64_t count;	   /* waits */
	uint64_t samples;  /* on-CPU samples, whose time total_ns holds too */
	uint64_t start_ns; /* where it begins at full width, once laid out */
	uint32_t depth;	   /* the root is 0 */
	struct node *parent;
	struct node **children;
	size_t nr_children;
	size_t children_cap;
};

struct node_key {
	const struct node *parent;
	const char *name;
	enum node_kind kind;
	bool sample; /* apart from a wait class a recording may name "[on-cpu]" */
};

struct flame {
	struct strpool *names;
	struct hash_table *index; /* node_key -> node */
	struct node root;
	uint32_t max_depth;
	bool sample; /* the entry being added is of on-CPU samples */
	bool objects; /* --group-by object: what a wait waited on, a frame under its class */
	uint64_t sample_ns;
	int err;
};

static uint64_t hash_node(const void *key)
{
	const struct node_key *k = key;
	uint64_t parts[4] = { (uintptr_t)k->parent, (uintptr_t)k->name, k->kind, k->sample };

	return hash_table__hash_bytes(parts, sizeof(parts), 0);
}

static bool equal_node(const void *a, const void *b)
{
	const struct node_key *x = a, *y = b;

	return x->parent == y->parent && x->name == y->name && x->kind == y->kind &&
	       x->sample == y->sample;
}

static void add_time(const struct flame *fl, struct node *n, const struct profile_entry *e)
{
	n->total_ns += e->total_ns;
	if (fl->sample)
		n->samples += e->count;
	else
		n->count += e->count;
}

/* A node and its key live in one allocation; the key comes first. */
struct indexed_node {
	struct node_key key;
	struct node node;
};

/* The child of parent named text, made if new, with the entry's time added. */
static struct node *child(struct flame *fl, struct node *parent, const char *text,
			  enum node_kind kind, const struct profile_entry *e)
{
	struct node_key key = { parent, strpool__intern(fl->names, text), kind, fl->sample };
	struct indexed_node *in;
	struct node *n;

	if (!key.name) {
		fl->err = -ENOMEM;
		return NULL;
	}
	in = hash_table__find(fl->index, &key);
	if (in) {
		add_time(fl, &in->node, e);
		return &in->node;
	}
	in = calloc(1, sizeof(*in));
	if (!in) {
		fl->err = -ENOMEM;
		return NULL;
	}
	in->key = key;
	n = &in->node;
	n->name = key.name;
	n->kind = kind;
	n->parent = parent;
	n->depth = parent->depth + 1;
	n->base_class = parent->base_class;
	if (parent->nr_children == parent->children_cap) {
		size_t cap = parent->children_cap ? parent->children_cap * 2 : 4;
		struct node **grown = realloc(parent->children, cap * sizeof(*grown));

		if (!grown) {
			free(in);
			fl->err = -ENOMEM;
			return NULL;
		}
		parent->children = grown;
		parent->children_cap = cap;
	}
	if (hash_table__insert(fl->index, &in->key, in)) {
		free(in);
		fl->err = -ENOMEM;
		return NULL;
	}
	parent->children[parent->nr_children++] = n;
	if (n->depth > fl->max_depth)
		fl->max_depth = n->depth;
	add_time(fl, n, e);
	return n;
}

/*
 * --wakers: the off-wake flame graph's top half, as the folded
 * lines have it: "--", the waker's kernel and user frames leaf first, and
 * the waker's name (or its interrupt context) on top.
 */
static void add_waker(struct flame *fl, struct node *n, const struct profile_entry *e)
{
	const struct stack *k = e->key.waker_kernel_stack, *u = e->key.waker_user_stack;
	const char *context = output__waker_context(e->key.waker.context);
	char name[600];
	uint32_t i;

	if (!k && !u)
		return;
	n = child(fl, n, "--", NODE_STATE, e);
	for (i = 0; n && k && i < k->nr; i++) {
		frame_names__frame(&k->frames[i], name, sizeof(name));
		n = child(fl, n, name, NODE_KERNEL, e);
	}
	for (i = 0; n && u && i < u->nr; i++) {
		frame_names__frame(&u->frames[i], name, sizeof(name));
		n = child(fl, n, name, NODE_USER, e);
	}
	if (!n)
		return;
	if (e->key.waker.context == OFFCPU_WAKER_TASK)
		frame_names__printable(e->key.waker.comm ? e->key.waker.comm : "", name,
				       sizeof(name));
	else
		snprintf(name, sizeof(name), "[%s]", context ? context : "unknown");
	child(fl, n, name, NODE_COMM, e);
}

/* The user frames, root first, then the kernel frames, above n; the leaf's node. */
static struct node *add_frames(struct flame *fl, struct node *n, const struct profile_entry *e)
{
	const struct wait *w = &e->key;
	char name[600];
	uint32_t i;

	for (i = w->user_stack ? w->user_stack->nr : 0; n && i > 0; i--) {
		const struct frame *f = &w->user_stack->frames[i - 1];
		const struct frame_inline *chain[FRAME_NAMES_MAX_INLINES];
		size_t nr = frame_names__inline_chain(f, chain, FRAME_NAMES_MAX_INLINES), k;

		frame_names__frame(f, name, sizeof(name));
		n = child(fl, n, name, NODE_USER, e);
		/* Inlined functions are frames of their own, as in the folded output. */
		for (k = 0; n && k < nr; k++) {
			frame_names__inline(chain[k], name, sizeof(name));
			n = child(fl, n, name, NODE_USER, e);
		}
	}
	for (i = w->kernel_stack ? w->kernel_stack->nr : 0; n && i > 0; i--) {
		frame_names__frame(&w->kernel_stack->frames[i - 1], name, sizeof(name));
		n = child(fl, n, name, NODE_KERNEL, e);
	}
	return n;
}

/*
 * A pseudo-frame per label a rule pack read, [NAME=VALUE], under n, then
 * with --group-by object what it waited on; NULL: out of memory.
 */
static struct node *add_labels(struct flame *fl, struct node *n, const struct profile_entry *e)
{
	const struct labels *labels = e->key.labels;
	char label[300], name[600];
	uint32_t i;

	for (i = 0; labels && n && i < labels->nr; i++) {
		snprintf(label, sizeof(label), "[%s=%s]", labels->items[i].name,
			 labels->items[i].value);
		frame_names__printable(label, name, sizeof(name));
		n = child(fl, n, name, NODE_STATE, e);
	}
	if (fl->objects && e->key.object && n) {
		output__object_name(e->key.object, label, sizeof(label) - 2);
		snprintf(name, sizeof(name), "[%s]", label);
		frame_names__printable(name, label, sizeof(label));
		n = child(fl, n, label, NODE_STATE, e);
	}
	return n;
}

/*
 * Every name as the other formats show it (frame_names.h), so frames sort
 * and merge the same however a name's bytes came, live or from a recording.
 */
static void add_entry(struct flame *fl, const struct profile_entry *e)
{
	const struct wait *w = &e->key;
	char name[600], wait_class[600], *colon;
	struct node *n;

	frame_names__printable(w->wait_class, wait_class, sizeof(wait_class));
	colon = strchr(wait_class, ':');
	snprintf(name, sizeof(name), "%.*s",
		 colon ? (int)(colon - wait_class) : (int)strlen(wait_class), wait_class);
	n = child(fl, &fl->root, name, NODE_CLASS, e);
	if (!n)
		return;
	n->base_class = n->name;
	if (colon && !(n = child(fl, n, wait_class, NODE_CLASS, e)))
		return;
	/* Under the class, what the process itself said it waited for. */
	n = add_labels(fl, n, e);
	if (!n)
		return;
	snprintf(name, sizeof(name), "[%s]", states__name(w->state));
	n = child(fl, n, name, NODE_STATE, e);
	frame_names__printable(w->comm, name, sizeof(name));
	n = n ? child(fl, n, name, NODE_COMM, e) : NULL;
	/* A hang stands apart, on a pseudo-frame of its own. */
	if (n && (w->open & OFFCPU_WAIT_OPEN_AFTER))
		n = child(fl, n, OUTPUT_STILL_WAITING_FRAME, NODE_STATE, e);
	n = n ? add_frames(fl, n, e) : NULL;
	if (n)
		add_waker(fl, n, e);
}

/* A sample's: "[on-cpu]", its labels, its command name, its frames. */
static void add_sample(struct flame *fl, const struct profile_entry *e)
{
	const struct wait *w = &e->key;
	char name[600];
	struct node *n = child(fl, &fl->root, FOLDED_ON_CPU_FRAME, NODE_CLASS, e);

	if (!n)
		return;
	n->base_class = n->name;
	n = add_labels(fl, n, e);
	if (!n)
		return;
	frame_names__printable(w->comm, name, sizeof(name));
	n = child(fl, n, name, NODE_COMM, e);
	if (n)
		add_frames(fl, n, e);
}

/* The on-CPU samples beside the waits, "[on-cpu]" where a wait has its class. */
static int add_samples(struct flame *fl, const struct profile *p)
{
	struct profile_entry **samples = NULL;
	size_t nr = 0, i;
	int err = profile__sorted_samples(p, &samples, &nr);

	fl->sample = true;
	for (i = 0; i < nr && !err; i++) {
		add_time(fl, &fl->root, samples[i]);
		fl->sample_ns += samples[i]->total_ns;
		add_sample(fl, samples[i]);
		err = fl->err;
	}
	fl->sample = false;
	free(samples);
	return err;
}

/* By name; at the root, the idle class last, at the right edge, after the user's own waits. */
static int compare_nodes(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
	bool x_idle = x->kind == NODE_CLASS && x->depth == 1 && !strcmp(x->name, "idle");
	bool y_idle = y->kind == NODE_CLASS && y->depth == 1 && !strcmp(y->name, "idle");

	if (x_idle != y_idle)
		return x_idle ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The nodes still to visit, for walks that keep no recursion: a stack is
 * as deep as a recording says (100,000 frames are one line of JSON), and
 * the C stack is not.
 */
struct node_stack {
	struct node **items;
	size_t nr;
	size_t cap;
};

static int push(struct node_stack *s, struct node *n)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct node **grown = realloc(s->items, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->items = grown;
		s->cap = cap;
	}
	s->items[s->nr++] = n;
	return 0;
}

/* The narrow children of n become one frame that holds their time; the rest is kept. */
static void merge_children(struct flame *fl, struct node *n, uint64_t min_ns)
{
	struct node *merged = NULL;
	size_t kept = 0, nr_merged = 0, i;
	char name[64];

	for (i = 0; i < n->nr_children; i++) {
		struct node *c = n->children[i];

		if (c->total_ns >= min_ns) {
			n->children[kept++] = c;
			continue;
		}
		if (!merged)
			merged = c; /* reused in place as the merged frame */
		else {
			merged->total_ns += c->total_ns;
			merged->count += c->count;
			merged->samples += c->samples;
		}
		nr_merged++;
	}
	if (!merged) {
		n->nr_children = kept;
		return;
	}
	if (nr_merged > 1 || merged->nr_children) {
		snprintf(name, sizeof(name), "[%zu narrow frames]", nr_merged);
		merged->name = strpool__intern(fl->names, name) ?: merged->name;
		merged->kind = NODE_MERGED;
		merged->nr_children = 0;
		/* Narrow wait classes merged at the root are of no one class. */
		merged->base_class = n->base_class;
	}
	n->children[kept++] = merged;
	n->nr_children = kept;
}

/* Every node's narrow children merged, from the root down; then siblings sorted by name. */
static int merge_narrow_and_sort(struct flame *fl, uint64_t min_ns)
{
	struct node_stack todo = { 0 };
	struct node *n;
	size_t i;
	int err = push(&todo, &fl->root);

	while (!err && todo.nr) {
		n = todo.items[--todo.nr];
		merge_children(fl, n, min_ns);
		if (n->nr_children > 1)
			qsort(n->children, n->nr_children, sizeof(*n->children), compare_nodes);
		/* The merged frame has no children left to visit. */
		for (i = 0; i < n->nr_children && !err; i++)
			err = push(&todo, n->children[i]);
	}
	free(todo.items);
	return err;
}

/*
 * Text and attribute values as XML 1.0 takes them, whatever a string
 * holds: markup characters as references; bytes that are no character,
 * and U+FFFE and U+FFFF, which XML forbids, as U+FFFD; controls, which XML
 * forbids (C0) or only tolerates (DEL, C1), as "\xNN", as the text report
 * shows them. Names come here printable already; this keeps the file
 * valid whatever else is written.
 */
static void write_escaped(FILE *out, const char *s)
{
	uint32_t cp;
	size_t len;

	for (; *s; s += len) {
		len = utf8__next(s, &cp);
		if (cp == '<')
			fputs("&lt;", out);
		else if (cp == '>')
			fputs("&gt;", out);
		else if (cp == '&')
			fputs("&amp;", out);
		else if (cp == '"')
			fputs("&quot;", out);
		else if (cp == '\'')
			fputs("&apos;", out);
		else if (cp == UTF8_INVALID || cp == 0xfffe || cp == 0xffff)
			fputs(UTF8_REPLACEMENT_TEXT, out);
		else if (utf8__is_control(cp))
			fprintf(out, "\\x%02x", (unsigned int)cp);
		else
			fwrite(s, 1, len, out);
	}
}

/*
 * Colors, by the base wait class: one hue each, paler for kernel frames,
 * the lightness varied a little by name so neighbours stay apart. Written
 * into the file as each rectangle's fill, so the picture is colored where
 * no script runs, and the script keeps no table of its own. Beside on-CPU
 * samples, which are red to yellow as in a CPU flame graph, the classes
 * take the cool hues: green to violet, the common ones (sleep, lock, io,
 * cpu, poll) farthest apart.
 */
static const struct {
	const char *base_class;
	unsigned int hue;
	unsigned int cool_hue;
} hues[] = {
	{ "cpu", 0, 165 },	  { "sleep", 210, 205 }, { "lock", 32, 245 },
	{ "io", 275, 280 },	  { "net", 125, 120 },	 { "poll", 185, 185 },
	{ "pipe", 55, 135 },	  { "child", 330, 260 }, { "signal", 300, 295 },
	{ "pagefault", 15, 150 }, { "idle", 220, 220 },	 { "other", 0, 0 },
};

/* On-CPU hues, from red to yellow: flamegraph.pl's "hot" palette. */
#define WARM_HUES 56
#define WARM_PSEUDO_HUE 16 /* [on-cpu], a label, the command name */

/* Kernel threads waiting for work: greyish, so the user's own waits stand out. */
static unsigned int saturation(const char *base_class)
{
	if (!strcmp(base_class, "other"))
		return 0;
	return strcmp(base_class, "idle") ? 70 : 18;
}

/* CSS's hsl() (hue in degrees, the rest in percent) as "#rrggbb", which every renderer reads. */
static void hsl_to_hex(unsigned int hue, unsigned int sat, unsigned int light, char *buf,
		       size_t size)
{
	/* Where the largest (c) and middle (x) parts go, by sixth of the circle. */
	static const unsigned char largest[6] = { 0, 1, 1, 2, 2, 0 },
				   middle[6] = { 1, 0, 2, 1, 0, 2 };
	double l = light / 100.0, spread = 2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1;
	double c = (1 - spread) * (sat / 100.0), rgb[3] = { 0, 0, 0 }, m = l - c / 2;
	unsigned int sixth = hue % 360 / 60;
	double within = (hue % 60) / 60.0;
	size_t i;

	rgb[largest[sixth]] = c;
	rgb[middle[sixth]] = c * (sixth % 2 ? 1 - within : within);
	for (i = 0; i < 3; i++)
		rgb[i] = (rgb[i] + m) * 255 + 0.5;
	snprintf(buf, size, "#%02x%02x%02x", (unsigned int)rgb[0], (unsigned int)rgb[1],
		 (unsigned int)rgb[2]);
}

/* An on-CPU frame's: its hue by name, kernel frames paler, as node_color's. */
static void warm_color(const struct node *n, unsigned int variation, char *buf, size_t size)
{
	if (n->kind == NODE_CLASS || n->kind == NODE_STATE || n->kind == NODE_COMM)
		hsl_to_hex(WARM_PSEUDO_HUE, 85, 52, buf, size);
	else if (n->kind == NODE_KERNEL)
		hsl_to_hex(variation % WARM_HUES, 75, 72 + variation % 10, buf, size);
	else
		hsl_to_hex(variation % WARM_HUES, 85, 55 + variation % 12, buf, size);
}

/*
 * A node's fill; unknown classes (from a recording), the root and what
 * holds both waits and samples are grey. cool: the graph has samples.
 */
static void node_color(const struct node *n, bool cool, char *buf, size_t size)
{
	unsigned int light, variation = (unsigned int)(hash_table__hash_string(n->name) % 1000);
	size_t i;

	if (n->kind != NODE_ROOT && n->samples && !n->count) {
		warm_color(n, variation, buf, size);
		return;
	}

	for (i = 0; n->kind != NODE_ROOT && n->base_class && i < ARRAY_SIZE(hues); i++) {
		if (!strcmp(hues[i].base_class, n->base_class))
			break;
	}
	if (n->kind == NODE_ROOT || !n->base_class || i == ARRAY_SIZE(hues)) {
		hsl_to_hex(0, 0, 78, buf, size);
		return;
	}
	if (n->kind == NODE_CLASS || n->kind == NODE_STATE || n->kind == NODE_COMM)
		light = 48;
	else if (n->kind == NODE_KERNEL)
		light = 74 + variation % 12;
	else
		light = 58 + variation % 14;
	hsl_to_hex(cool ? hues[i].cool_hue : hues[i].hue, saturation(n->base_class), light, buf,
		   size);
}

static const char *const kind_names[] = {
	[NODE_ROOT] = "root",	  [NODE_CLASS] = "class", [NODE_STATE] = "state",
	[NODE_COMM] = "comm",	  [NODE_USER] = "user",	  [NODE_KERNEL] = "kernel",
	[NODE_MERGED] = "merged",
};

struct layout {
	FILE *out;
	uint64_t total_ns;
	uint32_t height;
	const char *subtitle; /* NULL: none */
	const char *hint;
	bool cool;	     /* waits in cool colors, beside samples */
	int legend_baseline; /* the legend's first row */
	int hint_baseline;
	int top; /* where the frames begin */
};

/*
 * One frame: start and value in nanoseconds and its depth as data for the
 * script, and its place and color at full width for a reader without scripts.
 */
static void write_node(const struct layout *l, const struct node *n)
{
	double scale = PLOT_WIDTH / (double)(l->total_ns ?: 1);
	double x = SIDE_MARGIN + (double)n->start_ns * scale, width = (double)n->total_ns * scale;
	uint32_t y = l->height - BOTTOM_MARGIN - (n->depth + 1) * FRAME_HEIGHT;
	const char *side = !n->samples ? "off" : n->count ? "on and off" : "on";
	char duration[32], fill[8];

	output__format_duration(n->total_ns, duration, sizeof(duration));
	node_color(n, l->cool, fill, sizeof(fill));
	fprintf(l->out,
		"<g class=\"f\" data-s=\"%" PRIu64 "\" data-v=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%u\" data-k=\"%s\" data-c=\"",
		n->start_ns, n->total_ns, n->count, n->depth, kind_names[n->kind]);
	/* A recording read back may name any class, quotes and all. */
	write_escaped(l->out, n->base_class ? n->base_class : "");
	if (n->samples)
		fprintf(l->out, "\" data-sn=\"%" PRIu64, n->samples);
	fputs("\"><title>", l->out);
	write_escaped(l->out, n->name);
	fprintf(l->out, "\n%s %s CPU, %.2f%%", duration, side,
		100.0 * (double)n->total_ns / (double)(l->total_ns ?: 1));
	if (n->count || !n->samples)
		fprintf(l->out, ", %" PRIu64 " wait%s", n->count, n->count == 1 ? "" : "s");
	if (n->samples)
		fprintf(l->out, ", %" PRIu64 " sample%s", n->samples, n->samples == 1 ? "" : "s");
	fputs("</title>", l->out);
	fprintf(l->out,
		"<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>"
		"<text x=\"%.2f\" y=\"%u\"></text></g>\n",
		x, y, width, FRAME_HEIGHT - FRAME_GAP, fill, x + LABEL_DX, y + LABEL_DY);
}

/* Every frame, each parent before its children, children side by side from its start. */
static int write_frames(const struct layout *l, struct node *root)
{
	struct node_stack todo = { 0 };
	struct node *n;
	uint64_t start_ns;
	size_t i;
	int err = push(&todo, root);

	root->start_ns = 0;
	while (!err && todo.nr) {
		n = todo.items[--todo.nr];
		write_node(l, n);
		start_ns = n->start_ns;
		for (i = 0; i < n->nr_children; i++) {
			n->children[i]->start_ns = start_ns;
			start_ns += n->children[i]->total_ns;
		}
		/* Pushed last first, so the first child is written next. */
		for (i = n->nr_children; i > 0 && !err; i--)
			err = push(&todo, n->children[i - 1]);
	}
	free(todo.items);
	return err;
}

/*
 * A swatch and share per base wait class, in the header, in rows as wide
 * as the picture (a click zooms to its class: script); with out NULL,
 * only measured. Eight classes on one row ran under the hint. Where the
 * last row ends, for the hint.
 */
static double walk_legend(const struct layout *l, const struct node *root, FILE *out,
			  int *baseline)
{
	double x = SIDE_MARGIN, width;
	char caption[128], fill[8];
	size_t i;

	*baseline = l->legend_baseline;
	for (i = 0; i < root->nr_children; i++) {
		const struct node *c = root->children[i];

		if (c->kind != NODE_CLASS)
			continue;
		snprintf(caption, sizeof(caption), "%s %.2f%%", c->name,
			 100.0 * (double)c->total_ns / (double)(l->total_ns ?: 1));
		width = LEGEND_LABEL_DX + (double)strlen(caption) * CHAR_WIDTH;
		if (x > SIDE_MARGIN && x + width > IMAGE_WIDTH - SIDE_MARGIN) {
			x = SIDE_MARGIN;
			*baseline += LEGEND_ROW_HEIGHT;
		}
		if (out) {
			node_color(c, l->cool, fill, sizeof(fill));
			fputs("<g class=\"button legend-item\" data-c=\"", out);
			write_escaped(out, c->name);
			fprintf(out,
				"\"><rect x=\"%g\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
				"<text x=\"%g\" y=\"%d\">",
				x, *baseline - LEGEND_SWATCH_RISE, LEGEND_SWATCH, LEGEND_SWATCH, fill,
				x + LEGEND_LABEL_DX, *baseline);
			write_escaped(out, caption);
			fputs("</text></g>", out);
		}
		x += width + LEGEND_ITEM_GAP;
	}
	return x;
}

/* The header's rows: title, what was left out, the legend's rows and the hint. */
static void lay_out_header(struct layout *l, const struct node *root)
{
	double hint_width = (double)strlen(l->hint) * 0.6 * HINT_FONT_SIZE, x;
	int last_row;

	l->legend_baseline = LEGEND_BASELINE + (l->subtitle ? LEGEND_ROW_HEIGHT : 0);
	x = walk_legend(l, root, NULL, &last_row);
	l->hint_baseline = last_row;
	if (x + hint_width > IMAGE_WIDTH - SIDE_MARGIN)
		l->hint_baseline += LEGEND_ROW_HEIGHT;
	l->top = l->hint_baseline + HEADER_BELOW;
}

static void write_legend(const struct layout *l, const struct node *root)
{
	int baseline;

	fputs("<g id=\"legend\">", l->out);
	walk_legend(l, root, l->out, &baseline);
	fputs("</g>\n", l->out);
}

/* The interactive part; every name it uses is defined in this file. */
static const char script[] =
#include "flamegraph_js.inc"
    ;

static const char style[] =
    "text{font-family:monospace;font-size:%dpx;fill:#000}"
    ".f rect{stroke:#fff;stroke-width:0.5;rx:2}"
    ".f text{pointer-events:none}"
    /* Kernel frames outlined, as flamegraph.pl's --colors sets them apart. */
    ".f[data-k=kernel] rect{stroke:#333;stroke-width:0.8}"
    "#hint{font-size:%dpx}"
    ".f:hover rect{stroke:#000;stroke-width:1}"
    ".f.match rect{fill:#e040fb !important}"
    ".hidden{display:none}"
    ".button{cursor:pointer;fill:#1565c0}"
    ".button:hover{text-decoration:underline}"
    "#title{font-size:16px;text-anchor:middle}";

/*
 * The <svg> element carries the geometry the script lays frames out by
 * when it zooms, then the header and the footer's empty lines.
 */
/* What the picture shows: the waits, and the samples if there are any. */
static void write_title(const struct layout *l, const struct node *root, uint64_t sample_ns)
{
	char duration[32], on[32], off[32];

	fprintf(l->out, "<text id=\"title\" x=\"%d\" y=\"%d\">", IMAGE_WIDTH / 2, HEADER_BASELINE);
	if (!root->samples) {
		output__format_duration(root->total_ns, duration, sizeof(duration));
		fprintf(l->out, "Off-CPU time: %s in %" PRIu64 " waits</text>\n", duration,
			root->count);
		return;
	}
	/* Short, clear of the buttons; the root frame says the sum. */
	output__format_duration(sample_ns, on, sizeof(on));
	output__format_duration(root->total_ns - sample_ns, off, sizeof(off));
	fprintf(l->out,
		"On-CPU time: %s in %" PRIu64 " samples, off-CPU time: %s in %" PRIu64
		" waits</text>\n",
		on, root->samples, off, root->count);
}

static void write_header(const struct layout *l, const struct node *root, uint64_t sample_ns)
{

	fprintf(l->out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" data-total=\"%" PRIu64 "\" "
		"data-side=\"%d\" data-top=\"%d\" data-bottom=\"%d\" data-frame-height=\"%d\" "
		"data-char-width=\"%g\" data-label-dx=\"%d\" data-label-dy=\"%d\">\n<style>",
		IMAGE_WIDTH, l->height, IMAGE_WIDTH, l->height, root->total_ns, SIDE_MARGIN,
		l->top, BOTTOM_MARGIN, FRAME_HEIGHT, CHAR_WIDTH, LABEL_DX, LABEL_DY);
	fprintf(l->out, style, FONT_SIZE, HINT_FONT_SIZE);
	fputs("</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n", l->out);
	write_title(l, root, sample_ns);
	fprintf(l->out,
		"<text id=\"reset\" class=\"button hidden\" x=\"%d\" y=\"%d\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"%d\">Search</text>\n"
		"<text id=\"orientation\" class=\"button\" x=\"%d\" y=\"%d\">Icicle</text>\n"
		"<text id=\"hint\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">%s</text>\n",
		SIDE_MARGIN, HEADER_BASELINE, SEARCH_BUTTON_X, HEADER_BASELINE,
		ORIENTATION_BUTTON_X, HEADER_BASELINE, IMAGE_WIDTH - SIDE_MARGIN, l->hint_baseline,
		l->hint);
	if (l->subtitle) {
		fprintf(l->out, "<text id=\"subtitle\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			IMAGE_WIDTH / 2, SUBTITLE_BASELINE);
		fputs("hidden: ", l->out);
		write_escaped(l->out, l->subtitle);
		fputs("</text>\n", l->out);
	}
	write_legend(l, root);
	fprintf(l->out,
		"<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		IMAGE_WIDTH - SIDE_MARGIN, l->height - FOOTER_RISE, SIDE_MARGIN,
		l->height - FOOTER_RISE);
}

int output_svg__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct profile_entry **entries = NULL;
	struct flame fl = { 0 };
	struct layout l = { .out = out, .hint = HINT_TEXT };
	char said[256];
	size_t nr = 0, i;
	int err;

	if (output__describe_hidden(p, opts, said, sizeof(said)))
		l.subtitle = said;
	fl.names = strpool__new();
	fl.index = hash_table__new(hash_node, equal_node);
	fl.root.name = "all";
	fl.root.kind = NODE_ROOT;
	fl.objects = opts->group_by == GROUP_BY_OBJECT;
	err = fl.names && fl.index ? profile__sorted_entries(p, &entries, &nr) : -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		/* --time: the entry weighed by the time asked for. */
		struct profile_entry weighed = *entries[i];

		weighed.total_ns = output__entry_time(entries[i], opts->time);
		if (!weighed.total_ns && opts->time != OUTPUT_TIME_OFF_CPU)
			continue;
		add_time(&fl, &fl.root, &weighed);
		add_entry(&fl, &weighed);
		err = fl.err;
	}
	/* Blocked and run-queue time are parts of a wait; a sample has neither. */
	if (!err && opts->time == OUTPUT_TIME_OFF_CPU)
		err = add_samples(&fl, p);
	if (err)
		goto out;
	err = merge_narrow_and_sort(
	    &fl, (uint64_t)((double)fl.root.total_ns * MIN_FRAME_PIXELS / PLOT_WIDTH));
	if (err)
		goto out;
	l.total_ns = fl.root.total_ns;
	if (fl.root.samples) {
		l.cool = true;
		l.hint = HINT_TEXT_SAMPLED;
	}
	lay_out_header(&l, &fl.root);
	l.height = (uint32_t)l.top + (fl.max_depth + 1) * FRAME_HEIGHT + BOTTOM_MARGIN;
	write_header(&l, &fl.root, fl.sample_ns);
	fputs("<g id=\"frames\">\n", out);
	err = write_frames(&l, &fl.root);
	if (err)
		goto out;
	fprintf(out, "</g>\n<script><![CDATA[\n%s]]></script>\n</svg>\n", script);
out:
	free(entries);
	if (fl.index) {
		struct hash_table_iter it = { 0 };
		const void *key;
		void *value;

		while (hash_table__next(fl.index, &it, &key, &value))
			free(((struct indexed_node *)value)->node.children);
	}
	free(fl.root.children);
	hash_table__free_values(fl.index, free);
	strpool__free(fl.names);
	return err;
}
