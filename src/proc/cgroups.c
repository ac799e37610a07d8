// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash_table.h"
#include "proc/cgroups.h"

/* A miss walks the tree again, at most this often. */
#define RESCAN_NS 1000000000ULL
/* Deeper than any hierarchy systemd or a container runtime makes. */
#define MAX_DEPTH 32
/* Past this many cgroups a walk stops: the rest are named by id. */
#define MAX_CGROUPS 65536

struct cgroup_name {
	uint64_t id;
	const char *path; /* interned */
};

struct cgroups {
	char *root;
	struct strpool *strings;
	struct hash_table *names; /* id -> cgroup_name */
	uint64_t last_walk_ns;
	bool walked;
};

static uint64_t hash_id(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(uint64_t), 0);
}

static bool equal_id(const void *a, const void *b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

/*
 * Where cgroup2 is mounted: /sys/fs/cgroup on a unified system,
 * /sys/fs/cgroup/unified in systemd's hybrid mode (this VM), where
 * /sys/fs/cgroup itself is a tmpfs whose inode numbers mean nothing here.
 */
int cgroups__find_mount(FILE *mountinfo, char *path, size_t size)
{
	char line[4096], point[4096], *dash;

	while (fgets(line, sizeof(line), mountinfo)) {
		dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		/* ID PARENT MAJ:MIN ROOT MOUNT_POINT ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
			continue;
		if (strlen(point) >= size)
			return -ENAMETOOLONG;
		memcpy(path, point, strlen(point) + 1);
		return 0;
	}
	return -ENOENT;
}

int cgroups__new(const char *root, struct strpool *strings, struct cgroups **out)
{
	struct cgroups *c = calloc(1, sizeof(*c));
	char mount[4096] = "/sys/fs/cgroup";
	FILE *mountinfo;

	if (!c)
		return -ENOMEM;
	if (!root) {
		mountinfo = fopen("/proc/self/mountinfo", "re");
		if (mountinfo) {
			cgroups__find_mount(mountinfo, mount, sizeof(mount));
			fclose(mountinfo);
		}
		root = mount;
	}
	c->root = strdup(root);
	c->strings = strings;
	c->names = hash_table__new(hash_id, equal_id);
	if (!c->root || !c->names) {
		cgroups__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void cgroups__free(struct cgroups *c)
{
	if (!c)
		return;
	hash_table__free_values(c->names, free);
	free(c->root);
	free(c);
}

static int add(struct cgroups *c, uint64_t id, const char *path)
{
	struct cgroup_name *n = hash_table__find(c->names, &id);

	if (n) {
		n->path = strpool__intern(c->strings, path);
		return n->path ? 0 : -ENOMEM;
	}
	if (hash_table__size(c->names) >= MAX_CGROUPS)
		return -ENOSPC;
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->id = id;
	n->path = strpool__intern(c->strings, path);
	if (!n->path || hash_table__insert(c->names, &n->id, n)) {
		free(n);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Every directory below dirfd, whose path is path (len bytes, "" for the
 * root), on the cgroup2 filesystem dev (a mount below is another's inodes).
 */
static int walk(struct cgroups *c, int dirfd, dev_t dev, char *path, size_t len, size_t size,
		int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int err = 0, fd;

	dir = fdopendir(dirfd);
	if (!dir) {
		close(dirfd);
		return 0;
	}
	while (!err && (e = readdir(dir))) {
		size_t n;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n = strlen(e->d_name);
		if (len + 1 + n + 1 > size)
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || st.st_dev != dev) {
			close(fd);
			continue;
		}
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, n + 1);
		err = add(c, (uint64_t)st.st_ino, path);
		if (!err && depth < MAX_DEPTH)
			err = walk(c, fd, dev, path, len + 1 + n, size, depth + 1);
		else
			close(fd);
		path[len] = '\0';
	}
	closedir(dir);
	return err == -ENOSPC ? 0 : err;
}

/* A new table each walk: cgroups removed since leave it, so it follows the live ones. */
static int walk_all(struct cgroups *c)
{
	struct hash_table *fresh = hash_table__new(hash_id, equal_id);
	char path[4096] = "";
	struct stat st;
	int fd;

	if (!fresh)
		return -ENOMEM;
	hash_table__free_values(c->names, free);
	c->names = fresh;
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	if (add(c, (uint64_t)st.st_ino, "/")) {
		close(fd);
		return -ENOMEM;
	}
	return walk(c, fd, st.st_dev, path, 0, sizeof(path), 0);
}

void cgroups__mark_strings(const struct cgroups *c, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;

	while (c && hash_table__next(c->names, &it, NULL, &value))
		strpool__mark(strings, ((const struct cgroup_name *)value)->path);
}

const char *cgroups__name(struct cgroups *c, uint64_t id, uint64_t now_ns)
{
	struct cgroup_name *n = hash_table__find(c->names, &id);
	char unknown[48];

	if (n)
		return n->path;
	if (!c->walked || now_ns - c->last_walk_ns >= RESCAN_NS) {
		c->walked = true;
		c->last_walk_ns = now_ns;
		if (walk_all(c))
			return NULL;
		n = hash_table__find(c->names, &id);
		if (n)
			return n->path;
	}
	snprintf(unknown, sizeof(unknown), "[cgroup %" PRIu64 "]", id);
	return strpool__intern(c->strings, unknown);
}
