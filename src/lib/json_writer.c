// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "lib/json_writer.h"

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

static void write_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
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
