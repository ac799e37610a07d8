// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "cli/cgroup.h"

#define CGROUP2_SUPER_MAGIC 0x63677270

int cgroup__resolve(const char *path, uint64_t *id, uint32_t *level)
{
	char resolved[PATH_MAX];
	struct statfs fs;
	struct stat st, parent;
	uint32_t depth = 0;
	char *slash;

	if (!realpath(path, resolved) || stat(resolved, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || statfs(resolved, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	/* Count the parents that are still on the same cgroup2 mount. */
	for (;;) {
		slash = strrchr(resolved, '/');
		if (!slash || slash == resolved)
			break;
		*slash = '\0';
		if (stat(resolved, &parent) || parent.st_dev != st.st_dev)
			break;
		depth++;
	}
	*id = st.st_ino;
	*level = depth;
	return 0;
}
