/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inline frames, interned: equal chains share one pointer, so frames that
 * hold them compare by pointer, and their memory follows the distinct code
 * locations seen, not the waits.
 */
#ifndef OFFCPU_INLINE_POOL_H
#define OFFCPU_INLINE_POOL_H

#include <stdint.h>

#include "lib/strpool.h"

/*
 * A function inlined at a frame's address, from DWARF: the innermost first,
 * each called from the next, the last called from the frame's own function.
 */
struct frame_inline {
	const char *function; /* interned, demangled */
	const char *file;     /* interned: where its code at this address is */
	uint32_t line;
	const struct frame_inline *caller;
};

struct inline_pool;

struct inline_pool *inline_pool__new(void);
/* Strings must be interned; NULL only when out of memory. */
const struct frame_inline *inline_pool__intern(struct inline_pool *pool, const char *function,
					       const char *file, uint32_t line,
					       const struct frame_inline *caller);
void inline_pool__free(struct inline_pool *pool);
/*
 * offcpu serve's sweep (strpool.h): marks f and its
 * callers as held, and their strings in strings; NULL, and a chain not
 * the pool's, are left alone.
 */
void inline_pool__mark(struct inline_pool *pool, const struct frame_inline *f,
		       struct strpool *strings);
/* Frees every inline frame not marked since the last sweep, clears the marks; how many. */
unsigned long inline_pool__sweep(struct inline_pool *pool);

#endif
