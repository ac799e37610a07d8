// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output/frame_names.h"

void frame_names__sanitize(char *s)
{
	for (; *s; s++) {
		if (*s == ';' || *s == ' ' || *s == '\t' || *s == '\n')
			*s = '_';
	}
}

void frame_names__frame(const struct frame *f, char *buf, size_t size)
{
	const char *module, *slash;

	if (f->sym) {
		snprintf(buf, size, "%s", f->sym);
	} else if (f->kernel || !f->module) {
		snprintf(buf, size, "0x%" PRIx64, f->addr);
	} else {
		slash = strrchr(f->module, '/');
		module = slash ? slash + 1 : f->module;
		snprintf(buf, size, "%s+0x%" PRIx64, module, f->module_off);
	}
	frame_names__sanitize(buf);
}

void frame_names__inline(const struct frame_inline *in, char *buf, size_t size)
{
	snprintf(buf, size, "%s", in->function);
	frame_names__sanitize(buf);
}

size_t frame_names__inline_chain(const struct frame *f, const struct frame_inline **chain,
				 size_t max)
{
	const struct frame_inline *in;
	size_t nr = 0, i;

	for (in = f->inlined; in; in = in->caller)
		nr++;
	/* Deeper nesting than max keeps its outer part. */
	for (in = f->inlined; nr > max; in = in->caller)
		nr--;
	for (i = nr; i > 0; i--, in = in->caller)
		chain[i - 1] = in;
	return nr;
}
