// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "lib/hash_table.h"
#include "lib/inline_pool.h"

/* An inline frame and its mark; the table's key is f. */
struct inline_node {
	struct frame_inline f;
	bool marked;
};

struct inline_pool {
	struct hash_table *nodes; /* frame_inline -> its inline_node */
};

static uint64_t hash_inline(const void *key)
{
	const struct frame_inline *f = key;
	uint64_t parts[4] = { (uintptr_t)f->function, (uintptr_t)f->file, f->line,
			      (uintptr_t)f->caller };

	return hash_table__hash_bytes(parts, sizeof(parts), 0);
}

static bool equal_inline(const void *a, const void *b)
{
	const struct frame_inline *x = a, *y = b;

	return x->function == y->function && x->file == y->file && x->line == y->line &&
	       x->caller == y->caller;
}

struct inline_pool *inline_pool__new(void)
{
	struct inline_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	pool->nodes = hash_table__new(hash_inline, equal_inline);
	if (!pool->nodes) {
		free(pool);
		return NULL;
	}
	return pool;
}

const struct frame_inline *inline_pool__intern(struct inline_pool *pool, const char *function,
					       const char *file, uint32_t line,
					       const struct frame_inline *caller)
{
	struct frame_inline key = { function, file, line, caller };
	struct inline_node *node;

	node = hash_table__find(pool->nodes, &key);
	if (node)
		return &node->f;
	node = malloc(sizeof(*node));
	if (!node)
		return NULL;
	node->f = key;
	node->marked = false;
	if (hash_table__insert(pool->nodes, &node->f, node)) {
		free(node);
		return NULL;
	}
	return &node->f;
}

void inline_pool__free(struct inline_pool *pool)
{
	if (!pool)
		return;
	hash_table__free_values(pool->nodes, free);
	free(pool);
}

/*
 * Found by its fields and the address compared, as strpool__mark does. A
 * node already marked had its callers marked with it: the walk stops there.
 */
void inline_pool__mark(struct inline_pool *pool, const struct frame_inline *f,
		       struct strpool *strings)
{
	struct inline_node *node;

	for (; f; f = f->caller) {
		node = hash_table__find(pool->nodes, f);
		if (!node || &node->f != f || node->marked)
			return;
		node->marked = true;
		strpool__mark(strings, f->function);
		strpool__mark(strings, f->file);
	}
}

static bool sweep_node(void *ctx, const void *key, void *value)
{
	struct inline_node *node = value;

	(void)ctx;
	(void)key;
	if (node->marked) {
		node->marked = false;
		return false;
	}
	free(node);
	return true;
}

unsigned long inline_pool__sweep(struct inline_pool *pool)
{
	return hash_table__remove_if(pool->nodes, sweep_node, NULL);
}
