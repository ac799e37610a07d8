/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profile as folded stack lines, "comm;[state];[wait];user...;kernel_[k]",
 * root first, summed per distinct line: what the folded and text back-ends
 * both show.
 */
#ifndef OFFCPU_FOLDED_LINES_H
#define OFFCPU_FOLDED_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct folded_line {
	char *text;
	uint64_t total_ns;
	uint64_t count;
};

struct folded_lines {
	struct folded_line *lines;
	size_t nr;
};

/* A frame's display name: its symbol, else "module+0xoffset", never with ';' or ' '. */
void frame_display_name(const struct frame *f, char *buf, size_t size);
/* An inlined function's display name, made as frame_display_name's. */
void inline_display_name(const struct frame_inline *in, char *buf, size_t size);
/* Inline nesting deeper than this keeps its outer part. */
#define FRAME_MAX_INLINES 32
/* The functions inlined at f, outermost first; at most max (the outer ones). */
size_t frame_inlines_outer_first(const struct frame *f, const struct frame_inline **chain,
				 size_t max);
/*
 * by_total: largest first; else sorted by text. with_lines: each user frame
 * followed by " (file.c:LINE)" where DWARF knows it (not for folded files).
 * Inlined functions are frames of their own, inside their caller.
 */
int folded_lines__build(const struct profile *p, bool by_total, bool with_lines,
			struct folded_lines *out);
void folded_lines__free(struct folded_lines *lines);

#endif
