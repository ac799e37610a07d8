// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/protobuf.h"

#define WIRE_VARINT 0
#define WIRE_BYTES 2
#define VARINT_MAX_BYTES 10

static int reserve(struct pb_buffer *b, size_t more)
{
	size_t cap;
	uint8_t *grown;

	if (b->err)
		return b->err;
	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	grown = realloc(b->data, cap);
	if (!grown) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->data = grown;
	b->cap = cap;
	return 0;
}

static void put_varint(struct pb_buffer *b, uint64_t value)
{
	if (reserve(b, VARINT_MAX_BYTES))
		return;
	while (value >= 0x80) {
		b->data[b->len++] = (uint8_t)(value | 0x80);
		value >>= 7;
	}
	b->data[b->len++] = (uint8_t)value;
}

static size_t varint_size(uint64_t value)
{
	size_t n = 1;

	while (value >= 0x80) {
		value >>= 7;
		n++;
	}
	return n;
}

void pb_buffer__reset(struct pb_buffer *b)
{
	b->len = 0;
	b->err = 0;
}

void pb_buffer__free(struct pb_buffer *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void pb_buffer__varint(struct pb_buffer *b, uint32_t field, uint64_t value)
{
	put_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	put_varint(b, value);
}

void pb_buffer__bytes(struct pb_buffer *b, uint32_t field, const void *data, size_t len)
{
	put_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
	put_varint(b, len);
	if (reserve(b, len))
		return;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
}

void pb_buffer__string(struct pb_buffer *b, uint32_t field, const char *s)
{
	pb_buffer__bytes(b, field, s, strlen(s));
}

void pb_buffer__message(struct pb_buffer *b, uint32_t field, const struct pb_buffer *message)
{
	if (message->err && !b->err) {
		b->err = message->err;
		return;
	}
	pb_buffer__bytes(b, field, message->data, message->len);
}

void pb_buffer__packed(struct pb_buffer *b, uint32_t field, const uint64_t *values, size_t nr)
{
	size_t len = 0, i;

	for (i = 0; i < nr; i++)
		len += varint_size(values[i]);
	put_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
	put_varint(b, len);
	for (i = 0; i < nr; i++)
		put_varint(b, values[i]);
}
