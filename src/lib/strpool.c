// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "lib/strpool.h"

/* A string with its mark: the table's key is str, its value the whole. */
struct pooled {
	bool marked;
	char str[];
};

struct strpool {
	struct hash_table *strings;
	unsigned long bytes; /* of the strings themselves */
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
	struct pooled *p = hash_table__find(pool->strings, str);
	size_t len;

	if (p)
		return p->str;
	len = strlen(str);
	p = malloc(sizeof(*p) + len + 1);
	if (!p)
		return NULL;
	p->marked = false;
	memcpy(p->str, str, len + 1);
	if (hash_table__insert(pool->strings, p->str, p)) {
		free(p);
		return NULL;
	}
	pool->bytes += len + 1;
	return p->str;
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

/*
 * Found by its text, then its address compared: a string that only reads
 * the same (a static "other", a copy) is not the pool's, and nothing is
 * ever computed from a pointer the pool did not hand out.
 */
void strpool__mark(struct strpool *pool, const char *str)
{
	struct pooled *p;

	if (!str)
		return;
	p = hash_table__find(pool->strings, str);
	if (p && p->str == str)
		p->marked = true;
}

struct sweep {
	unsigned long freed;
	unsigned long freed_bytes;
};

static bool sweep_one(void *ctx, const void *key, void *value)
{
	struct pooled *p = value;
	struct sweep *sw = ctx;

	(void)key;
	if (p->marked) {
		p->marked = false;
		return false;
	}
	sw->freed++;
	sw->freed_bytes += strlen(p->str) + 1;
	free(p);
	return true;
}

void strpool__sweep(struct strpool *pool, unsigned long *freed, unsigned long *freed_bytes)
{
	struct sweep sw = { 0 };

	hash_table__remove_if(pool->strings, sweep_one, &sw);
	pool->bytes -= sw.freed_bytes;
	*freed = sw.freed;
	*freed_bytes = sw.freed_bytes;
}
