/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a frame is named in every output that shows frames as text (folded,
 * text, svg, and pprof for code without a symbol): one name per frame and
 * one per function inlined into it, safe for folded-format readers.
 *
 * Names are any bytes a user chose (a thread's name, a process title, a
 * binary's symbols and paths) and offcpu runs as root: each is shown as
 * printable text, so that no name can send a terminal a command or make a
 * format invalid.
 */
#ifndef OFFCPU_FRAME_NAMES_H
#define OFFCPU_FRAME_NAMES_H

#include <stddef.h>

#include "profile/frame.h"

/*
 * A frame's display name: its symbol, else "module+0xoffset", as
 * frame_names__folded makes it; interpreted code (f->kind) as
 * "name (file.py:LINE)".
 */
void frame_names__frame(const struct frame *f, char *buf, size_t size);
/* An inlined function's display name, made as frame_names__frame's. */
void frame_names__inline(const struct frame_inline *in, char *buf, size_t size);
/* Inline nesting deeper than this keeps its outer part. */
#define FRAME_NAMES_MAX_INLINES 32
/* The functions inlined at f, outermost first; at most max (the outer ones). */
size_t frame_names__inline_chain(const struct frame *f, const struct frame_inline **chain,
				 size_t max);
/*
 * s as printable UTF-8: C0 and C1 controls and DEL as "\xNN" (ESC is
 * "\x1b"), the line and paragraph separators U+2028 and U+2029 as
 * "\u2028" and "\u2029", bytes that are no character as U+FFFD
 * (lib/utf8.h). Like
 * snprintf, writes at most size - 1 bytes and a NUL (whole characters and
 * escapes only) and returns the length of the whole result.
 */
size_t frame_names__printable(const char *s, char *buf, size_t size);
/* As frame_names__printable, and ';' and ' ', which folded readers split on, as '_'. */
size_t frame_names__folded(const char *s, char *buf, size_t size);
/*
 * " (FILE:LINE)" after the name in buf, FILE's base name made printable
 * (folded: as frame_names__folded), whole or not at all: a cut there
 * would split a character.
 */
void frame_names__append_source(char *buf, size_t size, const char *file, uint32_t line,
				bool folded);

#endif
