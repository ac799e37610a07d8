/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A chained hash table of (key, value) pointers. Keys and values belong to
 * the caller; the table only links them.
 */
#ifndef OFFCPU_HASHMAP_H
#define OFFCPU_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hashmap_hash_fn)(const void *key);
typedef bool (*hashmap_equal_fn)(const void *a, const void *b);

struct hashmap;

struct hashmap_iter {
	size_t bucket;
	void *entry;
};

struct hashmap *hashmap__new(hashmap_hash_fn hash, hashmap_equal_fn equal);
void hashmap__free(struct hashmap *map);
/* Frees every value with free_value, then the map; NULL is fine. */
void hashmap__free_values(struct hashmap *map, void (*free_value)(void *value));
void *hashmap__find(const struct hashmap *map, const void *key);
int hashmap__insert(struct hashmap *map, const void *key, void *value);
/* Returns the value it unlinked, or NULL. */
void *hashmap__remove(struct hashmap *map, const void *key);
size_t hashmap__size(const struct hashmap *map);
/* Start with a zeroed iter; false at the end. */
bool hashmap__next(const struct hashmap *map, struct hashmap_iter *iter, const void **key,
		   void **value);

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t hash_string(const void *key);
bool equal_string(const void *a, const void *b);

#endif
