/* SPDX-License-Identifier: GPL-2.0 */
/* A uint32_t, such as a pid or a tid, as the key of a hash_table. */
#ifndef OFFCPU_U32_KEY_H
#define OFFCPU_U32_KEY_H

#include <stdbool.h>
#include <stdint.h>

/* key and a, b point to a uint32_t. */
uint64_t u32_key__hash(const void *key);
bool u32_key__equal(const void *a, const void *b);

#endif
