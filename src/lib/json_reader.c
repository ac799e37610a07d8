// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_reader.h"
#include "lib/utf8.h"

/* Deeper nesting than offcpu ever writes is an error, not a stack overflow. */
#define JSON_MAX_NESTING 32

struct parser {
	const char *text;
	size_t len;
	size_t at;
	const char *error;
};

static int fail(struct parser *p, const char *why)
{
	if (!p->error)
		p->error = why;
	return -EINVAL;
}

static void skip_space(struct parser *p)
{
	while (p->at < p->len && (p->text[p->at] == ' ' || p->text[p->at] == '\t' ||
				  p->text[p->at] == '\n' || p->text[p->at] == '\r'))
		p->at++;
}

static bool take(struct parser *p, char c)
{
	skip_space(p);
	if (p->at < p->len && p->text[p->at] == c) {
		p->at++;
		return true;
	}
	return false;
}

static bool take_word(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->at >= n && !memcmp(p->text + p->at, word, n)) {
		p->at += n;
		return true;
	}
	return false;
}

static int hex4(struct parser *p, unsigned int *out)
{
	unsigned int v = 0, i;

	if (p->len - p->at < 4)
		return fail(p, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		char c = p->text[p->at++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else
			return fail(p, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static int escape(struct parser *p, char *out, size_t *n)
{
	unsigned int cp, low;
	char c;

	if (p->at >= p->len)
		return fail(p, "truncated escape");
	c = p->text[p->at++];
	switch (c) {
	case '"':
	case '\\':
	case '/':
		out[(*n)++] = c;
		return 0;
	case 'b':
		out[(*n)++] = '\b';
		return 0;
	case 'f':
		out[(*n)++] = '\f';
		return 0;
	case 'n':
		out[(*n)++] = '\n';
		return 0;
	case 'r':
		out[(*n)++] = '\r';
		return 0;
	case 't':
		out[(*n)++] = '\t';
		return 0;
	case 'u':
		if (hex4(p, &cp))
			return -EINVAL;
		if (cp >= 0xd800 && cp < 0xdc00) {
			if (!take_word(p, "\\u") || hex4(p, &low) || low < 0xdc00 || low >= 0xe000)
				return fail(p, "unpaired surrogate in \\u escape");
			cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
		} else if (cp >= 0xdc00 && cp < 0xe000) {
			return fail(p, "unpaired surrogate in \\u escape");
		}
		*n += utf8__put(cp, out + *n);
		return 0;
	default:
		return fail(p, "bad escape in string");
	}
}

static int parse_string(struct parser *p, char **out)
{
	size_t start = p->at, n = 0;
	char *s;

	/* The decoded string is never longer than its source text. */
	while (p->at < p->len && p->text[p->at] != '"') {
		if (p->text[p->at] == '\\')
			p->at++;
		p->at++;
	}
	if (p->at >= p->len)
		return fail(p, "unterminated string");
	s = malloc(p->at - start + 1);
	if (!s)
		return -ENOMEM;
	p->at = start;
	while (p->text[p->at] != '"') {
		unsigned char c = (unsigned char)p->text[p->at++];

		if (c < 0x20) {
			free(s);
			return fail(p, "control character in string");
		}
		if (c != '\\') {
			s[n++] = (char)c;
		} else if (escape(p, s, &n)) {
			free(s);
			return -EINVAL;
		}
	}
	p->at++;
	s[n] = '\0';
	*out = s;
	return 0;
}

static int parse_number(struct parser *p, struct json_value *v)
{
	size_t start = p->at;
	bool integer = true;
	char *end, buf[64];

	if (p->at < p->len && p->text[p->at] == '-') {
		integer = false;
		p->at++;
	}
	if (p->at >= p->len || p->text[p->at] < '0' || p->text[p->at] > '9')
		return fail(p, "bad number");
	while (p->at < p->len && strchr("0123456789.eE+-", p->text[p->at])) {
		if (!strchr("0123456789", p->text[p->at]))
			integer = false;
		p->at++;
	}
	if (p->at - start >= sizeof(buf))
		return fail(p, "number too long");
	memcpy(buf, p->text + start, p->at - start);
	buf[p->at - start] = '\0';
	v->type = JSON_NUMBER;
	errno = 0;
	v->number = strtod(buf, &end);
	if (*end)
		return fail(p, "bad number");
	if (integer) {
		errno = 0;
		v->u64 = strtoull(buf, &end, 10);
		v->is_u64 = errno == 0 && !*end;
	}
	return 0;
}

static int parse_value(struct parser *p, struct json_value *v, int depth);

static int grow(struct json_value *v, size_t *cap, bool with_keys)
{
	size_t new_cap = *cap ? *cap * 2 : 8;
	struct json_value *items;
	char **keys;

	items = realloc(v->items, new_cap * sizeof(*items));
	if (!items)
		return -ENOMEM;
	v->items = items;
	if (with_keys) {
		keys = realloc(v->keys, new_cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		v->keys = keys;
	}
	*cap = new_cap;
	return 0;
}

static int parse_container(struct parser *p, struct json_value *v, int depth, bool object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;
	int err;

	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	if (depth >= JSON_MAX_NESTING)
		return fail(p, "nested too deeply");
	if (take(p, close))
		return 0;
	do {
		if (v->nr == cap && grow(v, &cap, object))
			return -ENOMEM;
		memset(&v->items[v->nr], 0, sizeof(v->items[v->nr]));
		if (object) {
			if (!take(p, '"'))
				return fail(p, "expected a member name");
			err = parse_string(p, &v->keys[v->nr]);
			if (err)
				return err;
			if (!take(p, ':')) {
				free(v->keys[v->nr]);
				return fail(p, "expected ':'");
			}
		}
		v->nr++;
		err = parse_value(p, &v->items[v->nr - 1], depth + 1);
		if (err)
			return err;
	} while (take(p, ','));
	if (!take(p, close))
		return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
	return 0;
}

static int parse_value(struct parser *p, struct json_value *v, int depth)
{
	skip_space(p);
	if (p->at >= p->len)
		return fail(p, "unexpected end");
	switch (p->text[p->at]) {
	case '{':
		p->at++;
		return parse_container(p, v, depth, true);
	case '[':
		p->at++;
		return parse_container(p, v, depth, false);
	case '"':
		p->at++;
		v->type = JSON_STRING;
		return parse_string(p, &v->string);
	case 't':
	case 'f':
	case 'n':
		if (take_word(p, "true")) {
			v->type = JSON_BOOL;
			v->boolean = true;
			return 0;
		}
		if (take_word(p, "false")) {
			v->type = JSON_BOOL;
			return 0;
		}
		if (take_word(p, "null")) {
			v->type = JSON_NULL;
			return 0;
		}
		return fail(p, "unknown word");
	default:
		return parse_number(p, v);
	}
}

int json_reader__parse(const char *text, size_t len, struct json_value *out, const char **error,
		       size_t *error_at)
{
	struct parser p = { .text = text, .len = len };
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_value(&p, out, 0);
	if (!err) {
		skip_space(&p);
		if (p.at != p.len)
			err = fail(&p, "text after the value");
	}
	if (err) {
		json_value__free(out);
		*error = p.error ? p.error : "out of memory";
		*error_at = p.at;
	}
	return err;
}

void json_value__free(struct json_value *v)
{
	size_t i;

	for (i = 0; i < v->nr; i++) {
		json_value__free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

const struct json_value *json_value__member(const struct json_value *v, const char *key)
{
	size_t i;

	if (v->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < v->nr; i++) {
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	}
	return NULL;
}
