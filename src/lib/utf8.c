// SPDX-License-Identifier: GPL-2.0
#include "lib/utf8.h"

static bool continuation(unsigned char c)
{
	return c >= 0x80 && c <= 0xbf;
}

size_t utf8__next(const char *s, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		v = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		v = p[0] & 0x0f;
		/* No overlong forms, no surrogates (U+D800..U+DFFF). */
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		v = p[0] & 0x07;
		/* No overlong forms, nothing above U+10FFFF. */
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else {
		/* A continuation byte alone, C0, C1 (overlong) or F5..FF. */
		*cp = UTF8_INVALID;
		return 1;
	}
	/* The second byte's range depends on the first; the rest are plain continuations. */
	for (i = 1; i < len; i++) {
		if (i == 1 ? p[i] < lo || p[i] > hi : !continuation(p[i])) {
			*cp = UTF8_INVALID;
			return i;
		}
		v = v << 6 | (p[i] & 0x3f);
	}
	*cp = v;
	return len;
}

size_t utf8__put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}
