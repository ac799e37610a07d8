// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: /proc/PID/maps text, line by line and as a whole file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps maps;
	struct proc_map map;
	char *text = malloc(size + 1);
	FILE *file;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!procmaps__parse_line(text, &map))
		free(map.path);
	file = fmemopen(text, size, "r");
	if (file && !procmaps__read(file, &maps)) {
		procmaps__find(&maps, 0x400000);
		procmaps__free(&maps);
	}
	if (file)
		fclose(file);
	free(text);
	return 0;
}
