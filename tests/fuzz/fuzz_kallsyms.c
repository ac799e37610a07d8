// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: /proc/kallsyms lines and files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), type, name[128], module[64];
	struct ksyms *ks;
	uint64_t addr;
	FILE *file;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ksyms__parse_line(text, &addr, &type, name, sizeof(name), module, sizeof(module));
	file = fmemopen(text, size, "r");
	if (file && !ksyms__load(file, &ks)) {
		ksyms__find(ks, 0xffffffff81000000ULL);
		ksyms__free(ks);
	}
	if (file)
		fclose(file);
	free(text);
	return 0;
}
