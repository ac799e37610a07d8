// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/utf8.h"
#include "output/frame_names.h"

static size_t printable(const char *s, char *buf, size_t size, bool folded)
{
	size_t n = 0, written = 0, len, piece_len;
	bool fits = size > 0;
	char piece[8];
	uint32_t cp;

	for (; *s; s += len) {
		const char *from = piece;

		len = utf8__next(s, &cp);
		if (cp == UTF8_INVALID) {
			from = UTF8_REPLACEMENT_TEXT;
			piece_len = sizeof(UTF8_REPLACEMENT_TEXT) - 1;
		} else if (folded && (cp == ';' || cp == ' ')) {
			from = "_";
			piece_len = 1;
		} else if (utf8__is_control(cp)) {
			piece_len =
			    (size_t)snprintf(piece, sizeof(piece), "\\x%02x", (unsigned int)cp);
		} else if (cp == 0x2028 || cp == 0x2029) {
			/* Line and paragraph separators: line ends to Python's splitlines(). */
			piece_len =
			    (size_t)snprintf(piece, sizeof(piece), "\\u%04x", (unsigned int)cp);
		} else {
			from = s;
			piece_len = len;
		}
		/* A piece that does not fit ends the text: a cut never splits one. */
		if (fits && written + piece_len < size) {
			memcpy(buf + written, from, piece_len);
			written += piece_len;
		} else {
			fits = false;
		}
		n += piece_len;
	}
	if (size)
		buf[written] = '\0';
	return n;
}

size_t frame_names__printable(const char *s, char *buf, size_t size)
{
	return printable(s, buf, size, false);
}

size_t frame_names__folded(const char *s, char *buf, size_t size)
{
	return printable(s, buf, size, true);
}

void frame_names__append_source(char *buf, size_t size, const char *file, uint32_t line,
				bool folded)
{
	const char *slash = strrchr(file, '/');
	char base[256], suffix[sizeof(base) + 16];
	size_t len = strlen(buf);
	int n;

	printable(slash ? slash + 1 : file, base, sizeof(base), folded);
	n = snprintf(suffix, sizeof(suffix), " (%s:%u)", base, line);
	if (n > 0 && (size_t)n < sizeof(suffix) && len + (size_t)n < size)
		memcpy(buf + len, suffix, (size_t)n + 1);
}

/*
 * Interpreted code as "fetch_rows (db.py:88)": the qualified
 * name and the file's base name made safe as every name is; the one space
 * is ours, and folded readers split a line at its last space only.
 */
static void python_name(const struct frame *f, char *buf, size_t size)
{
	if (!f->sym) {
		snprintf(buf, size, "[%s:0x%" PRIx64 "]", f->kind, f->addr);
		return;
	}
	frame_names__folded(f->sym, buf, size);
	if (f->file)
		frame_names__append_source(buf, size, f->file, f->line, true);
}

void frame_names__frame(const struct frame *f, char *buf, size_t size)
{
	const char *module, *slash;
	size_t n;

	if (f->kind) {
		python_name(f, buf, size);
	} else if (f->sym) {
		frame_names__folded(f->sym, buf, size);
	} else if (f->kernel || !f->module) {
		snprintf(buf, size, "0x%" PRIx64, f->addr);
	} else {
		slash = strrchr(f->module, '/');
		module = slash ? slash + 1 : f->module;
		n = frame_names__folded(module, buf, size);
		if (n < size)
			snprintf(buf + n, size - n, "+0x%" PRIx64, f->module_off);
	}
}

void frame_names__inline(const struct frame_inline *in, char *buf, size_t size)
{
	frame_names__folded(in->function, buf, size);
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
