// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>

#include "python/python_lines.h"

static uint32_t line_or_none(int64_t line)
{
	return line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
}

/*
 * 3.9's co_lnotab (Objects/lnotab_notes.txt): pairs of an unsigned
 * address increment and a signed line increment; the line of addr is the
 * one reached before the address passes it.
 */
static uint32_t lnotab_line(const uint8_t *t, size_t size, int32_t firstlineno, uint32_t addr)
{
	int64_t line = firstlineno;
	uint64_t at = 0;
	size_t i;

	for (i = 0; i + 1 < size; i += 2) {
		at += t[i];
		if (at > addr)
			break;
		line += (int8_t)t[i + 1];
	}
	return line_or_none(line);
}

/*
 * 3.10's co_linetable (3.10's lnotab_notes.txt): pairs of an unsigned
 * start delta and a signed line delta, -128 for "no line"; each pair
 * covers [start, start + delta).
 */
static uint32_t table_3_10_line(const uint8_t *t, size_t size, int32_t firstlineno, uint32_t addr)
{
	int64_t line = firstlineno;
	uint64_t start, end = 0;
	size_t i;

	for (i = 0; i + 1 < size; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (delta != -128)
			line += delta;
		if (start <= addr && addr < end)
			return delta == -128 ? 0 : line_or_none(line);
	}
	return 0;
}

/* Objects/locations.md: 6-bit chunks, low first, bit 6 says another follows. */
static bool varint(const uint8_t *t, size_t size, size_t *i, uint64_t *out)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (*i >= size || shift > 60)
			return false;
		b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool svarint(const uint8_t *t, size_t size, size_t *i, int64_t *out)
{
	uint64_t v;

	if (!varint(t, size, i, &v))
		return false;
	*out = v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
	return true;
}

/*
 * 3.11+'s location table (Objects/locations.md): entries of a first byte
 * with bit 7 set, a code in bits 3-6 and the length in code units minus 1
 * in bits 0-2, then the code's data. Codes 0-9: the same line (one byte of
 * columns); 10-12: the line moves by code - 10 (two bytes of columns); 13:
 * the line moves by a signed varint, no columns; 14: the long form, a
 * signed varint line delta then end line, column and end column varints;
 * 15: no location.
 */
static uint32_t locations_line(const uint8_t *t, size_t size, int32_t firstlineno, uint32_t addr)
{
	uint32_t unit = addr / 2;
	uint64_t start = 0, skip;
	int64_t line = firstlineno, delta;
	size_t i = 0;

	while (i < size) {
		uint8_t first = t[i++];
		unsigned int code = (first >> 3) & 15;
		uint64_t end = start + (first & 7) + 1;
		bool none = false;

		if (!(first & 128))
			return 0;
		delta = 0;
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			if (!svarint(t, size, &i, &delta) || !varint(t, size, &i, &skip) ||
			    !varint(t, size, &i, &skip) || !varint(t, size, &i, &skip))
				return 0;
			break;
		case 13:
			if (!svarint(t, size, &i, &delta))
				return 0;
			break;
		case 10:
		case 11:
		case 12:
			delta = code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		line += delta;
		if (start <= unit && unit < end)
			return none ? 0 : line_or_none(line);
		start = end;
	}
	return 0;
}

uint32_t python_lines__line(enum python_line_format format, const uint8_t *table, size_t size,
			    int32_t firstlineno, uint32_t addr)
{
	switch (format) {
	case PYTHON_LINES_LNOTAB:
		return lnotab_line(table, size, firstlineno, addr);
	case PYTHON_LINES_3_10:
		return table_3_10_line(table, size, firstlineno, addr);
	default:
		return locations_line(table, size, firstlineno, addr);
	}
}
