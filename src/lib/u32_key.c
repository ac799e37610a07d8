// SPDX-License-Identifier: GPL-2.0
#include "lib/hash_table.h"
#include "lib/u32_key.h"

uint64_t u32_key__hash(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(uint32_t), 0);
}

bool u32_key__equal(const void *a, const void *b)
{
	return *(const uint32_t *)a == *(const uint32_t *)b;
}
