/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 as every output decodes the names it is given: thread names,
 * process titles, symbols and paths are bytes that any user chooses, and
 * each format must stay valid whatever they hold (JSON and pprof strings
 * UTF-8, SVG XML characters, text free of terminal controls).
 *
 * Bytes that are no character become U+FFFD, one for each "maximal
 * subpart" (Unicode 15, section 3.9, U+FFFD Substitution of Maximal
 * Subparts): the same count that Python's decode(errors="replace"), Go
 * and browsers give, so "\xed\xa0\x80" (a surrogate) is three and
 * "\xe2\x82" (a cut sequence) one.
 */
#ifndef OFFCPU_UTF8_H
#define OFFCPU_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What utf8__next gives for bytes that are no character, and U+FFFD, which shows them. */
#define UTF8_INVALID 0xffffffffu
#define UTF8_REPLACEMENT_TEXT "\xef\xbf\xbd"

/*
 * Decodes one character at s, NUL-terminated and not at its NUL: returns
 * the bytes it took (1 to 4; never the NUL) and sets *cp to the code point,
 * or to UTF8_INVALID for one maximal subpart of bytes that are not UTF-8.
 */
size_t utf8__next(const char *s, uint32_t *cp);
/* Encodes cp (at most U+10FFFF) into out, which has room for 4: its length. */
size_t utf8__put(uint32_t cp, char *out);
/* C0 and C1 controls and DEL: what a terminal may take for a command. */
static inline bool utf8__is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

#endif
