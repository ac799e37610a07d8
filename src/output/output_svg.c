// SPDX-License-Identifier: GPL-2.0
/*
 * An interactive flame graph in one self-contained SVG file: the frames
 * are laid out here as static rectangles (so the picture shows even where
 * scripts do not run), and a small embedded script adds zoom, search,
 * tooltips and the flame/icicle toggle. No network, no external font.
 *
 * From the root down: the base wait class ("lock"), the full class when it
 * has a detail ("lock:futex"), the thread state, the command name, then
 * the user frames and the kernel frames, so one click zooms into all lock
 * waits or all preempted time. Colors follow the wait class.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "lib/strpool.h"
#include "output/frame_names.h"
#include "output/output.h"

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define TOP_MARGIN 56
#define BOTTOM_MARGIN 28
#define SIDE_MARGIN 10
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
	uint64_t count;
	uint32_t depth; /* the root is 0 */
	struct node *parent;
	struct node **children;
	size_t nr_children;
	size_t children_cap;
};

struct node_key {
	const struct node *parent;
	const char *name;
	enum node_kind kind;
};

struct flame {
	struct strpool *names;
	struct hash_table *index; /* node_key -> node */
	struct node root;
	uint32_t max_depth;
	int err;
};

static uint64_t hash_node(const void *key)
{
	const struct node_key *k = key;
	uint64_t parts[3] = { (uintptr_t)k->parent, (uintptr_t)k->name, k->kind };

	return hash_table__hash_bytes(parts, sizeof(parts), 0);
}

static bool equal_node(const void *a, const void *b)
{
	const struct node_key *x = a, *y = b;

	return x->parent == y->parent && x->name == y->name && x->kind == y->kind;
}

static void add_time(struct node *n, const struct profile_entry *e)
{
	n->total_ns += e->total_ns;
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
	struct node_key key = { parent, strpool__intern(fl->names, text), kind };
	struct indexed_node *in;
	struct node *n;

	if (!key.name) {
		fl->err = -ENOMEM;
		return NULL;
	}
	in = hash_table__find(fl->index, &key);
	if (in) {
		add_time(&in->node, e);
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
	add_time(n, e);
	return n;
}

static void add_entry(struct flame *fl, const struct profile_entry *e)
{
	const struct wait *w = &e->key;
	const char *colon = strchr(w->wait_class, ':');
	char name[600];
	struct node *n;
	uint32_t i;

	snprintf(name, sizeof(name), "%.*s",
		 colon ? (int)(colon - w->wait_class) : (int)strlen(w->wait_class), w->wait_class);
	n = child(fl, &fl->root, name, NODE_CLASS, e);
	if (!n)
		return;
	n->base_class = n->name;
	if (colon && !(n = child(fl, n, w->wait_class, NODE_CLASS, e)))
		return;
	snprintf(name, sizeof(name), "[%s]", states__name(w->state));
	n = child(fl, n, name, NODE_STATE, e);
	n = n ? child(fl, n, w->comm, NODE_COMM, e) : NULL;
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
}

static int compare_nodes(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;

	return strcmp(x->name, y->name);
}

/* The narrow children of n become one frame that holds their time. */
static void merge_narrow(struct flame *fl, struct node *n, uint64_t min_ns)
{
	struct node *merged = NULL;
	size_t kept = 0, nr_merged = 0, i;
	char name[64];

	for (i = 0; i < n->nr_children; i++) {
		struct node *c = n->children[i];

		if (c->total_ns >= min_ns) {
			n->children[kept++] = c;
			merge_narrow(fl, c, min_ns);
			continue;
		}
		if (!merged)
			merged = c; /* reused in place as the merged frame */
		else {
			merged->total_ns += c->total_ns;
			merged->count += c->count;
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

static void sort_tree(struct node *n)
{
	size_t i;

	if (n->nr_children > 1)
		qsort(n->children, n->nr_children, sizeof(*n->children), compare_nodes);
	for (i = 0; i < n->nr_children; i++)
		sort_tree(n->children[i]);
}

static void write_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			/* XML 1.0 forbids most control characters, even escaped. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
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
};

/*
 * One frame: start and value in nanoseconds and its depth as data for the
 * script, and its place at full width for a reader without scripts.
 */
static void write_node(const struct layout *l, const struct node *n, uint64_t start_ns)
{
	double scale = (double)(IMAGE_WIDTH - 2 * SIDE_MARGIN) / (double)(l->total_ns ?: 1);
	double x = SIDE_MARGIN + (double)start_ns * scale, width = (double)n->total_ns * scale;
	uint32_t y = l->height - BOTTOM_MARGIN - (n->depth + 1) * FRAME_HEIGHT;
	char duration[32];
	size_t i;

	output__format_duration(n->total_ns, duration, sizeof(duration));
	fprintf(l->out,
		"<g class=\"f\" data-s=\"%" PRIu64 "\" data-v=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%u\" data-k=\"%s\" data-c=\"%s\"><title>",
		start_ns, n->total_ns, n->count, n->depth, kind_names[n->kind],
		n->base_class ? n->base_class : "");
	write_escaped(l->out, n->name);
	fprintf(l->out, "\n%s off CPU, %.2f%%, %" PRIu64 " wait%s</title>", duration,
		100.0 * (double)n->total_ns / (double)(l->total_ns ?: 1), n->count,
		n->count == 1 ? "" : "s");
	fprintf(l->out,
		"<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\"/>"
		"<text x=\"%.2f\" y=\"%u\"></text></g>\n",
		x, y, width, FRAME_HEIGHT - 1, x + 3, y + FRAME_HEIGHT - 4);
	for (i = 0; i < n->nr_children; i++) {
		write_node(l, n->children[i], start_ns);
		start_ns += n->children[i]->total_ns;
	}
}

/* The interactive part; every name it uses is defined in this file. */
static const char script[] =
#include "flamegraph_js.inc"
    ;

static const char style[] = "text{font-family:monospace;font-size:12px;fill:#000}"
			    ".f rect{stroke:#fff;stroke-width:0.5;rx:2}"
			    ".f text{pointer-events:none}"
			    "#hint{font-size:11px}"
			    ".f:hover rect{stroke:#000;stroke-width:1}"
			    ".f.match rect{fill:#e040fb !important}"
			    ".hidden{display:none}"
			    ".button{cursor:pointer;fill:#1565c0}"
			    ".button:hover{text-decoration:underline}"
			    "#title{font-size:16px;text-anchor:middle}";

int output_svg__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct profile_entry **entries = NULL;
	struct flame fl = { 0 };
	struct layout l = { .out = out };
	char duration[32];
	size_t nr = 0, i;
	int err;

	(void)opts;
	fl.names = strpool__new();
	fl.index = hash_table__new(hash_node, equal_node);
	fl.root.name = "all";
	fl.root.kind = NODE_ROOT;
	err = fl.names && fl.index ? profile__sorted_entries(p, &entries, &nr) : -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		add_time(&fl.root, entries[i]);
		add_entry(&fl, entries[i]);
		err = fl.err;
	}
	if (err)
		goto out;
	merge_narrow(&fl, &fl.root,
		     (uint64_t)((double)fl.root.total_ns * MIN_FRAME_PIXELS /
				(IMAGE_WIDTH - 2 * SIDE_MARGIN)));
	sort_tree(&fl.root);
	l.total_ns = fl.root.total_ns;
	l.height = TOP_MARGIN + (fl.max_depth + 1) * FRAME_HEIGHT + BOTTOM_MARGIN;
	output__format_duration(fl.root.total_ns, duration, sizeof(duration));
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" data-total=\"%" PRIu64 "\">\n"
		"<style>%s</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"18\">Off-CPU time: %s in %" PRIu64
		" waits</text>\n"
		"<text id=\"reset\" class=\"button hidden\" x=\"%d\" y=\"18\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"18\">Search</text>\n"
		"<text id=\"orientation\" class=\"button\" x=\"%d\" y=\"18\">Icicle</text>\n"
		"<text id=\"hint\" x=\"%d\" y=\"40\" text-anchor=\"end\" fill=\"#666\">"
		"width: time off CPU; click a frame to zoom; colors: wait class</text>\n"
		"<g id=\"legend\"></g>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<g id=\"frames\">\n",
		IMAGE_WIDTH, l.height, IMAGE_WIDTH, l.height, fl.root.total_ns, style,
		IMAGE_WIDTH / 2, duration, fl.root.count, SIDE_MARGIN, IMAGE_WIDTH - 170,
		IMAGE_WIDTH - 90, IMAGE_WIDTH - SIDE_MARGIN, IMAGE_WIDTH - SIDE_MARGIN,
		l.height - 8, SIDE_MARGIN, l.height - 8);
	write_node(&l, &fl.root, 0);
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
