/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The floor of a value in an array sorted by a uint64_t field: the last
 * element whose field is <= the value. What finds the symbol an address
 * falls in, in a table sorted by start (kallsyms, ELF symbols, unwind
 * tables, perf maps), whose caller then checks the end it knows of.
 */
#ifndef OFFCPU_BSEARCH_H
#define OFFCPU_BSEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* base holds nr elements of size bytes, sorted by the uint64_t at key_offset in each. */
static inline const void *bsearch__floor(const void *base, size_t nr, size_t size,
					 size_t key_offset, uint64_t value)
{
	const char *at = base;
	size_t lo = 0, hi = nr;

	/* lo: how many elements are known to be <= value; hi: the first known > value. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, at + mid * size + key_offset, sizeof(key));
		if (key <= value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? at + (lo - 1) * size : NULL;
}

/* The element of array[0..nr) whose field is the floor of value, typed as array's; NULL if none. */
#define BSEARCH_FLOOR(array, nr, field, value)                                                     \
	({                                                                                         \
		_Static_assert(sizeof((array)[0].field) == sizeof(uint64_t),                       \
			       #field " is not a uint64_t");                                       \
		(__typeof__(&(array)[0]))bsearch__floor((array), (nr), sizeof((array)[0]),         \
							offsetof(__typeof__((array)[0]), field),   \
							(value));                                  \
	})

#endif
