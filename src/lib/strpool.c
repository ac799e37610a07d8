// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "lib/strpool.h"

struct strpool {
	struct hash_table *strings;
	unsigned long bytes; /* of the strings themselves (issue #20 item 7) */
};

struct strpool *strpool__new(void)
{
	struct strpool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	pool->strings = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	if (!pool->strings) {
		free(pool);
		return NULL;
	}
	return pool;
}

const char *strpool__intern(struct strpool *pool, const char *str)
{
	char *copy = hash_table__find(pool->strings, str);

	if (copy)
		return copy;
	copy = strdup(str);
	if (!copy)
		return NULL;
	if (hash_table__insert(pool->strings, copy, copy)) {
		free(copy);
		return NULL;
	}
	pool->bytes += strlen(copy) + 1;
	return copy;
}

void strpool__free(struct strpool *pool)
{
	if (!pool)
		return;
	hash_table__free_values(pool->strings, free);
	free(pool);
}

void strpool__stats(const struct strpool *pool, unsigned long *strings, unsigned long *bytes)
{
	*strings = hash_table__size(pool->strings);
	*bytes = pool->bytes;
}
