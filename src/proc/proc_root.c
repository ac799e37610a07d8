// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc_root.h"

int proc_root__open_as(uint32_t pid, const struct proc_creds *creds, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags | O_CLOEXEC,
		/*
		 * Absolute symlinks inside the container must mean its "/", not
		 * ours: a plain open() of /proc/PID/root/x resolves them on the host.
		 */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root_path[32];
	struct stat st;
	int root, fd;

	snprintf(root_path, sizeof(root_path), "/proc/%u/root", pid);
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(root);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !proc_creds__may_read(creds, &st)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

int proc_root__open(uint32_t pid, const char *path, int flags)
{
	struct proc_creds creds;
	int err = proc_creds__read(pid, &creds);

	return err ? err : proc_root__open_as(pid, &creds, path, flags);
}

bool proc_root__gone(uint32_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return access(path, F_OK) && errno == ENOENT;
}
