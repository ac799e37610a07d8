/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A chained hash table of (key, value) pointers. Keys and values belong to
 * the caller; the table only links them.
 */
#ifndef OFFCPU_HASH_TABLE_H
#define OFFCPU_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hash_table_hash_fn)(const void *key);
typedef bool (*hash_table_equal_fn)(const void *a, const void *b);

struct hash_table;

struct hash_table_iter {
	size_t bucket;
	void *entry;
};

struct hash_table *hash_table__new(hash_table_hash_fn hash, hash_table_equal_fn equal);
void hash_table__free(struct hash_table *map);
/* Frees every value with free_value, then the map; NULL is fine. */
void hash_table__free_values(struct hash_table *map, void (*free_value)(void *value));
void *hash_table__find(const struct hash_table *map, const void *key);
int hash_table__insert(struct hash_table *map, const void *key, void *value);
/* Returns the value it unlinked, or NULL. */
void *hash_table__remove(struct hash_table *map, const void *key);
size_t hash_table__size(const struct hash_table *map);
/*
 * Unlinks every entry for which drop(ctx, key, value) is true, which may
 * free the value (the key too, when it is part of it); returns how many.
 */
size_t hash_table__remove_if(struct hash_table *map,
			     bool (*drop)(void *ctx, const void *key, void *value), void *ctx);
/* Start with a zeroed iter; false at the end. */
bool hash_table__next(const struct hash_table *map, struct hash_table_iter *iter, const void **key,
		      void **value);

uint64_t hash_table__hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t hash_table__hash_string(const void *key);
bool hash_table__equal_string(const void *a, const void *b);

#endif
