// SPDX-License-Identifier: GPL-2.0
/* A process's credentials from /proc/PID/status, and what they may read by a file's mode. */
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

#include "proc/proc_creds.h"

/* The lines that matter of a status as 6.18 writes it, real and fs IDs told apart. */
static const char status_text[] = "Name:\tleakproc\n"
				  "Umask:\t0022\n"
				  "State:\tS (sleeping)\n"
				  "Tgid:\t4242\n"
				  "NSpid:\t4242\t17\n"
				  "Uid:\t1000\t1000\t1000\t1001\n"
				  "Gid:\t100\t100\t100\t101\n"
				  "FDSize:\t64\n"
				  "Groups:\t24 27 1000 \n"
				  "VmPeak:\t    2400 kB\n";

static int parse(const char *text, struct proc_creds *creds)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = proc_creds__parse(f, creds);
	fclose(f);
	return err;
}

static void ids_groups_and_namespace_pid(void **state)
{
	struct proc_creds c;

	(void)state;
	assert_int_equal(parse(status_text, &c), 0);
	assert_int_equal(c.uid, 1000);
	assert_int_equal(c.fsuid, 1001);
	assert_int_equal(c.fsgid, 101);
	assert_int_equal(c.nr_groups, 3);
	assert_int_equal(c.groups[0], 24);
	assert_int_equal(c.groups[2], 1000);
	assert_false(c.groups_cut);
	assert_int_equal(c.ns_pid, 17);
}

static void missing_lines_are_an_error(void **state)
{
	struct proc_creds c;

	(void)state;
	assert_int_equal(parse("Name:\tx\nUid:\t1\t1\t1\t1\n", &c), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\n", &c), -EINVAL);
	assert_int_equal(parse("", &c), -EINVAL);
	/* No groups at all is a line of its own, and no NSpid (before 4.1) says -1. */
	assert_int_equal(parse("Uid:\t5\t5\t5\t5\nGid:\t5\t5\t5\t5\nGroups:\n", &c), 0);
	assert_int_equal(c.nr_groups, 0);
	assert_int_equal(c.ns_pid, -1);
}

static void more_groups_than_kept(void **state)
{
	char text[4096] = "Uid:\t7\t7\t7\t7\nGid:\t7\t7\t7\t7\nGroups:\t";
	struct proc_creds c;
	int i;

	(void)state;
	for (i = 0; i < PROC_CREDS_MAX_GROUPS + 5; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d ", 2000 + i);
	strcat(text, "\n");
	assert_int_equal(parse(text, &c), 0);
	assert_int_equal(c.nr_groups, PROC_CREDS_MAX_GROUPS);
	assert_true(c.groups_cut);
}

static struct stat file(uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_uid = uid;
	st.st_gid = gid;
	st.st_mode = S_IFREG | mode;
	return st;
}

static void read_permission_as_the_kernel_decides(void **state)
{
	struct proc_creds c;
	struct stat st;

	(void)state;
	assert_int_equal(parse(status_text, &c), 0);
	/* Root's file of mode 0600: what a bind mount in a user namespace shows. */
	st = file(0, 0, 0600);
	assert_false(proc_creds__may_read(&c, &st));
	st = file(0, 0, 0644);
	assert_true(proc_creds__may_read(&c, &st));
	/* The fs UID decides, not the real one. */
	st = file(1000, 0, 0600);
	assert_false(proc_creds__may_read(&c, &st));
	st = file(1001, 0, 0600);
	assert_true(proc_creds__may_read(&c, &st));
	/* The owner's bits alone for the owner, even where others may read. */
	st = file(1001, 0, 0044);
	assert_false(proc_creds__may_read(&c, &st));
	/* The group's bits for the fs GID and every supplementary group. */
	st = file(0, 101, 0640);
	assert_true(proc_creds__may_read(&c, &st));
	st = file(0, 27, 0640);
	assert_true(proc_creds__may_read(&c, &st));
	st = file(0, 100, 0640);
	assert_false(proc_creds__may_read(&c, &st));
	/* A member of a group the file shuts out is shut out, others' bits or not. */
	st = file(0, 27, 0604);
	assert_false(proc_creds__may_read(&c, &st));
	/* An executable it may only run. */
	st = file(0, 0, 0711);
	assert_false(proc_creds__may_read(&c, &st));
	/* fs UID 0 reads anything. */
	c.fsuid = 0;
	st = file(1234, 1234, 0000);
	assert_true(proc_creds__may_read(&c, &st));
}

static void groups_cut_short_need_both_bits(void **state)
{
	struct proc_creds c;
	struct stat st;

	(void)state;
	assert_int_equal(parse(status_text, &c), 0);
	c.groups_cut = true;
	st = file(0, 5000, 0604);
	assert_false(proc_creds__may_read(&c, &st));
	st = file(0, 5000, 0644);
	assert_true(proc_creds__may_read(&c, &st));
}

static void own_process(void **state)
{
	struct proc_creds c;

	(void)state;
	assert_int_equal(proc_creds__read((uint32_t)getpid(), &c), 0);
	assert_int_equal(c.fsuid, geteuid());
	assert_int_equal(c.ns_pid, getpid());
	assert_int_equal(proc_creds__read(0x7ffffff0u, &c), -ENOENT);
}

/* A process reaped before its file was checked: what anyone may read, nothing more. */
static void reaped_process_gets_what_anyone_may_read(void **state)
{
	char path[] = "/tmp/offcpu-creds-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(fchmod(fd, 0600), 0);
	assert_int_equal(proc_creds__check_fd(0x7ffffff0u, fd), -EACCES);
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(proc_creds__check_fd(0x7ffffff0u, fd), 0);
	/* This process, alive, reads its own file whatever others may. */
	assert_int_equal(fchmod(fd, 0600), 0);
	assert_int_equal(proc_creds__check_fd((uint32_t)getpid(), fd), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_groups_and_namespace_pid),
		cmocka_unit_test(missing_lines_are_an_error),
		cmocka_unit_test(more_groups_than_kept),
		cmocka_unit_test(read_permission_as_the_kernel_decides),
		cmocka_unit_test(groups_cut_short_need_both_bits),
		cmocka_unit_test(own_process),
		cmocka_unit_test(reaped_process_gets_what_anyone_may_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
