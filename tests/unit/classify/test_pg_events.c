// SPDX-License-Identifier: GPL-2.0
/*
 * PostgreSQL's wait events and backend types by major version, the data
 * file they are read from (rules/postgres-wait-events.tsv, built in too)
 * and its bad lines, and the rule pack lines that read them (process,
 * read, label).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "classify/pg_events.h"
#include "classify/reads.h"
#include "classify/rules.h"
#include "lib/array.h"
#include "offcpu.h"
#include "profile/profile.h"

/* What PostgreSQL 15.20's own pgstat_get_wait_event() returns, value by value (gdb). */
#define FIXTURE "tests/unit/fixtures/pg15_wait_events.tsv"
/* Every version's tables as they were when each version had its own arrays. */
#define TABLES_FIXTURE "tests/unit/fixtures/pg_events_tables.tsv"

static void pg15_every_value_as_the_binary_names_it(void **state)
{
	FILE *f = fopen(FIXTURE, "re");
	char line[256], got[128];
	unsigned int rows = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *value = strtok(line, "\t\n"), *pg = strtok(NULL, "\t\n"),
		     *expected = strtok(NULL, "\t\n");

		if (!value || *value == '#')
			continue;
		assert_non_null(pg);
		assert_non_null(expected);
		assert_true(pg_events__wait_event(NULL, 15, (uint32_t)strtoul(value, NULL, 16), got,
						  sizeof(got)));
		if (strcmp(got, expected))
			fail_msg("%s: %s, expected %s", value, got, expected);
		rows++;
	}
	fclose(f);
	assert_true(rows > 1000);
}

static void names_and_unknowns(void **state)
{
	char buf[128];

	(void)state;
	assert_false(pg_events__wait_event(NULL, 15, 0, buf, sizeof(buf)));
	assert_true(pg_events__wait_event(NULL, 15, 0x01000008, buf, sizeof(buf)));
	assert_string_equal(buf, "LWLock:WALWrite");
	assert_true(pg_events__wait_event(NULL, 15, 0x03000005, buf, sizeof(buf)));
	assert_string_equal(buf, "Lock:transactionid");
	assert_true(pg_events__wait_event(NULL, 15, 0x06000000, buf, sizeof(buf)));
	assert_string_equal(buf, "Client:ClientRead");
	assert_true(pg_events__wait_event(NULL, 15, 0x0A000046, buf, sizeof(buf)));
	assert_string_equal(buf, "IO:WALSync");
	assert_true(pg_events__wait_event(NULL, 15, 0x0800002f, buf, sizeof(buf)));
	assert_string_equal(buf, "IPC:SyncRep");
	/* An extension's LWLock tranche: not guessed. */
	assert_true(pg_events__wait_event(NULL, 15, 0x01000080, buf, sizeof(buf)));
	assert_string_equal(buf, "LWLock:0x0080");
	/* A version without tables names the class only; an unknown class, the value. */
	assert_true(pg_events__wait_event(NULL, 13, 0x01000008, buf, sizeof(buf)));
	assert_string_equal(buf, "LWLock:0x0008");
	assert_true(pg_events__wait_event(NULL, 15, 0x42000001, buf, sizeof(buf)));
	assert_string_equal(buf, "0x42000001");
	/* 17: an extension's own event (WaitEventExtensionNew) is its number. */
	assert_true(pg_events__wait_event(NULL, 17, 0x07000003, buf, sizeof(buf)));
	assert_string_equal(buf, "Extension:0x0003");
	assert_true(pg_events__wait_event(NULL, 16, 0x07000003, buf, sizeof(buf)));
	assert_string_equal(buf, "Extension:Extension");
	assert_true(pg_events__wait_event(NULL, 17, 0x04000000, buf, sizeof(buf)));
	assert_string_equal(buf, "BufferPin:BufferPin");
	assert_true(pg_events__wait_event(NULL, 17, 0x04000001, buf, sizeof(buf)));
	assert_string_equal(buf, "BufferPin:0x0001");
	assert_true(pg_events__wait_event(NULL, 14, 0x04000007, buf, sizeof(buf)));
	assert_string_equal(buf, "BufferPin:BufferPin");
	/* 17's InjectionPoint class (0x0B): its events are registered at run time. */
	assert_true(pg_events__wait_event(NULL, 17, 0x0B000001, buf, sizeof(buf)));
	assert_string_equal(buf, "InjectionPoint:0x0001");
	assert_true(pg_events__wait_event(NULL, 16, 0x0B000001, buf, sizeof(buf)));
	assert_string_equal(buf, "0x0b000001");
}

/*
 * 14, 16 and 17, value by value as their releases' headers number them: the
 * enums of pgrx's bindings (pgcentralfoundation/pgrx,
 * pgrx-pg-sys/src/include/pg14.rs, pg16.rs, pg17.rs, commit
 * 0193fd0f7ad69246e969258d5657befad44e2fbe: PG_VERSION 14.13, 16.4, 17.0),
 * named as 15 names the same enumerator, 16's new ones as a 16.13 tree's
 * wait_event.c names them (sqlrush/pgrac 0a2aa1ab), 17's all as its
 * generate-wait_event_types.pl makes them (postgres/postgres 0c1aca46);
 * the same enums in pganalyze/libpg_query's 14-latest (1577ef7c, 14.6),
 * 16-latest (06670290, 16.1) and 17-latest-dev (f4a36d53, 17.0).
 * First and last of each class, and the events that moved.
 */
static void pg14_16_17_as_their_headers_number_them(void **state)
{
	static const struct {
		unsigned int version;
		uint32_t info;
		const char *name;
	} cases[] = {
		/* 14: the statistics collector's PgStatMain moved RecoveryWalStream to 8. */
		{ 14, 0x05000000, "Activity:ArchiverMain" },
		{ 14, 0x05000007, "Activity:PgStatMain" },
		{ 14, 0x05000008, "Activity:RecoveryWalStream" },
		{ 14, 0x0500000c, "Activity:WalWriterMain" },
		{ 14, 0x0500000d, "Activity:0x000d" },
		{ 14, 0x06000007, "Client:WalSenderWriteData" },
		/* No ArchiveCommand & co. in 14: BackendTermination is 1, not 3. */
		{ 14, 0x08000001, "IPC:BackendTermination" },
		{ 14, 0x0800002e, "IPC:XactGroupUpdate" },
		{ 14, 0x09000004, "Timeout:VacuumDelay" },
		{ 14, 0x09000006, "Timeout:RegisterSyncRequest" },
		{ 14, 0x0a00000f, "IO:DataFileRead" },
		{ 14, 0x0a000045, "IO:WALWrite" },
		/* LogicalChangesRead..LogicalSubxactWrite: no 14 source of their names. */
		{ 14, 0x0a000046, "IO:0x0046" },
		{ 14, 0x03000005, "Lock:transactionid" },
		/* Individual LWLocks: libpg_query 14-latest's lwlocknames.h (1577ef7c). */
		{ 14, 0x01000001, "LWLock:ShmemIndex" },
		{ 14, 0x01000008, "LWLock:WALWrite" },
		{ 14, 0x0100002f, "LWLock:NotifyQueueTail" },
		{ 14, 0x01000030, "LWLock:XactBuffer" },
		{ 14, 0x01000037, "LWLock:WALInsert" },
		{ 14, 0x0100003c, "LWLock:BufferMapping" },
		{ 14, 0x01000047, "LWLock:PerXactPredicateList" },
		{ 14, 0x01000048, "LWLock:0x0048" },
		/* 16 */
		{ 16, 0x05000007, "Activity:LogicalParallelApplyMain" },
		{ 16, 0x0500000c, "Activity:WalWriterMain" },
		{ 16, 0x06000000, "Client:ClientRead" },
		{ 16, 0x08000016, "IPC:HashGrowBatchesReallocate" },
		{ 16, 0x08000031, "IPC:SyncRep" },
		{ 16, 0x08000034, "IPC:XactGroupUpdate" },
		{ 16, 0x09000006, "Timeout:SpinDelay" },
		{ 16, 0x09000008, "Timeout:VacuumTruncate" },
		{ 16, 0x0a000015, "IO:DSMAllocate" },
		{ 16, 0x0a000025, "IO:RelationMapReplace" },
		{ 16, 0x0a000049, "IO:WALWrite" },
		{ 16, 0x0a00004a, "IO:VersionFileSync" },
		{ 16, 0x0a00004b, "IO:0x004b" },
		{ 16, 0x0300000b, "Lock:applytransaction" },
		{ 16, 0x01000004, "LWLock:ProcArray" },
		{ 16, 0x0100002a, "LWLock:OldSnapshotTimeMap" },
		{ 16, 0x0100003c, "LWLock:BufferMapping" },
		{ 16, 0x0100004b, "LWLock:LogicalRepLauncherDSA" },
		{ 16, 0x0100004c, "LWLock:LogicalRepLauncherHash" },
		{ 16, 0x0100004d, "LWLock:0x004d" },
		/* 17: generated names, sorted; WALWrite became WalWrite. */
		{ 17, 0x05000000, "Activity:ArchiverMain" },
		{ 17, 0x05000001, "Activity:AutovacuumMain" },
		{ 17, 0x0500000f, "Activity:WalWriterMain" },
		{ 17, 0x06000000, "Client:ClientRead" },
		{ 17, 0x06000007, "Client:WalSenderWaitForWal" },
		{ 17, 0x06000008, "Client:WalSenderWriteData" },
		{ 17, 0x08000008, "IPC:BufferIo" },
		{ 17, 0x08000034, "IPC:SyncRep" },
		{ 17, 0x08000038, "IPC:XactGroupUpdate" },
		{ 17, 0x09000002, "Timeout:PgSleep" },
		{ 17, 0x09000009, "Timeout:WalSummarizerError" },
		{ 17, 0x0a000011, "IO:DataFileRead" },
		{ 17, 0x0a00004c, "IO:WalWrite" },
		{ 17, 0x0a00004d, "IO:0x004d" },
		{ 17, 0x0300000b, "Lock:applytransaction" },
		/* libpg_query 17-latest-dev's lwlocknames.h (f4a36d53): SLRU locks gone. */
		{ 17, 0x01000008, "LWLock:WALWrite" },
		{ 17, 0x0100000b, "LWLock:0x000b" },
		{ 17, 0x0100002a, "LWLock:0x002a" },
		{ 17, 0x01000030, "LWLock:WaitEventCustom" },
		{ 17, 0x01000034, "LWLock:SerialControl" },
		{ 17, 0x01000035, "LWLock:XactBuffer" },
		{ 17, 0x01000041, "LWLock:BufferMapping" },
		{ 17, 0x0100005a, "LWLock:XactSLRU" },
		{ 17, 0x0100005b, "LWLock:ParallelVacuumDSA" },
		{ 17, 0x0100005c, "LWLock:0x005c" },
	};
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(
		    pg_events__wait_event(NULL, cases[i].version, cases[i].info, buf, sizeof(buf)));
		if (strcmp(buf, cases[i].name))
			fail_msg("%u/0x%08x: %s, expected %s", cases[i].version, cases[i].info, buf,
				 cases[i].name);
	}
	/* Each class's table as long as the version's enum. */
	assert_int_equal(pg_events__class_size(NULL, 14, 0x08), 47);
	assert_int_equal(pg_events__class_size(NULL, 16, 0x0A), 75);
	assert_int_equal(pg_events__class_size(NULL, 17, 0x08), 57);
	assert_int_equal(pg_events__class_size(NULL, 17, 0x01), 92);
}

/*
 * The tables are one list per class, each entry with the versions it is in:
 * every version's names, sizes and backend types must read as they did when
 * each version had arrays of its own.
 */
static void every_versions_tables_as_before(void **state)
{
	FILE *f = fopen(TABLES_FIXTURE, "re");
	char line[256], got[128];
	unsigned int rows = 0;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *version = strtok(line, "\t\n"), *value = strtok(NULL, "\t\n"),
		     *expected = strtok(NULL, "\t\n");
		unsigned int v;

		if (!version || *version == '#')
			continue;
		assert_non_null(value);
		assert_non_null(expected);
		v = (unsigned int)strtoul(version, NULL, 10);
		if (!strncmp(value, "size:", 5))
			snprintf(got, sizeof(got), "%zu",
				 pg_events__class_size(NULL, v,
						       (unsigned int)strtoul(value + 5, NULL, 16)));
		else if (*value == 'b')
			assert_true(pg_events__backend_type(
			    NULL, v, (uint32_t)strtoul(value + 1, NULL, 10), got, sizeof(got)));
		else
			assert_true(pg_events__wait_event(
			    NULL, v, (uint32_t)strtoul(value, NULL, 16), got, sizeof(got)));
		if (strcmp(got, expected))
			fail_msg("%s %s: %s, expected %s", version, value, got, expected);
		rows++;
	}
	fclose(f);
	assert_true(rows > 1000);
}

#define DATA_FILE "rules/postgres-wait-events.tsv"

static int parse_tables(const char *text, size_t size, struct pg_events **tables,
			unsigned int *line, const char **why)
{
	FILE *f = fmemopen((void *)text, size, "r");
	int err;

	assert_non_null(f);
	err = pg_events__parse(f, tables, line, why);
	fclose(f);
	return err;
}

/*
 * The file in rules/ is what offcpu has built in: every name read from it
 * is the built-in tables' (which the fixtures above check), versions 13 to
 * 18, every class to past each table's end, the backend types.
 */
static void data_file_is_the_built_in_tables(void **state)
{
	FILE *f = fopen(DATA_FILE, "re");
	struct pg_events *tables = NULL;
	char got[128], expected[128];
	unsigned int version, cls, event, line = 0;
	const char *why = NULL;

	(void)state;
	assert_non_null(f);
	assert_int_equal(pg_events__parse(f, &tables, &line, &why), 0);
	fclose(f);
	assert_non_null(tables);
	for (version = 13; version <= 18; version++) {
		assert_int_equal(pg_events__supported(tables, version),
				 version >= 14 && version <= 17);
		assert_int_equal(pg_events__supported(NULL, version),
				 version >= 14 && version <= 17);
		for (cls = 0; cls <= 0x0C; cls++) {
			assert_int_equal(pg_events__class_size(tables, version, cls),
					 pg_events__class_size(NULL, version, cls));
			for (event = 0; event <= 0x100; event++) {
				uint32_t info = cls << 24 | event;

				assert_int_equal(
				    pg_events__wait_event(tables, version, info, got, sizeof(got)),
				    pg_events__wait_event(NULL, version, info, expected,
							  sizeof(expected)));
				if (info && strcmp(got, expected))
					fail_msg("%u 0x%08x: %s, built in %s", version, info, got,
						 expected);
			}
		}
		for (event = 0; event <= 0x20; event++) {
			assert_true(
			    pg_events__backend_type(tables, version, event, got, sizeof(got)));
			assert_true(pg_events__backend_type(NULL, version, event, expected,
							    sizeof(expected)));
			assert_string_equal(got, expected);
		}
	}
	pg_events__free(tables);
}

/* A file's tables replace the built-in ones whole: what it does not name is a number. */
static void a_files_names_and_nothing_else(void **state)
{
	static const char text[] = "# a comment\n"
				   "\n"
				   "18\tIPC\t0x0001\tSomethingNew\n"
				   "18\tBufferPin\t*\tBufferPin\n"
				   "18\tBackendType\t0x2\tio worker\n"
				   "18\tIO\t0x0000\tAioIoCompletion\n"
				   "   \t \n"
				   "18\tIO\t0xFFFF\tLastOne"; /* no newline at the end */
	struct pg_events *tables = NULL;
	const char *why = NULL;
	unsigned int line = 0;
	char buf[128];

	(void)state;
	assert_int_equal(parse_tables(text, strlen(text), &tables, &line, &why), 0);
	assert_true(pg_events__supported(tables, 18));
	assert_false(pg_events__supported(tables, 15));
	assert_true(pg_events__wait_event(tables, 18, 0x08000001, buf, sizeof(buf)));
	assert_string_equal(buf, "IPC:SomethingNew");
	assert_true(pg_events__wait_event(tables, 18, 0x08000000, buf, sizeof(buf)));
	assert_string_equal(buf, "IPC:0x0000");
	assert_true(pg_events__wait_event(tables, 18, 0x04000042, buf, sizeof(buf)));
	assert_string_equal(buf, "BufferPin:BufferPin");
	assert_true(pg_events__wait_event(tables, 18, 0x0a00ffff, buf, sizeof(buf)));
	assert_string_equal(buf, "IO:LastOne");
	assert_true(pg_events__wait_event(tables, 15, 0x01000008, buf, sizeof(buf)));
	assert_string_equal(buf, "LWLock:0x0008");
	assert_true(pg_events__backend_type(tables, 18, 2, buf, sizeof(buf)));
	assert_string_equal(buf, "io worker");
	assert_true(pg_events__backend_type(tables, 15, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "0x3");
	assert_int_equal(pg_events__class_size(tables, 18, 0x08), 2);
	assert_int_equal(pg_events__class_size(tables, 18, 0x04), 0);
	assert_int_equal(pg_events__class_size(tables, 18, 0x0A), 0x10000);
	assert_true(reads__decode("pg_wait_event", tables, 18, 0x08000001, buf, sizeof(buf)));
	assert_string_equal(buf, "IPC:SomethingNew");
	pg_events__free(tables);
	/* Comments only: no version is named. */
	assert_int_equal(parse_tables("# none\n", 7, &tables, &line, &why), 0);
	assert_false(pg_events__supported(tables, 15));
	assert_true(pg_events__wait_event(tables, 15, 0x01000008, buf, sizeof(buf)));
	assert_string_equal(buf, "LWLock:0x0008");
	pg_events__free(tables);
	pg_events__free(NULL);
}

/* Each bad file is refused whole, with the line and what is wrong with it. */
static void bad_data_files_name_their_line(void **state)
{
	static const struct {
		const char *text;
		unsigned int line;
		const char *why;
	} cases[] = {
		{ "15\tIPC\t0x0001\n", 1, "four fields" },
		{ "15 IPC 0x0001 SyncRep\n", 1, "four fields" },
		{ "# c\n15\tIPC\t0x0001\tSyncRep\textra\n", 2, "four fields" },
		{ "15\tIpc\t0x0001\tSyncRep\n", 1, "unknown class" },
		{ "15\tLWLock\t0x0001\tA\n15\tWait\t0x0002\tB\n", 2, "unknown class" },
		{ "16\tInjectionPoint\t0x0001\tA\n", 1, "from PostgreSQL 17" },
		{ "fifteen\tIPC\t0x0001\tA\n", 1, "major version" },
		{ "0\tIPC\t0x0001\tA\n", 1, "major version" },
		{ "1000\tIPC\t0x0001\tA\n", 1, "major version" },
		{ "15\tIPC\t1\tA\n", 1, "0x and 1 to 4 hex" },
		{ "15\tIPC\t0x10000\tA\n", 1, "0x and 1 to 4 hex" },
		{ "15\tIPC\t0x\tA\n", 1, "0x and 1 to 4 hex" },
		{ "15\tIPC\t0x1g\tA\n", 1, "0x and 1 to 4 hex" },
		{ "15\tBackendType\t*\tlogger\n", 1, "backend type is 0x" },
		{ "15\tIPC\t0x0001\t\n", 1, "1 to 63 printable" },
		{ "15\tIPC\t0x0001\tSyncRep\r\n", 1, "1 to 63 printable" },
		{ "15\tIPC\t0x0001\tA23456789012345678901234567890123456789012345678901234567890123"
		  "4\n",
		  1, "1 to 63 printable" },
		{ "15\tIPC\t0x0001\tA\n15\tIPC\t0x0002\tB\n15\tIPC\t0x01\tC\n", 3,
		  "a second name" },
		{ "15\tIPC\t*\tA\n15\tIO\t0x0\tB\n15\tIPC\t*\tC\n15\tIPC\t*\tD\n", 3,
		  "a second name" },
		{ "15\tBackendType\t0x0\tA\n15\tBackendType\t0x0000\tA\n", 2, "a second name" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pg_events *tables = (struct pg_events *)&tables;
		const char *why = NULL;
		unsigned int line = 0;

		assert_int_equal(
		    parse_tables(cases[i].text, strlen(cases[i].text), &tables, &line, &why),
		    -EINVAL);
		if (line != cases[i].line || !why || !strstr(why, cases[i].why))
			fail_msg("%s: line %u: %s", cases[i].text, line, why ? why : "(null)");
		assert_null(tables);
	}
}

/* A NUL byte, a line past 255 bytes, a file past 1 MiB, a directory: refused, not cut short. */
static void bad_data_beyond_a_line(void **state)
{
	static const char nul[] = "15\tIPC\t0x0001\tA\n15\tIPC\t0x0002\tB\0C\n";
	struct pg_events *tables = NULL;
	const char *why = NULL;
	unsigned int line = 0;
	size_t size = PG_EVENTS_MAX_BYTES + 4096, at;
	char *big = malloc(size);
	FILE *dir;

	(void)state;
	assert_int_equal(parse_tables(nul, sizeof(nul) - 1, &tables, &line, &why), -EINVAL);
	assert_int_equal(line, 2);
	assert_non_null(strstr(why, "NUL"));
	assert_non_null(big);
	memset(big, 'x', 300);
	memcpy(big, "# ", 2);
	assert_int_equal(parse_tables(big, 300, &tables, &line, &why), -EINVAL);
	assert_int_equal(line, 1);
	assert_non_null(strstr(why, "255 bytes"));
	/* Comment lines of 64 bytes: the one that crosses 1 MiB is named. */
	for (at = 0; at + 64 <= size; at += 64) {
		memset(big + at, 'x', 63);
		memcpy(big + at, "# ", 2);
		big[at + 63] = '\n';
	}
	assert_int_equal(parse_tables(big, at, &tables, &line, &why), -EINVAL);
	assert_int_equal(line, PG_EVENTS_MAX_BYTES / 64 + 1);
	assert_non_null(strstr(why, "1 MiB"));
	assert_null(tables);
	free(big);
	/* Read errors are the system's, not a line's. */
	dir = fopen(".", "re");
	assert_non_null(dir);
	assert_int_equal(pg_events__parse(dir, &tables, &line, &why), -EISDIR);
	assert_null(tables);
	fclose(dir);
}

/* The file beside the rules file that decodes with it, else where packs are found. */
static void data_file_found_beside_its_rules(void **state)
{
	char dir[] = "/tmp/offcpu-pgev-XXXXXX", rules[64], data[64], path[128];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rules, sizeof(rules), "%s/mine.rules", dir);
	snprintf(data, sizeof(data), "%s/" PG_EVENTS_FILE, dir);
	f = fopen(data, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(rules__open_beside(rules, PG_EVENTS_FILE, path, sizeof(path), &f), 0);
	assert_non_null(f);
	assert_string_equal(path, data);
	fclose(f);
	assert_int_equal(rules__open_beside("rules/postgres.rules", PG_EVENTS_FILE, path,
					    sizeof(path), &f),
			 0);
	assert_non_null(f);
	assert_string_equal(path, DATA_FILE);
	fclose(f);
	/* Writable by others: another user could have written it. */
	assert_int_equal(chmod(data, 0666), 0);
	assert_int_equal(rules__open_beside(rules, PG_EVENTS_FILE, path, sizeof(path), &f), -EPERM);
	assert_null(f);
	assert_string_equal(path, data);
	assert_int_equal(unlink(data), 0);
	/* A FIFO would hang the start; a link is not followed. */
	assert_int_equal(mkfifo(data, 0600), 0);
	assert_int_equal(rules__open_beside(rules, PG_EVENTS_FILE, path, sizeof(path), &f), -EPERM);
	assert_null(f);
	assert_int_equal(unlink(data), 0);
	assert_int_equal(symlink(DATA_FILE, data), 0);
	assert_int_equal(rules__open_beside(rules, PG_EVENTS_FILE, path, sizeof(path), &f), -EPERM);
	assert_null(f);
	assert_int_equal(unlink(data), 0);
	/* A path past the buffer is refused, not cut to another name. */
	assert_int_equal(rules__open_beside(rules, PG_EVENTS_FILE, path, 20, &f), -ENAMETOOLONG);
	assert_null(f);
	assert_int_equal(rmdir(dir), 0);
}

/* BackendType (miscadmin.h): 17 put the backends first. */
static void backend_types_per_version(void **state)
{
	static const struct {
		unsigned int version, type;
		const char *name;
	} cases[] = {
		{ 14, 3, "client backend" },
		{ 14, 6, "checkpointer" },
		{ 14, 10, "walwriter" },
		{ 14, 12, "stats collector" },
		{ 14, 13, "logger" },
		{ 15, 3, "client backend" },
		{ 15, 5, "background writer" },
		{ 15, 6, "checkpointer" },
		{ 15, 10, "walwriter" },
		{ 15, 12, "logger" },
		/* 16 sorted them by name (pgrx pg16.rs, 16.4). */
		{ 16, 1, "archiver" },
		{ 16, 4, "client backend" },
		{ 16, 8, "logger" },
		{ 16, 9, "standalone backend" },
		{ 16, 13, "walwriter" },
		{ 16, 14, "0xe" },
		{ 17, 1, "client backend" },
		{ 17, 3, "autovacuum worker" },
		{ 17, 9, "background writer" },
		{ 17, 10, "checkpointer" },
		{ 17, 14, "walwriter" },
		{ 17, 15, "logger" },
		{ 15, 40, "0x28" },
		{ 12, 3, "0x3" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(pg_events__backend_type(NULL, cases[i].version, cases[i].type, buf,
						    sizeof(buf)));
		if (strcmp(buf, cases[i].name))
			fail_msg("%u/%u: %s, expected %s", cases[i].version, cases[i].type, buf,
				 cases[i].name);
	}
}

static int parse_text(const char *text, struct rule_set *set, unsigned int *line, const char **why)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = rules__parse(f, set, line, why);
	fclose(f);
	return err;
}

static void pack_lines_parse(void **state)
{
	struct rule_set set = { 0 };
	const char *why = NULL;
	unsigned int line = 0;

	(void)state;
	assert_int_equal(
	    parse_text("process postgres version PostgreSQL\n"
		       "read my_wait_event_info deref u32 as pg.wait_event decode "
		       "pg_wait_event\n"
		       "read MyBackendType u32 as pg.backend_type decode pg_backend_type\n"
		       "read SomeCounter u64 as x.counter\n"
		       "read debug_query_string deref str as pg.query data\n"
		       "label pg.wait_event Lock:* lock:pg-heavyweight\n",
		       &set, &line, &why),
	    0);
	assert_int_equal(set.nr_groups, 1);
	assert_string_equal(set.groups[0].comm, "postgres");
	assert_string_equal(set.groups[0].version_prefix, "PostgreSQL");
	assert_int_equal(set.groups[0].nr_reads, 4);
	assert_true(set.groups[0].reads[3].string);
	assert_true(set.groups[0].reads[3].data);
	assert_true(set.groups[0].reads[3].deref);
	assert_string_equal(set.groups[0].reads[3].decoder, "text");
	assert_false(set.groups[0].reads[0].data);
	assert_true(set.groups[0].reads[0].deref);
	assert_int_equal(set.groups[0].reads[0].width, 4);
	assert_string_equal(set.groups[0].reads[0].decoder, "pg_wait_event");
	assert_false(set.groups[0].reads[1].deref);
	assert_string_equal(set.groups[0].reads[2].decoder, "dec");
	assert_int_equal(set.groups[0].reads[2].width, 8);
	assert_int_equal(set.nr, 1);
	assert_int_equal(set.rules[0].scope, RULE_LABEL);
	assert_string_equal(set.rules[0].label, "pg.wait_event");
	assert_true(rules__label_matches(&set.rules[0], "Lock:tuple"));
	assert_false(rules__label_matches(&set.rules[0], "LWLock:WALWrite"));
	assert_false(rules__label_matches(&set.rules[0], NULL));
	rules__free(&set);
}

static void bad_pack_lines_name_their_line(void **state)
{
	static const struct {
		const char *text;
		unsigned int line;
		const char *why;
	} cases[] = {
		{ "read X u32 as a.b\n", 1, "process line" },
		{ "process postgres\nread X u24 as a.b\n", 2, "u8, u16, u32, u64 or str" },
		{ "process p\nread X str as a.b decode hex\n", 2, "decode as text" },
		{ "process p\nread X u32 as a.b decode text\n", 2, "decode as text" },
		{ "process p\nread X str as a.b\nread Y deref str as a.c data\n", 3, "one str" },
		{ "process postgres\nread X u32 as nodot\n", 2, "NAMESPACE.NAME" },
		{ "process postgres\nread X u32 as a.b decode nope\n", 2, "unknown decoder" },
		{ "process postgres\nread X u32 is a.b\n", 2, "expected: read" },
		{ "process postgres\n\nread X deref\n", 3, "expected: read" },
		{ "process\n", 1, "expected: process" },
		{ "process postgres release 15\n", 1, "expected: process" },
		{ "process a_command_name_too_long\n", 1, "15 bytes" },
		{ "process p\nread A u8 as a.a\nread B u8 as a.b\nread C u8 as a.c\n"
		  "read D u8 as a.d\nread E u8 as a.e\n",
		  6, "at most 4" },
		{ "label pg.wait_event Lock:* waiting\n", 1, "unknown wait class" },
		{ "label pg.wait_event Lock:*\n", 1, "expected: label" },
		{ "label pg.wait_event Lock:* LWLock:* lock\n", 1, "expected: label" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rule_set set = { 0 };
		const char *why = NULL;
		unsigned int line = 0;

		assert_int_equal(parse_text(cases[i].text, &set, &line, &why), -EINVAL);
		if (line != cases[i].line || !why || !strstr(why, cases[i].why))
			fail_msg("%s: line %u: %s", cases[i].text, line, why ? why : "(null)");
		/* Nothing of a bad file is kept. */
		assert_int_equal(set.nr, 0);
		assert_int_equal(set.nr_groups, 0);
		rules__free(&set);
	}
}

/* The state decides first: a backend preempted under a wait event waited for a CPU. */
static void label_rules_after_the_state(void **state)
{
	struct rule_set set = { 0 };
	const char *why = NULL;
	unsigned int line = 0;
	struct label items[1] = { { "pg.wait_event", "LWLock:WALWrite" } };
	struct profile *p;
	const struct labels *labels;
	int err;

	(void)state;
	assert_int_equal(
	    parse_text("label pg.wait_event LWLock:* lock:pg-lwlock\n", &set, &line, &why), 0);
	assert_int_equal(profile__new(false, &p), 0);
	labels = profile__intern_labels(p, items, 1, &err);
	assert_non_null(labels);
	assert_string_equal(classify__from_labels(&set, OFFCPU_STATE_INTERRUPTIBLE, labels),
			    "lock:pg-lwlock");
	assert_null(classify__from_labels(&set, OFFCPU_STATE_PREEMPTED, labels));
	assert_null(classify__from_labels(&set, OFFCPU_STATE_INTERRUPTIBLE, NULL));
	/* One copy of equal label sets. */
	assert_ptr_equal(profile__intern_labels(p, items, 1, &err), labels);
	profile__free(p);
	rules__free(&set);
}

/* The pack's label lines class each version's names alike: 17 says IO:WalWrite. */
static void pack_classes_every_versions_names(void **state)
{
	static const struct {
		unsigned int version;
		uint32_t info;
		const char *wait_class;
	} cases[] = {
		{ 15, 0x0a000048, "io:pg-wal" },	   /* WALWrite */
		{ 16, 0x0a000049, "io:pg-wal" },	   /* WALWrite */
		{ 17, 0x0a00004c, "io:pg-wal" },	   /* WalWrite */
		{ 17, 0x0a00004a, "io:pg-wal" },	   /* WalSync */
		{ 17, 0x0a000011, "io:pg-data-read" },	   /* DataFileRead */
		{ 17, 0x01000008, "lock:pg-lwlock" },	   /* WALWrite */
		{ 17, 0x0300000b, "lock:pg-heavyweight" }, /* applytransaction */
		{ 17, 0x06000000, "net:pg-client" },	   /* ClientRead */
		{ 14, 0x05000007, "sleep:pg-idle" },	   /* PgStatMain */
	};
	struct rule_set set = { 0 };
	const char *why = NULL;
	unsigned int line = 0;
	FILE *f = fopen("rules/postgres.rules", "r");
	struct profile *p;
	char name[128];
	size_t i;
	int err;

	(void)state;
	assert_non_null(f);
	assert_int_equal(rules__parse(f, &set, &line, &why), 0);
	fclose(f);
	assert_int_equal(profile__new(false, &p), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct label items[1] = { { "pg.wait_event", name } };
		const struct labels *labels;
		const char *got;

		assert_true(pg_events__wait_event(NULL, cases[i].version, cases[i].info, name,
						  sizeof(name)));
		labels = profile__intern_labels(p, items, 1, &err);
		assert_non_null(labels);
		got = classify__from_labels(&set, OFFCPU_STATE_INTERRUPTIBLE, labels);
		if (!got || strcmp(got, cases[i].wait_class))
			fail_msg("%u/%s: %s, expected %s", cases[i].version, name,
				 got ? got : "(null)", cases[i].wait_class);
	}
	profile__free(p);
	rules__free(&set);
}

static void decoders(void **state)
{
	char buf[64];

	(void)state;
	assert_true(reads__decoder_known("hex"));
	assert_false(reads__decoder_known("pg_lock"));
	assert_true(reads__decode("hex", NULL, 0, 255, buf, sizeof(buf)));
	assert_string_equal(buf, "0xff");
	assert_true(reads__decode("dec", NULL, 0, 42, buf, sizeof(buf)));
	assert_string_equal(buf, "42");
	assert_true(reads__decode("pg_backend_type", NULL, 15, 6, buf, sizeof(buf)));
	assert_string_equal(buf, "checkpointer");
	/* A wait event of 0: the backend is not waiting, no label. */
	assert_false(reads__decode("pg_wait_event", NULL, 15, 0, buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pg15_every_value_as_the_binary_names_it),
		cmocka_unit_test(names_and_unknowns),
		cmocka_unit_test(pg14_16_17_as_their_headers_number_them),
		cmocka_unit_test(every_versions_tables_as_before),
		cmocka_unit_test(data_file_is_the_built_in_tables),
		cmocka_unit_test(a_files_names_and_nothing_else),
		cmocka_unit_test(bad_data_files_name_their_line),
		cmocka_unit_test(bad_data_beyond_a_line),
		cmocka_unit_test(data_file_found_beside_its_rules),
		cmocka_unit_test(backend_types_per_version),
		cmocka_unit_test(pack_lines_parse),
		cmocka_unit_test(bad_pack_lines_name_their_line),
		cmocka_unit_test(label_rules_after_the_state),
		cmocka_unit_test(pack_classes_every_versions_names),
		cmocka_unit_test(decoders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
