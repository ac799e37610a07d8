// SPDX-License-Identifier: GPL-2.0
/* Folded stacks for flamegraph.pl, inferno and speedscope. */
#include <inttypes.h>

#include "output/folded_lines.h"
#include "output/output.h"

int output_folded__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct folded_lines lines;
	size_t i;
	int err = folded_lines__build_time(p, false, false, opts->group_by == GROUP_BY_OBJECT,
					   opts->time, &lines);

	if (err)
		return err;
	for (i = 0; i < lines.nr; i++)
		fprintf(out, "%s %" PRIu64 "\n", lines.lines[i].text, lines.lines[i].total_ns);
	folded_lines__free(&lines);
	return 0;
}
