// SPDX-License-Identifier: GPL-2.0
/* The main binary of -- COMMAND: found in PATH as execvp(3) finds it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "cli/main_binary.h"

static void make_file(const char *dir, const char *name, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void searches_path_as_execvp(void **state)
{
	char a[] = "/tmp/offcpu-main-binary-XXXXXX", b[] = "/tmp/offcpu-main-binary-XXXXXX";
	char path_env[200], found[PATH_MAX], expect[PATH_MAX], sub[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(a));
	assert_non_null(mkdtemp(b));
	/* In a: "tool" not executable, "dir" a directory; in b: both executable files. */
	make_file(a, "tool", 0644);
	snprintf(sub, sizeof(sub), "%s/dir", a);
	assert_int_equal(mkdir(sub, 0755), 0);
	make_file(b, "tool", 0755);
	make_file(b, "dir", 0755);
	snprintf(path_env, sizeof(path_env), "/nonexistent:%s:%s", a, b);
	assert_int_equal(main_binary__search_path("tool", path_env, found, sizeof(found)), 0);
	snprintf(expect, sizeof(expect), "%s/tool", b);
	assert_string_equal(found, expect);
	assert_int_equal(main_binary__search_path("dir", path_env, found, sizeof(found)), 0);
	snprintf(expect, sizeof(expect), "%s/dir", b);
	assert_string_equal(found, expect);
	assert_int_equal(main_binary__search_path("absent", path_env, found, sizeof(found)),
			 -ENOENT);
	/* A name with a '/' is not searched for. */
	assert_int_equal(main_binary__search_path("./x/tool", path_env, found, sizeof(found)), 0);
	assert_string_equal(found, "./x/tool");
	assert_int_equal(main_binary__search_path("", path_env, found, sizeof(found)), -ENOENT);
	snprintf(expect, sizeof(expect), "rm -rf %s %s", a, b);
	assert_int_equal(system(expect), 0);
}

static void finds_offcpu_itself_without_a_program(void **state)
{
	struct id_list none = { 0 };
	char found[PATH_MAX], self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(len > 0);
	self[len] = '\0';
	main_binary__find(NULL, &none, found, sizeof(found));
	assert_string_equal(found, self);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(searches_path_as_execvp),
		cmocka_unit_test(finds_offcpu_itself_without_a_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
