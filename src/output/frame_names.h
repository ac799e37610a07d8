/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a frame is named in every output that shows frames as text (folded,
 * text, svg, and pprof for code without a symbol): one name per frame and
 * one per function inlined into it, safe for folded-format readers.
 */
#ifndef OFFCPU_FRAME_NAMES_H
#define OFFCPU_FRAME_NAMES_H

#include <stddef.h>

#include "profile/frame.h"

/* A frame's display name: its symbol, else "module+0xoffset", never with ';' or ' '. */
void frame_names__frame(const struct frame *f, char *buf, size_t size);
/* An inlined function's display name, made as frame_names__frame's. */
void frame_names__inline(const struct frame_inline *in, char *buf, size_t size);
/* Inline nesting deeper than this keeps its outer part. */
#define FRAME_NAMES_MAX_INLINES 32
/* The functions inlined at f, outermost first; at most max (the outer ones). */
size_t frame_names__inline_chain(const struct frame *f, const struct frame_inline **chain,
				 size_t max);
/* Folded-format readers split on ';' and on the last space: those become '_'. */
void frame_names__sanitize(char *s);

#endif
