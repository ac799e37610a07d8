// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: a json recording given to offcpu report. */
#include <stdint.h>
#include <stdio.h>

#include "trace/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *file = fmemopen((void *)data, size, "r");
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;

	if (!file)
		return 0;
	if (!profile__new(true, &p)) {
		recording__read(file, "fuzz", &all, p);
		profile__free(p);
	}
	fclose(file);
	return 0;
}
