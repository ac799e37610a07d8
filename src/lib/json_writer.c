// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "lib/json_writer.h"
#include "lib/utf8.h"

void json_writer__init(struct json_writer *w, FILE *out)
{
	w->out = out;
	w->depth = 0;
	w->has_items[0] = false;
	w->after_key = false;
}

/* Separates this value from the previous one at the same level. */
static void begin_value(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->has_items[w->depth])
		fputc(',', w->out);
	w->has_items[w->depth] = true;
}

static void open_scope(struct json_writer *w, char c)
{
	begin_value(w);
	fputc(c, w->out);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_scope(struct json_writer *w, char c)
{
	fputc(c, w->out);
	if (w->depth > 0)
		w->depth--;
}

void json_writer__begin_object(struct json_writer *w)
{
	open_scope(w, '{');
}

void json_writer__end_object(struct json_writer *w)
{
	close_scope(w, '}');
}

void json_writer__begin_array(struct json_writer *w)
{
	open_scope(w, '[');
}

void json_writer__end_array(struct json_writer *w)
{
	close_scope(w, ']');
}

/*
 * Every string comes out valid UTF-8 and readable by a strict decoder:
 * bytes that are no character become U+FFFD (lib/utf8.h); controls (C0, DEL
 * and C1) and U+2028/U+2029, which JavaScript and Python's splitlines()
 * take for line ends, are \u escapes, so the line reads back to the same
 * characters and shows none of them raw on a terminal.
 */
static void write_escaped(FILE *out, const char *s)
{
	const char *plain = s; /* the characters not yet written, that need no escape */
	uint32_t cp;
	size_t len;

	fputc('"', out);
	for (; *s; s += len) {
		unsigned char c = (unsigned char)*s;

		/* Printable ASCII, nearly every byte of a recording, without decoding. */
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			len = 1;
			continue;
		}
		len = utf8__next(s, &cp);
		if (cp != '"' && cp != '\\' && cp != UTF8_INVALID && !utf8__is_control(cp) &&
		    cp != 0x2028 && cp != 0x2029)
			continue;
		fwrite(plain, 1, (size_t)(s - plain), out);
		plain = s + len;
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", out);
		else if (cp == '\t')
			fputs("\\t", out);
		else if (cp == '\r')
			fputs("\\r", out);
		else if (cp == UTF8_INVALID)
			fputs(UTF8_REPLACEMENT_TEXT, out);
		else
			fprintf(out, "\\u%04x", (unsigned int)cp);
	}
	fwrite(plain, 1, (size_t)(s - plain), out);
	fputc('"', out);
}

void json_writer__key(struct json_writer *w, const char *key)
{
	begin_value(w);
	write_escaped(w->out, key);
	fputc(':', w->out);
	w->after_key = true;
}

void json_writer__string(struct json_writer *w, const char *value)
{
	begin_value(w);
	write_escaped(w->out, value);
}

void json_writer__u64(struct json_writer *w, uint64_t value)
{
	begin_value(w);
	fprintf(w->out, "%" PRIu64, value);
}

void json_writer__us(struct json_writer *w, uint64_t ns)
{
	begin_value(w);
	fprintf(w->out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

void json_writer__hex(struct json_writer *w, uint64_t value)
{
	begin_value(w);
	fprintf(w->out, "\"0x%" PRIx64 "\"", value);
}

void json_writer__member_string(struct json_writer *w, const char *key, const char *value)
{
	json_writer__key(w, key);
	json_writer__string(w, value);
}

void json_writer__member_u64(struct json_writer *w, const char *key, uint64_t value)
{
	json_writer__key(w, key);
	json_writer__u64(w, value);
}
