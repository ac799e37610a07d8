// SPDX-License-Identifier: GPL-2.0
/* The cache of what each file is, by its device, inode, size and mtime. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "python/python_files.h"

/*
 * What a file is, read once per version of it: the same device, inode,
 * size and mtime are not read again; another mtime is.
 */
static void files_read_once_per_version(void **state)
{
	char path[] = "/tmp/offcpu-test-python-files-XXXXXX";
	struct symbol_limits limits;
	struct python_files *files = python_files__new();
	struct python_elf e;
	struct timespec times[2];
	struct stat st;
	char buf[65536];
	ssize_t n;
	int in, fd;

	(void)state;
	limits__defaults(&limits);
	assert_non_null(files);
	/* An ELF file without _PyRuntime: this test's own executable. */
	in = open("/proc/self/exe", O_RDONLY);
	fd = mkstemp(path);
	assert_true(in >= 0 && fd >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(fd, buf, (size_t)n), n);
	close(in);
	assert_int_equal(python_files__read(files, fd, &limits, &e), -ENOENT);
	assert_int_equal(fstat(fd, &st), 0);
	/* Not an ELF file any more, its size and times as they were: the same file to the cache. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pwrite(fd, buf, 64, 0), 64);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(futimens(fd, times), 0);
	assert_int_equal(python_files__read(files, fd, &limits, &e), -ENOENT);
	/* Modified: read again, and it is no ELF file. */
	times[1].tv_sec -= 10;
	assert_int_equal(futimens(fd, times), 0);
	assert_int_not_equal(python_files__read(files, fd, &limits, &e), -ENOENT);
	close(fd);
	unlink(path);
	python_files__free(files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(files_read_once_per_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
