// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-for graph in Graphviz DOT (`dot -Tsvg`). An edge from
 * waker to wakee, labeled with the wakee's blocked time and wait count,
 * its width growing with its share; knots (wait_graph.h) drawn red, their
 * nodes doubled, and named in the graph's label.
 */
#include <inttypes.h>

#include "output/output.h"
#include "output/wait_graph.h"

/* Inside a DOT string: quotes and backslashes escaped; labels are already printable. */
static void write_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void write_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	write_escaped(out, s);
	fputc('"', out);
}

int output_dot__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct wait_graph *g;
	uint64_t total = 0;
	char time[32];
	size_t i;
	char said[256];
	int err = wait_graph__build(p, opts->group_by == GROUP_BY_PID, &g);
	bool hidden = output__describe_hidden(p, opts, said, sizeof(said));

	if (err)
		return err;
	for (i = 0; i < g->nr_edges; i++)
		total += g->edges[i].blocked_ns;
	fprintf(out, "digraph offcpu {\n");
	fprintf(out, "  // Waker -> wakee, weighted by the wakee's blocked time. Knots (red): "
		     "components no edge enters from outside, which wait for no one else.\n");
	fprintf(out,
		"  graph [rankdir=LR, fontname=\"sans-serif\", labelloc=t, label=\"wait-for graph");
	if (g->nr_knots) {
		output__format_duration(g->knots[0].woken_ns, time, sizeof(time));
		fprintf(out, "; heaviest knot: ");
		for (i = 0; i < g->knots[0].nr && i < 4; i++) {
			fputs(i ? ", " : "", out);
			write_escaped(out, g->nodes[g->knots[0].nodes[i]].label);
		}
		fprintf(out, "%s (woke %s)", g->knots[0].nr > 4 ? ", ..." : "", time);
	}
	/* The label's second line: no quote or backslash in what it says. */
	if (hidden)
		fprintf(out, "\\nhidden: %s", said);
	fprintf(out, "\"];\n");
	fprintf(out, "  node [shape=box, fontname=\"sans-serif\"];\n");
	fprintf(out, "  edge [fontname=\"sans-serif\"];\n");
	for (i = 0; i < g->nr_nodes; i++) {
		const struct wait_graph_node *n = &g->nodes[i];

		fprintf(out, "  n%zu [label=", i);
		write_quoted(out, n->label);
		if (n->interrupt)
			fprintf(out, ", shape=ellipse");
		if (n->knot)
			fprintf(out, ", color=red, peripheries=2, knot=true");
		fprintf(out, "];\n");
	}
	for (i = 0; i < g->nr_edges; i++) {
		const struct wait_graph_edge *e = &g->edges[i];
		double width = total ? 1.0 + 5.0 * (double)e->blocked_ns / (double)total : 1.0;

		output__format_duration(e->blocked_ns, time, sizeof(time));
		fprintf(out,
			"  n%zu -> n%zu [label=\"%s, %" PRIu64 "\", blocked_ns=%" PRIu64
			", count=%" PRIu64 ", penwidth=%.2f%s];\n",
			e->from, e->to, time, e->count, e->blocked_ns, e->count, width,
			g->nodes[e->from].knot && g->nodes[e->to].knot &&
				g->nodes[e->from].component == g->nodes[e->to].component
			    ? ", color=red"
			    : "");
	}
	fprintf(out, "}\n");
	wait_graph__free(g);
	return 0;
}
