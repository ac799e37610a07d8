// SPDX-License-Identifier: GPL-2.0
/*
 * The formats by name and by extension, and every format on a
 * 100,000-frame stack. The output file: the error a failed write had is
 * the one reported; the destination is decided without following a
 * symbolic link in its last component, and nothing is written through one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/array.h"
#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void formats_by_name_and_extension(void **state)
{
	(void)state;
	assert_string_equal(output_format__by_name("json")->name, "json");
	assert_null(output_format__by_name("xml"));
	assert_string_equal(output_format__by_path("out.folded")->name, "folded");
	assert_string_equal(output_format__by_path("/tmp/a.b/out.json")->name, "json");
	assert_string_equal(output_format__by_path("report.txt")->name, "text");
	assert_null(output_format__by_path("out.data"));
	/* A hidden file named ".json" has no extension. */
	assert_null(output_format__by_path(".json"));
	/* The longer extension wins, wherever the table lists it. */
	assert_string_equal(output_format__by_path("run.trace.json")->name, "trace");
	assert_string_equal(output_format__by_path("trace.json")->name, "json");
	assert_string_equal(output_format__by_name("trace")->name, "trace");
}
/*
 * A stack as deep as a recording may say: 100,000 frames. No format walks
 * it by recursion (the SVG's tree did, and overflowed the stack); each
 * writes it whole.
 */
#define DEEP_FRAMES 100000

static void deep_stack_in_every_format(void **state)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_opts *) = {
		output_text__write, output_folded__write, output_svg__write,
		output_json__write, output_pprof__write,
	};
	struct frame *frames = calloc(DEEP_FRAMES, sizeof(*frames));
	struct profile *p;
	struct wait w;
	char name[32], *text;
	size_t i, len;

	(void)state;
	assert_non_null(frames);
	assert_int_equal(profile__new(true, &p), 0);
	for (i = 0; i < DEEP_FRAMES; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		frames[i] = uframe(p, 0x1000 + i, name);
	}
	w = a_wait(p, "deep", "sleep");
	w.pid = w.tid = 5;
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.user_stack = profile__intern_stack(p, frames, DEEP_FRAMES);
	w.duration_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);
	for (i = 0; i < ARRAY_SIZE(writers); i++) {
		if (writers[i] == output_pprof__write) {
			uint8_t *pb = pprof_of(p, &len);

			/* A location and a function for every frame. */
			assert_true(len > 2 * DEEP_FRAMES);
			free(pb);
			continue;
		}
		text = render(writers[i], p);
		assert_true(strlen(text) > DEEP_FRAMES);
		if (writers[i] == output_svg__write) {
			/* all, sleep, [interruptible], deep and every frame */
			assert_int_equal(count_of(text, "<g class=\"f\" data-"), DEEP_FRAMES + 4);
			assert_non_null(strstr(text, "data-d=\"100003\""));
		}
		if (writers[i] == output_folded__write)
			assert_non_null(
			    strstr(text, "deep;[interruptible];[sleep];f99999;f99998;"));
		free(text);
	}
	free(frames);
	profile__free(p);
}

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

static void remove_tree(char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static void read_file(const char *path, char *text, size_t size)
{
	FILE *in = fopen(path, "r");
	size_t n;

	assert_non_null(in);
	n = fread(text, 1, size - 1, in);
	text[n] = '\0';
	fclose(in);
}

/* A kill (SIGKILL, the OOM killer) while writing leaves no name behind. */
static void nothing_named_until_committed(void **state)
{
	mode_t saved = umask(022);
	struct output_file out;
	char *dir = temp_dir(), path[256], text[16];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	assert_int_equal(output_file__open(path, &out), 0);
	fputs("<svg>", out.stream);
	fflush(out.stream);
	assert_int_equal(entries(dir), 0);
	assert_int_equal(output_file__commit(&out), 0);
	umask(saved);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "<svg>");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* Replaced whole: a reader of the old file still reads the old one. */
static void existing_file_replaced_not_truncated(void **state)
{
	struct output_file out;
	char *dir = temp_dir(), path[256], text[16];
	FILE *old;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	old = fopen(path, "w+");
	assert_non_null(old);
	fputs("old\n", old);
	fflush(old);
	assert_int_equal(output_file__open(path, &out), 0);
	fputs("new\n", out.stream);
	assert_int_equal(output_file__commit(&out), 0);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "new\n");
	rewind(old);
	assert_non_null(fgets(text, sizeof(text), old));
	assert_string_equal(text, "old\n");
	fclose(old);
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

static void check_refused(const char *path)
{
	struct output_file out;

	assert_int_equal(output_file__open(path, &out), -EINVAL);
	assert_non_null(out.refused);
	assert_null(out.stream);
}

/*
 * A link planted where root writes its report must not turn the report
 * into a write to a device: a link to anything but a regular file is
 * neither followed nor replaced.
 */
static void link_to_device_or_fifo_refused(void **state)
{
	char *dir = temp_dir(), path[256], target[256], buf[16];
	struct output_file out;
	struct stat st;
	int reader;

	(void)state;
	snprintf(path, sizeof(path), "%s/to-null.txt", dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	check_refused(path);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* Named directly, the same device is written in place. */
	assert_int_equal(output_file__open("/dev/null", &out), 0);
	fputs("gone\n", out.stream);
	assert_int_equal(output_file__commit(&out), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));

	snprintf(target, sizeof(target), "%s/fifo", dir);
	assert_int_equal(mkfifo(target, 0600), 0);
	reader = open(target, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	snprintf(path, sizeof(path), "%s/to-fifo.json", dir);
	assert_int_equal(symlink(target, path), 0);
	check_refused(path);
	assert_true(read(reader, buf, sizeof(buf)) <= 0);
	close(reader);
	remove_tree(dir);
}

/* Not written, through a link or named: the node is refused for what it is. */
static void block_device_refused(void **state)
{
	char *dir, path[256], target[256];
	struct stat st;

	(void)state;
	if (geteuid())
		skip(); /* mknod of a device needs root */
	dir = temp_dir();
	/* The loop device 200 need not exist. */
	snprintf(target, sizeof(target), "%s/disk", dir);
	assert_int_equal(mknod(target, S_IFBLK | 0600, makedev(7, 200)), 0);
	snprintf(path, sizeof(path), "%s/to-disk.txt", dir);
	assert_int_equal(symlink(target, path), 0);
	check_refused(path);
	check_refused(target);
	assert_int_equal(stat(target, &st), 0);
	assert_true(S_ISBLK(st.st_mode));
	remove_tree(dir);
}

/*
 * /dev/stdout and /proc/self/fd/N name a descriptor: written through it,
 * as '-' is, never by a rename over the link (which replaced the system's
 * /dev/stdout with a regular file).
 */
static void descriptor_paths_written_by_descriptor(void **state)
{
	char *dir = temp_dir(), path[256], link[64], text[32];
	const char *forms[] = { "/proc/self/fd/%d", "/dev/fd/%d" };
	struct output_file out;
	size_t i;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/cap.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "head\n", 5), 5);
	for (i = 0; i < ARRAY_SIZE(forms); i++) {
		snprintf(link, sizeof(link), forms[i], fd);
		assert_int_equal(output_file__open(link, &out), 0);
		fputs(i ? "two\n" : "one\n", out.stream);
		assert_int_equal(output_file__commit(&out), 0);
	}
	/* Still open: the caller's descriptor is not closed with the stream. */
	assert_int_equal(write(fd, "tail\n", 5), 5);
	close(fd);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "head\none\ntwo\ntail\n");
	assert_int_equal(entries(dir), 1);

	/* One not open for writing is refused at once, not at the first write. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	assert_int_equal(output_file__open(link, &out), -EBADF);
	close(fd);
	assert_int_equal(output_file__open("/proc/self/fd/999", &out), -EBADF);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* Replacing it needs CAP_FOWNER, which tracing has dropped by the time of the commit. */
static void another_users_file_in_sticky_directory_refused(void **state)
{
	struct output_file out;
	char *dir, path[256];

	(void)state;
	if (geteuid())
		skip(); /* giving a file to another user needs root */
	dir = temp_dir();
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	snprintf(path, sizeof(path), "%s/theirs.txt", dir);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(chown(path, 65534, 65534), 0);
	check_refused(path);
	/* Ours: replaced as any file. */
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(output_file__open(path, &out), 0);
	assert_int_equal(output_file__commit(&out), 0);
	remove_tree(dir);
}

/* The temporary name is made to fit NAME_MAX however long the file's is. */
static void longest_names_written(void **state)
{
	struct output_file out;
	char *dir = temp_dir(), path[512], name[NAME_MAX + 1];
	int round;

	(void)state;
	memset(name, 'a', NAME_MAX);
	name[NAME_MAX] = '\0';
	memcpy(name + NAME_MAX - 4, ".txt", 4);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* New, then replacing what the first round wrote. */
	for (round = 0; round < 2; round++) {
		assert_int_equal(output_file__open(path, &out), 0);
		fputs("profile\n", out.stream);
		assert_int_equal(output_file__commit(&out), 0);
		assert_int_equal(access(path, F_OK), 0);
		assert_int_equal(entries(dir), 1);
	}
	unlink(path);
	rmdir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats_by_name_and_extension),
		cmocka_unit_test(deep_stack_in_every_format),
		cmocka_unit_test(committed_file_renamed_into_place),
		cmocka_unit_test(device_error_is_the_failed_writes),
		cmocka_unit_test(regular_file_error_is_the_failed_writes),
		cmocka_unit_test(closed_pipe_is_epipe),
		cmocka_unit_test(abort_leaves_nothing),
		cmocka_unit_test(nothing_named_until_committed),
		cmocka_unit_test(existing_file_replaced_not_truncated),
		cmocka_unit_test(link_to_device_or_fifo_refused),
		cmocka_unit_test(block_device_refused),
		cmocka_unit_test(descriptor_paths_written_by_descriptor),
		cmocka_unit_test(longest_names_written),
		cmocka_unit_test(another_users_file_in_sticky_directory_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
