// SPDX-License-Identifier: GPL-2.0
/* The parser of /proc/PID/maps, fed fixtures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/array.h"
#include "proc/procmaps.h"

static void maps_lines(void **state)
{
	struct proc_map m;

	(void)state;
	assert_int_equal(procmaps__parse_line("55d0c0a00000-55d0c0a21000 r-xp 00002000 fe:01 "
					      "1234567                    /usr/bin/cat\n",
					      &m),
			 0);
	assert_true(m.start == 0x55d0c0a00000ULL && m.end == 0x55d0c0a21000ULL);
	assert_true(m.executable);
	assert_int_equal(m.file_offset, 0x2000);
	assert_int_equal(m.dev_major, 0xfe);
	assert_int_equal(m.dev_minor, 1);
	assert_int_equal(m.inode, 1234567);
	assert_string_equal(m.path, "/usr/bin/cat");
	free(m.path);

	assert_int_equal(procmaps__parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0 "
					      "                 [vdso]\n",
					      &m),
			 0);
	assert_string_equal(m.path, "[vdso]");
	free(m.path);

	assert_int_equal(
	    procmaps__parse_line("7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n", &m), 0);
	assert_false(m.executable);
	assert_string_equal(m.path, "");
	free(m.path);

	assert_int_equal(
	    procmaps__parse_line("1000-2000 r-xp 00000000 08:02 77 /tmp/a b (deleted)", &m), 0);
	assert_string_equal(m.path, "/tmp/a b (deleted)");
	free(m.path);
}

static void maps_lines_rejected(void **state)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"2000-1000 r-xp 00000000 08:02 77 /x", /* end before start */
		"1000-2000 r-xp 00000000 08:02",       /* no inode */
		"1000-2000 rx 00000000 08:02 77 /x",   /* short perms */
		"zz-2000 r-xp 00000000 08:02 77 /x",
	};
	struct proc_map m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(procmaps__parse_line(bad[i], &m), -EINVAL);
}

static void maps_file_keeps_executable_mappings(void **state)
{
	static const char fixture[] =
	    "400000-401000 r--p 00000000 fe:01 10 /usr/bin/prog\n"
	    "401000-402000 r-xp 00001000 fe:01 10 /usr/bin/prog\n"
	    "7f0000000000-7f0000100000 r-xp 00010000 fe:01 20 /usr/lib/libc.so.6\n"
	    "7f0000100000-7f0000200000 rw-p 00000000 00:00 0\n"
	    "7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]\n";
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");
	struct proc_maps maps;

	(void)state;
	assert_non_null(f);
	assert_int_equal(procmaps__read(f, &maps), 0);
	fclose(f);
	assert_int_equal(maps.nr, 3);
	assert_string_equal(procmaps__find(&maps, 0x401800)->path, "/usr/bin/prog");
	assert_string_equal(procmaps__find(&maps, 0x7f00000fffffULL)->path, "/usr/lib/libc.so.6");
	assert_null(procmaps__find(&maps, 0x400800));	       /* not executable */
	assert_null(procmaps__find(&maps, 0x7f0000100000ULL)); /* end is exclusive */
	assert_null(procmaps__find(&maps, 0x10));
	procmaps__free(&maps);
}

static void maps_file_with_a_bad_line_fails_whole(void **state)
{
	static const char fixture[] = "401000-402000 r-xp 00001000 fe:01 10 /usr/bin/prog\n"
				      "this is not a mapping\n";
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");
	struct proc_maps maps = { 0 };

	(void)state;
	assert_int_equal(procmaps__read(f, &maps), -EINVAL);
	assert_null(maps.maps);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maps_lines),
		cmocka_unit_test(maps_lines_rejected),
		cmocka_unit_test(maps_file_keeps_executable_mappings),
		cmocka_unit_test(maps_file_with_a_bad_line_fails_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
