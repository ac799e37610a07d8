// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "lib/hashmap.h"
#include "lib/strpool.h"

struct strpool {
	struct hashmap *strings;
};

struct strpool *strpool__new(void)
{
	struct strpool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	pool->strings = hashmap__new(hash_string, equal_string);
	if (!pool->strings) {
		free(pool);
		return NULL;
	}
	return pool;
}

const char *strpool__intern(struct strpool *pool, const char *str)
{
	char *copy = hashmap__find(pool->strings, str);

	if (copy)
		return copy;
	copy = strdup(str);
	if (!copy)
		return NULL;
	if (hashmap__insert(pool->strings, copy, copy)) {
		free(copy);
		return NULL;
	}
	return copy;
}

void strpool__free(struct strpool *pool)
{
	if (!pool)
		return;
	hashmap__free_values(pool->strings, free);
	free(pool);
}
