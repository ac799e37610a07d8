// SPDX-License-Identifier: GPL-2.0
/* offcpu serve's cgroup ids named by their path below the cgroup2 mount. */
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

#include "proc/cgroups.h"

static void mount_found_in_mountinfo(void **state)
{
	/* systemd's hybrid mode: a tmpfs at /sys/fs/cgroup, v1 below it, v2 in unified. */
	static const char hybrid[] =
	    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	static const char none[] = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n";
	char path[64];
	FILE *f;

	(void)state;
	f = fmemopen((void *)hybrid, sizeof(hybrid) - 1, "r");
	assert_int_equal(cgroups__find_mount(f, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup/unified");
	fclose(f);
	f = fmemopen((void *)none, sizeof(none) - 1, "r");
	assert_int_equal(cgroups__find_mount(f, path, sizeof(path)), -ENOENT);
	fclose(f);
}

static uint64_t inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/* A directory tree stands for the cgroup2 mount: ids are inode numbers. */
static void ids_named_by_path(void **state)
{
	char root[] = "/tmp/offcpu-cgroups-XXXXXX", path[128], deep[160];
	struct strpool *pool = strpool__new();
	struct cgroups *c;
	uint64_t unit;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/system.slice", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(deep, sizeof(deep), "%s/system.slice/cron.service", root);
	assert_int_equal(mkdir(deep, 0755), 0);
	unit = inode_of(deep);
	assert_int_equal(cgroups__new(root, pool, &c), 0);
	assert_string_equal(cgroups__name(c, unit, 1), "/system.slice/cron.service");
	assert_string_equal(cgroups__name(c, inode_of(path), 1), "/system.slice");
	assert_string_equal(cgroups__name(c, inode_of(root), 1), "/");
	/* Made after the walk: a miss walks again, at most once a second. */
	snprintf(path, sizeof(path), "%s/new", root);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(strncmp(cgroups__name(c, inode_of(path), 2), "[cgroup ", 8), 0);
	assert_string_equal(cgroups__name(c, inode_of(path), 2000000000ULL), "/new");
	cgroups__free(c);
	rmdir(path);
	rmdir(deep);
	snprintf(path, sizeof(path), "%s/system.slice", root);
	rmdir(path);
	rmdir(root);
	strpool__free(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mount_found_in_mountinfo),
		cmocka_unit_test(ids_named_by_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
