// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: a JIT's /tmp/perf-PID.map, which the traced process writes,
 * read as it grows: its first half, then on from where that read stopped,
 * within a budget small enough for some inputs to exhaust it.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "symbols/perfmap.h"

static void parse(const uint8_t *data, size_t size, struct perfmap *map, struct read_budget *budget)
{
	FILE *file;

	if (map->read_bytes >= size)
		return;
	file = fmemopen((void *)data, size, "r");
	if (!file)
		return;
	if (!fseeko(file, (off_t)map->read_bytes, SEEK_SET))
		perfmap__parse(file, map, budget);
	fclose(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct read_budget budget = { 16384, false };
	struct perfmap map = { 0 };

	parse(data, size / 2, &map, &budget);
	parse(data, size, &map, &budget);
	perfmap__find(&map, 0x1000);
	perfmap__find(&map, UINT64_MAX);
	perfmap__free(&map);
	return 0;
}
