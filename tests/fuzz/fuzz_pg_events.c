// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: PostgreSQL's wait event tables (rules/postgres-wait-events.tsv), then lookups. */
#include <stdint.h>
#include <stdio.h>

#include "classify/pg_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *file = fmemopen((void *)data, size, "r");
	struct pg_events *tables = NULL;
	unsigned int bad_line, version, i;
	const char *why;
	char buf[128];

	if (!file)
		return 0;
	if (!pg_events__parse(file, &tables, &bad_line, &why)) {
		for (version = 13; version <= 18; version++) {
			pg_events__supported(tables, version);
			for (i = 0; i < 0x0d; i++) {
				pg_events__class_size(tables, version, i);
				pg_events__wait_event(tables, version, i << 24 | 1, buf,
						      sizeof(buf));
				pg_events__wait_event(tables, version, i << 24 | 0xffff, buf,
						      sizeof(buf));
			}
			pg_events__backend_type(tables, version, 3, buf, sizeof(buf));
		}
	}
	pg_events__free(tables);
	fclose(file);
	return 0;
}
