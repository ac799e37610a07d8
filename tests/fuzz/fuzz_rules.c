// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: --rules files, then the rules run over a stack. */
#include <stdint.h>
#include <stdio.h>

#include "classify/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *file = fmemopen((void *)data, size, "r");
	struct frame frames[2] = { { .sym = "futex_wait_queue", .kernel = true },
				   { .sym = "pthread_mutex_lock" } };
	struct rule_set set = { 0 };
	unsigned int bad_line;
	const char *why;
	size_t i;

	if (!file)
		return 0;
	if (!rules__parse(file, &set, &bad_line, &why)) {
		for (i = 0; i < set.nr; i++)
			rules__match(&set.rules[i], frames, 1, frames + 1, 1);
	}
	rules__free(&set);
	fclose(file);
	return 0;
}
