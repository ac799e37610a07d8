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
	struct read_budget budget = { UINT64_MAX, false };
	struct perfmap map = { 0 };
	const struct elf_symbol *s;

	(void)state;
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
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

static FILE *text_file(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	return f;
}

/*
 * A JIT appends: each read goes on from where the last stopped, leaving
 * an incomplete last line for the next one; the newest entry for an
 * address wins; a line too long to be a symbol's is skipped unkept, even
 * when it grows across reads.
 */
static void parse_appended(void **state)
{
	static const char first[] = "3000 10 third\n1000 10 first\n2000 10 sec";
	static const char second[] = "3000 10 third\n1000 10 first\n2000 10 second\n"
				     "1000 10 first_again\n";
	struct read_budget budget = { UINT64_MAX, false };
	struct perfmap map = { 0 };
	char *long_line = malloc(3 << 20);
	FILE *f = text_file(first);

	(void)state;
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
	fclose(f);
	assert_int_equal(map.nr, 2);
	assert_int_equal(map.read_bytes, strlen("3000 10 third\n1000 10 first\n"));
	assert_null(perfmap__find(&map, 0x2000));

	f = text_file(second);
	assert_int_equal(fseek(f, (long)map.read_bytes, SEEK_SET), 0);
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
	fclose(f);
	assert_int_equal(map.nr, 4);
	assert_int_equal(map.read_bytes, strlen(second));
	assert_string_equal(perfmap__find(&map, 0x2008)->name, "second");
	assert_string_equal(perfmap__find(&map, 0x1008)->name, "first_again");
	assert_string_equal(perfmap__find(&map, 0x3000)->name, "third");

	/* 1 MiB of one line, then 2 MiB more of it and its end, then a symbol. */
	assert_non_null(long_line);
	memset(long_line, 'x', 3 << 20);
	memcpy(long_line, second, strlen(second));
	long_line[1 << 20] = '\0';
	f = text_file(long_line);
	assert_int_equal(fseek(f, (long)map.read_bytes, SEEK_SET), 0);
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
	fclose(f);
	assert_int_equal(map.read_bytes, 1 << 20);
	assert_true(map.in_long_line);
	strcpy(long_line + (3 << 20) - 32, "\n4000 10 fourth\n");
	f = fmemopen(long_line, (3 << 20) - 32 + strlen("\n4000 10 fourth\n"), "r");
	long_line[1 << 20] = 'x';
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)map.read_bytes, SEEK_SET), 0);
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
	fclose(f);
	assert_false(map.in_long_line);
	assert_int_equal(map.nr, 5);
	assert_int_equal(map.bad_lines, 1);
	assert_string_equal(perfmap__find(&map, 0x4000)->name, "fourth");
	perfmap__free(&map);
	free(long_line);
}

/* What the budget does not pay for is not kept, nor read past. */
static void parse_within_budget(void **state)
{
	struct read_budget budget = { 2 * (sizeof(struct elf_symbol) + 3), false };
	struct perfmap map = { 0 };
	FILE *f = text_file("1000 10 aa\n2000 10 bb\n3000 10 cc\n");

	(void)state;
	assert_int_equal(perfmap__parse(f, &map, &budget), 0);
	fclose(f);
	assert_int_equal(map.nr, 2);
	assert_true(budget.exhausted);
	assert_int_equal(budget.left, 0);
	assert_int_equal(map.read_bytes, strlen("1000 10 aa\n2000 10 bb\n"));
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

static void append_map(const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The real file, as it grows and when it is replaced: read on, or again from its start. */
static void update_as_it_grows(void **state)
{
	struct read_budget budget = { UINT64_MAX, false };
	struct perfmap map = { 0 };

	(void)state;
	if (geteuid() != 0)
		fail_msg("the ownership checks need root");
	write_map("1000 10 one\n");
	assert_int_equal(perfmap__update(getpid(), &map, &budget), 0);
	assert_int_equal(map.nr, 1);
	append_map("2000 10 two\n");
	assert_int_equal(perfmap__update(getpid(), &map, &budget), 0);
	assert_int_equal(map.nr, 2);
	assert_string_equal(perfmap__find(&map, 0x2000)->name, "two");
	/* Unchanged: nothing read, nothing added. */
	assert_int_equal(perfmap__update(getpid(), &map, &budget), 0);
	assert_int_equal(map.nr, 2);
	/* Replaced by a shorter file: only what it holds. */
	write_map("3000 10 three\n");
	assert_int_equal(perfmap__update(getpid(), &map, &budget), 0);
	assert_int_equal(map.nr, 1);
	assert_null(perfmap__find(&map, 0x1000));
	assert_string_equal(perfmap__find(&map, 0x3000)->name, "three");
	perfmap__free(&map);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_fixture),       cmocka_unit_test(parse_appended),
		cmocka_unit_test(parse_within_budget), cmocka_unit_test(open_checks),
		cmocka_unit_test(update_as_it_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
