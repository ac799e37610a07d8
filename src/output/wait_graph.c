// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "output/frame_names.h"
#include "output/output.h"
#include "output/wait_graph.h"

/* An edge while the graph is built: found again by its two ends. */
struct edge_key {
	size_t from;
	size_t to;
};

struct builder {
	struct wait_graph *g;
	struct hash_table *node_index; /* key string -> index + 1 */
	struct hash_table *edge_index; /* edge_key -> index + 1 */
	struct edge_key *edge_keys;
	size_t nodes_cap;
	size_t edges_cap;
};

static uint64_t hash_edge(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(struct edge_key), 0);
}

static bool equal_edge(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct edge_key));
}

/*
 * The node of a task (or an interrupt context), made if new. Exited
 * threads were merged under one ID: they stay apart by name.
 */
static int node_of(struct builder *b, bool interrupt, const char *comm, uint32_t id, size_t *out)
{
	char key[128], label[128], printable[4 * OFFCPU_COMM_LEN + 1];
	struct wait_graph_node *n;
	uintptr_t found;

	/* Titles are cut to a label's length. */
	frame_names__printable(comm ? comm : "", printable, sizeof(printable));
	if (interrupt)
		snprintf(key, sizeof(key), "[%s]", printable);
	else if (id == PROFILE_EXITED_ID)
		snprintf(key, sizeof(key), "%s (exited)", printable);
	else
		snprintf(key, sizeof(key), "#%u", id);
	if (interrupt || id == PROFILE_EXITED_ID)
		snprintf(label, sizeof(label), "%s", key);
	else
		snprintf(label, sizeof(label), "%s %u", printable, id);
	found = (uintptr_t)hash_table__find(b->node_index, key);
	if (found) {
		*out = found - 1;
		return 0;
	}
	if (b->g->nr_nodes == b->nodes_cap) {
		size_t cap = b->nodes_cap ? b->nodes_cap * 2 : 64;
		struct wait_graph_node *grown = realloc(b->g->nodes, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		b->g->nodes = grown;
		b->nodes_cap = cap;
	}
	n = &b->g->nodes[b->g->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->key = strdup(key);
	n->label = strdup(label);
	n->comm = strdup(printable);
	n->id = id;
	n->interrupt = interrupt;
	if (!n->key || !n->label || !n->comm ||
	    hash_table__insert(b->node_index, n->key, (void *)(uintptr_t)(b->g->nr_nodes + 1))) {
		free(n->key);
		free(n->label);
		free(n->comm);
		return -ENOMEM;
	}
	*out = b->g->nr_nodes++;
	return 0;
}

static int add_edge(struct builder *b, size_t from, size_t to, const struct profile_entry *e)
{
	struct edge_key key = { from, to };
	struct wait_graph_edge *edge;
	uintptr_t found = (uintptr_t)hash_table__find(b->edge_index, &key);
	size_t i;

	if (!found) {
		if (b->g->nr_edges == b->edges_cap) {
			size_t cap = b->edges_cap ? b->edges_cap * 2 : 64;
			struct wait_graph_edge *grown = realloc(b->g->edges, cap * sizeof(*grown));
			struct edge_key *keys;

			if (!grown)
				return -ENOMEM;
			b->g->edges = grown;
			keys = realloc(b->edge_keys, cap * sizeof(*keys));
			if (!keys)
				return -ENOMEM;
			b->edge_keys = keys;
			/* The index points into edge_keys: rebuild it where they moved. */
			hash_table__free(b->edge_index);
			b->edge_index = hash_table__new(hash_edge, equal_edge);
			if (!b->edge_index)
				return -ENOMEM;
			for (i = 0; i < b->g->nr_edges; i++) {
				if (hash_table__insert(b->edge_index, &b->edge_keys[i],
						       (void *)(uintptr_t)(i + 1)))
					return -ENOMEM;
			}
			b->edges_cap = cap;
		}
		b->edge_keys[b->g->nr_edges] = key;
		edge = &b->g->edges[b->g->nr_edges];
		memset(edge, 0, sizeof(*edge));
		edge->from = from;
		edge->to = to;
		if (hash_table__insert(b->edge_index, &b->edge_keys[b->g->nr_edges],
				       (void *)(uintptr_t)(b->g->nr_edges + 1)))
			return -ENOMEM;
		found = ++b->g->nr_edges;
	}
	edge = &b->g->edges[found - 1];
	edge->blocked_ns += e->total_ns - e->runq_ns;
	edge->runq_ns += e->runq_ns;
	edge->count += e->count;
	return 0;
}

static int add_entry(struct builder *b, const struct profile_entry *e, bool by_process)
{
	const struct wait *w = &e->key;
	bool interrupt = w->waker.context != OFFCPU_WAKER_TASK;
	size_t from, to;
	int err;

	if (!output__waker_context(w->waker.context))
		return 0;
	err = node_of(b, interrupt,
		      interrupt ? output__waker_context(w->waker.context) : w->waker.comm,
		      by_process ? w->waker.pid : w->waker.tid, &from);
	err = err
		  ?: node_of(b, false, by_process && w->title ? w->title : w->comm,
			     by_process ? w->pid : w->tid, &to);
	return err ?: add_edge(b, from, to, e);
}

/* Tarjan's strongly connected components, without recursion: a graph may be deep. */
struct tarjan {
	size_t *first; /* edges of node v: order[first[v]..first[v + 1]] */
	size_t *order; /* edge indexes by their from node */
	size_t *index; /* 0: not visited; else visit order + 1 */
	size_t *low;
	bool *on_stack;
	size_t *stack;
	size_t nr_stack;
	size_t *frames; /* the walk: node, then the position in its edges */
	size_t *positions;
	size_t nr_frames;
	size_t visited;
	size_t components;
};

static void visit(struct tarjan *t, size_t v)
{
	t->index[v] = t->low[v] = ++t->visited;
	t->stack[t->nr_stack++] = v;
	t->on_stack[v] = true;
	t->frames[t->nr_frames] = v;
	t->positions[t->nr_frames++] = t->first[v];
}

static void strong_components(struct wait_graph *g, struct tarjan *t, size_t root)
{
	visit(t, root);
	while (t->nr_frames) {
		size_t v = t->frames[t->nr_frames - 1], *pos = &t->positions[t->nr_frames - 1];

		if (*pos < t->first[v + 1]) {
			size_t w = g->edges[t->order[(*pos)++]].to;

			if (!t->index[w])
				visit(t, w);
			else if (t->on_stack[w] && t->index[w] < t->low[v])
				t->low[v] = t->index[w];
			continue;
		}
		if (t->low[v] == t->index[v]) {
			size_t w;

			do {
				w = t->stack[--t->nr_stack];
				t->on_stack[w] = false;
				g->nodes[w].component = t->components;
			} while (w != v);
			t->components++;
		}
		t->nr_frames--;
		if (t->nr_frames) {
			size_t u = t->frames[t->nr_frames - 1];

			if (t->low[v] < t->low[u])
				t->low[u] = t->low[v];
		}
	}
}

static int compare_edges(const void *a, const void *b)
{
	const struct wait_graph_edge *x = a, *y = b;

	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static int compare_knots(const void *a, const void *b)
{
	const struct wait_graph_knot *x = a, *y = b;

	if (x->woken_ns != y->woken_ns)
		return x->woken_ns > y->woken_ns ? -1 : 1;
	return x->nodes[0] < y->nodes[0] ? -1 : x->nodes[0] > y->nodes[0];
}

static void tarjan_free(struct tarjan *t)
{
	free(t->first);
	free(t->order);
	free(t->index);
	free(t->low);
	free(t->on_stack);
	free(t->stack);
	free(t->frames);
	free(t->positions);
}

/* Components no edge enters from another: the knots. */
static int find_knots(struct wait_graph *g)
{
	size_t n = g->nr_nodes, i, k, *fill = NULL;
	struct tarjan t = { 0 };
	bool *entered = NULL;
	uint64_t *woken = NULL;
	size_t *sizes = NULL;
	int err = -ENOMEM;

	t.first = calloc(n + 2, sizeof(*t.first));
	t.order = calloc(g->nr_edges + 1, sizeof(*t.order));
	t.index = calloc(n + 1, sizeof(*t.index));
	t.low = calloc(n + 1, sizeof(*t.low));
	t.on_stack = calloc(n + 1, sizeof(*t.on_stack));
	t.stack = calloc(n + 1, sizeof(*t.stack));
	t.frames = calloc(n + 1, sizeof(*t.frames));
	t.positions = calloc(n + 1, sizeof(*t.positions));
	fill = calloc(n + 1, sizeof(*fill));
	if (!t.first || !t.order || !t.index || !t.low || !t.on_stack || !t.stack || !t.frames ||
	    !t.positions || !fill)
		goto out;
	for (i = 0; i < g->nr_edges; i++)
		t.first[g->edges[i].from + 1]++;
	for (i = 0; i < n; i++)
		t.first[i + 1] += t.first[i];
	for (i = 0; i < g->nr_edges; i++)
		t.order[t.first[g->edges[i].from] + fill[g->edges[i].from]++] = i;
	for (i = 0; i < n; i++) {
		if (!t.index[i])
			strong_components(g, &t, i);
	}
	entered = calloc(t.components + 1, sizeof(*entered));
	woken = calloc(t.components + 1, sizeof(*woken));
	sizes = calloc(t.components + 1, sizeof(*sizes));
	g->knots = calloc(t.components + 1, sizeof(*g->knots));
	if (!entered || !woken || !sizes || !g->knots)
		goto out;
	for (i = 0; i < g->nr_edges; i++) {
		const struct wait_graph_edge *e = &g->edges[i];
		size_t from = g->nodes[e->from].component, to = g->nodes[e->to].component;

		/*
		 * An interrupt is outside every task by definition: a network
		 * card or a timer is no bottleneck to look into, and the threads
		 * it wakes may still wait for no other thread.
		 */
		if (from != to && !g->nodes[e->from].interrupt)
			entered[to] = true;
		woken[from] += e->blocked_ns;
	}
	for (i = 0; i < n; i++) {
		if (g->nodes[i].interrupt)
			entered[g->nodes[i].component] = true;
	}
	for (i = 0; i < n; i++)
		sizes[g->nodes[i].component]++;
	/* knot_of: the knot index + 1 of each component, through sizes reused as fill. */
	for (k = 0; k < t.components; k++) {
		struct wait_graph_knot *knot;

		if (entered[k])
			continue;
		knot = &g->knots[g->nr_knots++];
		knot->nodes = calloc(sizes[k], sizeof(*knot->nodes));
		if (!knot->nodes)
			goto out;
		knot->woken_ns = woken[k];
		for (i = 0; i < n; i++) {
			if (g->nodes[i].component == k) {
				g->nodes[i].knot = true;
				knot->nodes[knot->nr++] = i;
			}
		}
	}
	if (g->nr_knots)
		qsort(g->knots, g->nr_knots, sizeof(*g->knots), compare_knots);
	err = 0;
out:
	tarjan_free(&t);
	free(fill);
	free(entered);
	free(woken);
	free(sizes);
	return err;
}

int wait_graph__build(const struct profile *p, bool by_process, struct wait_graph **out)
{
	struct builder b = { 0 };
	struct profile_entry **entries = NULL;
	size_t nr = 0, i;
	int err;

	b.g = calloc(1, sizeof(*b.g));
	b.node_index = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	b.edge_index = hash_table__new(hash_edge, equal_edge);
	err = b.g && b.node_index && b.edge_index ? profile__sorted_entries(p, &entries, &nr)
						  : -ENOMEM;
	for (i = 0; i < nr && !err; i++)
		err = add_entry(&b, entries[i], by_process);
	free(entries);
	hash_table__free(b.node_index);
	hash_table__free(b.edge_index);
	free(b.edge_keys);
	if (!err) {
		for (i = 0; i < b.g->nr_edges; i++) {
			b.g->nodes[b.g->edges[i].from].woken_ns += b.g->edges[i].blocked_ns;
			b.g->nodes[b.g->edges[i].to].blocked_ns += b.g->edges[i].blocked_ns;
		}
		err = find_knots(b.g);
	}
	/* No edges: no array, and qsort must not be given NULL. */
	if (!err && b.g->nr_edges)
		qsort(b.g->edges, b.g->nr_edges, sizeof(*b.g->edges), compare_edges);
	if (err) {
		wait_graph__free(b.g);
		return err;
	}
	*out = b.g;
	return 0;
}

void wait_graph__free(struct wait_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nr_nodes; i++) {
		free(g->nodes[i].key);
		free(g->nodes[i].label);
		free(g->nodes[i].comm);
	}
	for (i = 0; i < g->nr_knots; i++)
		free(g->knots[i].nodes);
	free(g->nodes);
	free(g->edges);
	free(g->knots);
	free(g);
}
