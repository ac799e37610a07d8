/* SPDX-License-Identifier: GPL-2.0 */
/* Parsers of command-line values; pure functions over strings. */
#ifndef OFFCPU_PARSE_H
#define OFFCPU_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "500us", "5ms", "2s", "1m", "0": nanoseconds. -EINVAL or -ERANGE. */
int parse__duration_ns(const char *text, uint64_t *out_ns);

/* A decimal integer in [min, max]. -EINVAL or -ERANGE. */
int parse__uint(const char *text, uint64_t min, uint64_t max, uint64_t *out);

struct id_list {
	uint32_t *ids;
	size_t nr;
};

/* Appends "1,2,3" (positive IDs) to list; on error the list is unchanged. */
int id_list__parse(const char *text, struct id_list *list);
void id_list__free(struct id_list *list);

#endif
