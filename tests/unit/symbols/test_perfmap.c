// SPDX-License-Identifier: GPL-2.0
/* /tmp/perf-PID.map: the parser on fixtures, the opener's checks on real files. */
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

#include "symbols/perfmap.h"

static void parse_fixture(void **state)
{
	static const char fixture[] = "7f0000001000 40 LazyCompile:~main app.js:1\n"
				      "7f0000000100 10 Builtin:ArgumentsAdaptorTrampoline\n"
				      "not a line\n"
				      "7f0000002000 0 zero_size\n"
				      "7f0000003000 zz bad_size\n"
				      "7f0000004000 20\n"
				      "ffffffffffffffff 10 wraps\n"
				      "7f0000005000 8 trailing blanks   \n";
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");
	struct perfmap map;
	const struct elf_symbol *s;

	(void)state;
	assert_int_equal(perfmap__parse(f, &map), 0);
	fclose(f);
	assert_int_equal(map.nr, 3);
	assert_int_equal(map.bad_lines, 5);
	s = perfmap__find(&map, 0x7f0000001020ULL);
	assert_non_null(s);
	assert_string_equal(s->name, "LazyCompile:~main app.js:1");
	assert_string_equal(perfmap__find(&map, 0x7f0000000100ULL)->name,
			    "Builtin:ArgumentsAdaptorTrampoline");
	assert_string_equal(perfmap__find(&map, 0x7f0000005007ULL)->name, "trailing blanks");
	/* Only inside [start, start + size). */
	assert_null(perfmap__find(&map, 0x7f0000001040ULL));
	assert_null(perfmap__find(&map, 0x7f00000000ffULL));
	assert_null(perfmap__find(&map, 0x10));
	perfmap__free(&map);
}

static char path[64];

static void write_map(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* This test process is the target: its map in its (host) /tmp. */
static void open_checks(void **state)
{
	char target[64];
	FILE *f = NULL;

	(void)state;
	if (geteuid() != 0)
		fail_msg("the ownership checks need root");
	write_map("1000 10 fine\n");
	assert_int_equal(perfmap__open(getpid(), &f), 0);
	fclose(f);

	/* Owned by another user than the process's: refused. */
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(perfmap__open(getpid(), &f), -EPERM);

	/* A symbolic link planted in its place: refused, not followed. */
	unlink(path);
	snprintf(target, sizeof(target), "/tmp/offcpu-perfmap-target-%d", getpid());
	f = fopen(target, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(perfmap__open(getpid(), &f), -EPERM);
	unlink(path);
	unlink(target);

	/* Not a regular file: refused without blocking on it. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(perfmap__open(getpid(), &f), -EPERM);
	unlink(path);

	/* Too large. */
	write_map("");
	assert_int_equal(truncate(path, PERFMAP_MAX_BYTES + 1), 0);
	assert_int_equal(perfmap__open(getpid(), &f), -EPERM);
	unlink(path);

	assert_int_equal(perfmap__open(getpid(), &f), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_fixture),
		cmocka_unit_test(open_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
