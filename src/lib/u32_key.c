// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

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

void *u32_key__find_or_add(struct hash_table *t, uint32_t key, size_t size, size_t key_offset,
			   bool *added)
{
	char *value = hash_table__find(t, &key);

	if (added)
		*added = !value;
	if (value)
		return value;
	value = calloc(1, size);
	if (!value)
		return NULL;
	memcpy(value + key_offset, &key, sizeof(key));
	if (hash_table__insert(t, value + key_offset, value)) {
		free(value);
		return NULL;
	}
	return value;
}
