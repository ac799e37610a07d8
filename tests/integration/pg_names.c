// SPDX-License-Identifier: GPL-2.0
/*
 * What a PostgreSQL binary itself names each wait event and backend type,
 * for tests/integration/test_postgres_events.py: LD_PRELOAD'ed into
 * `postgres --version`, it calls the binary's own pgstat_get_wait_event()
 * and GetBackendTypeDesc() (postgres exports its functions for extensions)
 * before main, for each value in $PG_NAMES_IN (one a line, decimal), and
 * writes "VALUE\tNAME" lines, then "bN\tNAME" for backend types
 * 0..$PG_NAMES_TYPES-1, to $PG_NAMES_OUT, and exits. Neither function
 * needs the server's shared memory for the built-in names. gdb's calls
 * into the process did the same until gdb 13 on this kernel could no
 * longer write the registers' extended state ("Couldn't write extended
 * state status: Bad address").
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern const char *pgstat_get_wait_event(unsigned int wait_event_info);
extern const char *GetBackendTypeDesc(int backend_type);

__attribute__((constructor)) static void pg_names(void)
{
	const char *in = getenv("PG_NAMES_IN"), *out = getenv("PG_NAMES_OUT");
	const char *types = getenv("PG_NAMES_TYPES"), *name;
	unsigned int value;
	FILE *from, *to;
	int i, n;

	if (!in || !out || !types)
		return;
	from = fopen(in, "r");
	to = fopen(out, "w");
	if (!from || !to)
		_exit(1);
	while (fscanf(from, "%u", &value) == 1) {
		name = pgstat_get_wait_event(value);
		fprintf(to, "%u\t%s\n", value, name ? name : "");
	}
	n = atoi(types);
	for (i = 0; i < n; i++) {
		name = GetBackendTypeDesc(i);
		fprintf(to, "b%d\t%s\n", i, name ? name : "");
	}
	_exit(fclose(to) ? 1 : 0);
}
