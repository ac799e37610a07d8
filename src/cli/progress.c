// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "cli/progress.h"
#include "offcpu.h"

#define NS_PER_SEC UINT64_C(1000000000)

void progress__init(struct progress *p, FILE *out, bool is_terminal, bool verbose, bool has_command,
		    uint64_t now_ns)
{
	p->out = out;
	p->in_place = is_terminal;
	p->every_ns = 0;
	if (is_terminal && (verbose || !has_command))
		p->every_ns = NS_PER_SEC;
	else if (verbose)
		p->every_ns = 10 * NS_PER_SEC;
	p->started_ns = now_ns;
	p->next_ns = now_ns + p->every_ns;
	p->shown = false;
}

bool progress__due(const struct progress *p, uint64_t now_ns)
{
	return p->every_ns && now_ns >= p->next_ns;
}

int progress__format(char *buf, size_t size, uint64_t elapsed_ns, uint64_t waits, uint64_t dropped)
{
	return snprintf(buf, size, "offcpu: %" PRIu64 "s, %" PRIu64 " wait%s, %" PRIu64 " dropped",
			elapsed_ns / NS_PER_SEC, waits, waits == 1 ? "" : "s", dropped);
}

void progress__show(struct progress *p, uint64_t now_ns, const uint64_t *counters)
{
	/* Every wait lost before user space saw it: no room in either table. */
	uint64_t dropped = counters[OFFCPU_CNT_TABLE_FULL] + counters[OFFCPU_CNT_RINGBUF_FULL];
	char line[128];

	progress__format(line, sizeof(line), now_ns - p->started_ns, counters[OFFCPU_CNT_EMITTED],
			 dropped);
	if (p->in_place)
		fprintf(p->out, "\r%s\033[K", line);
	else
		fprintf(p->out, "%s\n", line);
	fflush(p->out);
	p->shown = true;
	p->next_ns = now_ns + p->every_ns;
}

void progress__end(struct progress *p)
{
	if (p->shown && p->in_place) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->shown = false;
}
