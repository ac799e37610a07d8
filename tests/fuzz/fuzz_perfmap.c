// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: a JIT's /tmp/perf-PID.map, which the traced process writes. */
#include <stdint.h>
#include <stdio.h>

#include "symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *file = fmemopen((void *)data, size, "r");
	struct perfmap map;

	if (!file)
		return 0;
	if (!perfmap__parse(file, &map)) {
		perfmap__find(&map, 0x1000);
		perfmap__find(&map, UINT64_MAX);
		perfmap__free(&map);
	}
	fclose(file);
	return 0;
}
