/* SPDX-License-Identifier: GPL-2.0 */
/* A uint32_t, such as a pid or a tid, as the key of a hash_table. */
#ifndef OFFCPU_U32_KEY_H
#define OFFCPU_U32_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hash_table;

/* key and a, b point to a uint32_t. */
uint64_t u32_key__hash(const void *key);
bool u32_key__equal(const void *a, const void *b);
/*
 * The value t holds under key, or else a new one of size zeroed bytes with
 * key at key_offset (offsetof its uint32_t key member), inserted under it:
 * *added (if not NULL) says which. NULL when out of memory. The per-pid and
 * per-tid records begin this way; what else a new one needs, its caller
 * adds.
 */
void *u32_key__find_or_add(struct hash_table *t, uint32_t key, size_t size, size_t key_offset,
			   bool *added);

#endif
