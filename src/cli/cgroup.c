// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel takes the cgroup from the open directory, so what the path
 * looks like from here (inside a cgroup namespace, through a bind mount)
 * does not matter.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cli/cgroup.h"

#define CGROUP2_SUPER_MAGIC 0x63677270

int cgroup__open(const char *path, int *fd)
{
	struct statfs fs;
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return -errno;
	if (fstatfs(dir, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		close(dir);
		return -ENOTDIR;
	}
	*fd = dir;
	return 0;
}
