// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/comm_scan.h"

/* TASK_COMM_LEN is 16 with its NUL; a read of more says the file is no comm. */
#define COMM_READ 32

static bool numeric(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++) {
		if (!isdigit((unsigned char)*name))
			return false;
	}
	return true;
}

static void mark(int task_dir, const char *tid, char *const *names, size_t nr, bool *found)
{
	char path[NAME_MAX + 8], comm[COMM_READ];
	ssize_t len;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/comm", tid);
	fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* exited since the directory was listed */
	len = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (len <= 0)
		return;
	comm[len] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	for (i = 0; i < nr; i++) {
		if (!strcmp(comm, names[i]))
			found[i] = true;
	}
}

static void scan_process(int proc_dir, const char *pid, char *const *names, size_t nr,
			 bool *found)
{
	char path[NAME_MAX + 8];
	struct dirent *e;
	DIR *tasks;
	int fd;

	snprintf(path, sizeof(path), "%s/task", pid);
	fd = openat(proc_dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	tasks = fdopendir(fd);
	if (!tasks) {
		close(fd);
		return;
	}
	while ((e = readdir(tasks))) {
		if (numeric(e->d_name))
			mark(dirfd(tasks), e->d_name, names, nr, found);
	}
	closedir(tasks);
}

int comm_scan__running(const char *proc_root, char *const *names, size_t nr, bool *found)
{
	struct dirent *e;
	DIR *proc;

	memset(found, 0, nr * sizeof(*found));
	proc = opendir(proc_root);
	if (!proc)
		return -errno;
	while ((e = readdir(proc))) {
		if (numeric(e->d_name))
			scan_process(dirfd(proc), e->d_name, names, nr, found);
	}
	closedir(proc);
	return 0;
}
