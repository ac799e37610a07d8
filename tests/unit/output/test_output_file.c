// SPDX-License-Identifier: GPL-2.0
/* The output file: the error a failed write had is the one reported. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/output.h"

/* More than any stdio buffer: fwrite hands it to the file at once. */
#define BIG_WRITE (256 * 1024)

static char *temp_dir(void)
{
	char *dir = strdup("/tmp/offcpu-output-file-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static size_t entries(const char *dir)
{
	char cmd[128];
	size_t nr = 0;
	FILE *ls;
	int c;

	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	ls = popen(cmd, "r");
	assert_non_null(ls);
	while ((c = fgetc(ls)) != EOF)
		nr += c == '\n';
	pclose(ls);
	return nr;
}

static void committed_file_renamed_into_place(void **state)
{
	struct output_file out;
	char *dir = temp_dir(), path[256], text[16] = { 0 };
	FILE *in;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	assert_int_equal(output_file__open(path, &out), 0);
	fputs("profile\n", out.stream);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(output_file__commit(&out), 0);
	in = fopen(path, "r");
	assert_non_null(in);
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "profile\n");
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/*
 * A write that failed while the back-end was writing leaves nothing for
 * fflush to retry: the error is the write's, not whatever errno says by
 * the time the output is committed.
 */
static void device_error_is_the_failed_writes(void **state)
{
	struct output_file out;
	char *big = calloc(1, BIG_WRITE);

	(void)state;
	assert_non_null(big);
	assert_int_equal(output_file__open("/dev/full", &out), 0);
	fwrite(big, 1, BIG_WRITE, out.stream);
	errno = EAGAIN;
	assert_int_equal(output_file__commit(&out), -ENOSPC);
	free(big);
}

static void regular_file_error_is_the_failed_writes(void **state)
{
	struct rlimit saved, small = { 4096, 0 };
	struct output_file out;
	char *dir = temp_dir(), path[256], *big = calloc(1, BIG_WRITE);
	void (*xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	int err;

	(void)state;
	assert_non_null(big);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
	small.rlim_max = saved.rlim_max;
	assert_int_equal(output_file__open(path, &out), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	fwrite(big, 1, BIG_WRITE, out.stream);
	errno = 0;
	err = output_file__commit(&out);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	signal(SIGXFSZ, xfsz);
	assert_int_equal(err, -EFBIG);
	/* Neither the destination nor the temporary file is left. */
	assert_int_equal(entries(dir), 0);
	rmdir(dir);
	free(dir);
	free(big);
}

static void closed_pipe_is_epipe(void **state)
{
	void (*pipe_handler)(int) = signal(SIGPIPE, SIG_IGN);
	struct output_file out;
	char path[64], *big = calloc(1, BIG_WRITE);
	int fds[2];

	(void)state;
	assert_non_null(big);
	assert_int_equal(pipe(fds), 0);
	/* A FIFO is written in place. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[1]);
	assert_int_equal(output_file__open(path, &out), 0);
	close(fds[0]);
	fwrite(big, 1, BIG_WRITE, out.stream);
	errno = ENOENT;
	assert_int_equal(output_file__commit(&out), -EPIPE);
	close(fds[1]);
	signal(SIGPIPE, pipe_handler);
	free(big);
}

static void abort_leaves_nothing(void **state)
{
	struct output_file out;
	char *dir = temp_dir(), path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	assert_int_equal(output_file__open(path, &out), 0);
	fputs("<svg>", out.stream);
	output_file__abort(&out);
	assert_int_equal(entries(dir), 0);
	rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(committed_file_renamed_into_place),
		cmocka_unit_test(device_error_is_the_failed_writes),
		cmocka_unit_test(regular_file_error_is_the_failed_writes),
		cmocka_unit_test(closed_pipe_is_epipe),
		cmocka_unit_test(abort_leaves_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
