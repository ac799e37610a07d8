// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"

struct hash_table_entry {
	struct hash_table_entry *next;
	uint64_t hash;
	const void *key;
	void *value;
};

struct hash_table {
	hash_table_hash_fn hash;
	hash_table_equal_fn equal;
	struct hash_table_entry **buckets;
	size_t nr_buckets;
	size_t size;
};

#define INITIAL_BUCKETS 64

struct hash_table *hash_table__new(hash_table_hash_fn hash, hash_table_equal_fn equal)
{
	struct hash_table *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->buckets = calloc(INITIAL_BUCKETS, sizeof(*map->buckets));
	if (!map->buckets) {
		free(map);
		return NULL;
	}
	map->nr_buckets = INITIAL_BUCKETS;
	map->hash = hash;
	map->equal = equal;
	return map;
}

void hash_table__free(struct hash_table *map)
{
	size_t i;

	if (!map)
		return;
	for (i = 0; i < map->nr_buckets; i++) {
		struct hash_table_entry *e = map->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(map->buckets);
	free(map);
}

void hash_table__free_values(struct hash_table *map, void (*free_value)(void *value))
{
	struct hash_table_iter it = { 0 };
	void *value;

	if (!map)
		return;
	while (hash_table__next(map, &it, NULL, &value))
		free_value(value);
	hash_table__free(map);
}

static struct hash_table_entry **find_slot(const struct hash_table *map, const void *key,
					   uint64_t hash)
{
	struct hash_table_entry **slot = &map->buckets[hash & (map->nr_buckets - 1)];

	for (; *slot; slot = &(*slot)->next) {
		if ((*slot)->hash == hash && map->equal((*slot)->key, key))
			return slot;
	}
	return slot;
}

void *hash_table__find(const struct hash_table *map, const void *key)
{
	struct hash_table_entry **slot = find_slot(map, key, map->hash(key));

	return *slot ? (*slot)->value : NULL;
}

static int grow(struct hash_table *map)
{
	size_t nr = map->nr_buckets * 2, i;
	struct hash_table_entry **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return -ENOMEM;
	for (i = 0; i < map->nr_buckets; i++) {
		struct hash_table_entry *e = map->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = buckets[e->hash & (nr - 1)];
			buckets[e->hash & (nr - 1)] = e;
		}
	}
	free(map->buckets);
	map->buckets = buckets;
	map->nr_buckets = nr;
	return 0;
}

int hash_table__insert(struct hash_table *map, const void *key, void *value)
{
	uint64_t hash = map->hash(key);
	struct hash_table_entry **slot = find_slot(map, key, hash);
	struct hash_table_entry *e;

	if (*slot) {
		(*slot)->key = key;
		(*slot)->value = value;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->hash = hash;
	e->key = key;
	e->value = value;
	e->next = NULL;
	*slot = e;
	map->size++;
	/* A failed grow only makes chains longer. */
	if (map->size > map->nr_buckets)
		grow(map);
	return 0;
}

void *hash_table__remove(struct hash_table *map, const void *key)
{
	struct hash_table_entry **slot = find_slot(map, key, map->hash(key));
	struct hash_table_entry *e = *slot;
	void *value;

	if (!e)
		return NULL;
	*slot = e->next;
	value = e->value;
	free(e);
	map->size--;
	return value;
}

size_t hash_table__remove_if(struct hash_table *map,
			     bool (*drop)(void *ctx, const void *key, void *value), void *ctx)
{
	size_t removed = 0, i;

	for (i = 0; i < map->nr_buckets; i++) {
		struct hash_table_entry **slot = &map->buckets[i], *e;

		while ((e = *slot)) {
			if (!drop(ctx, e->key, e->value)) {
				slot = &e->next;
				continue;
			}
			*slot = e->next;
			free(e);
			removed++;
		}
	}
	map->size -= removed;
	return removed;
}

size_t hash_table__size(const struct hash_table *map)
{
	return map->size;
}

bool hash_table__next(const struct hash_table *map, struct hash_table_iter *iter, const void **key,
		      void **value)
{
	struct hash_table_entry *e = iter->entry;

	if (e)
		e = e->next;
	while (!e && iter->bucket < map->nr_buckets)
		e = map->buckets[iter->bucket++];
	iter->entry = e;
	if (!e)
		return false;
	if (key)
		*key = e->key;
	if (value)
		*value = e->value;
	return true;
}

/*
 * Eight bytes at a time with a multiply-xorshift mix: the keys include raw
 * stacks of up to 2 KiB, where a byte-wise hash showed in profiles.
 */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

uint64_t hash_table__hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL), word;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&word, p, 8);
		h = mix(h ^ word) * 0x9e3779b97f4a7c15ULL;
	}
	word = 0;
	memcpy(&word, p, len);
	return mix(h ^ word);
}

uint64_t hash_table__hash_string(const void *key)
{
	return hash_table__hash_bytes(key, strlen(key), 0);
}

bool hash_table__equal_string(const void *a, const void *b)
{
	return strcmp(a, b) == 0;
}
