// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc_root.h"
#include "proc/procmaps.h"

/* "start-end perms offset major:minor inode   path" */
int procmaps__parse_line(const char *line, struct proc_map *map)
{
	char perms[5] = "";
	int path_at = -1;
	size_t len;

	memset(map, 0, sizeof(*map));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &map->start, &map->end, perms, &map->file_offset, &map->dev_major,
		   &map->dev_minor, &map->inode, &path_at) < 7)
		return -EINVAL;
	if (map->end <= map->start || strlen(perms) != 4)
		return -EINVAL;
	map->executable = perms[2] == 'x';
	if (path_at < 0)
		path_at = (int)strlen(line);
	len = strcspn(line + path_at, "\n");
	map->path = strndup(line + path_at, len);
	return map->path ? 0 : -ENOMEM;
}

static int read_maps(FILE *file, bool all, struct proc_maps *out)
{
	struct proc_maps maps = { 0 };
	size_t cap = 0, size = 0;
	char *line = NULL;
	int err = 0;

	while (getline(&line, &size, file) > 0) {
		struct proc_map map;

		err = procmaps__parse_line(line, &map);
		if (err)
			break;
		if (!all && !map.executable) {
			free(map.path);
			continue;
		}
		if (maps.nr == cap) {
			struct proc_map *grown;

			cap = cap ? cap * 2 : 32;
			grown = realloc(maps.maps, cap * sizeof(*grown));
			if (!grown) {
				free(map.path);
				err = -ENOMEM;
				break;
			}
			maps.maps = grown;
		}
		maps.maps[maps.nr++] = map;
	}
	free(line);
	if (err) {
		procmaps__free(&maps);
		return err;
	}
	*out = maps;
	return 0;
}

int procmaps__read(FILE *file, struct proc_maps *out)
{
	return read_maps(file, false, out);
}

int procmaps__read_all(FILE *file, struct proc_maps *out)
{
	return read_maps(file, true, out);
}

static int read_pid(int pid, bool all, struct proc_maps *out)
{
	char path[64];
	FILE *file;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	file = fopen(path, "re");
	if (!file)
		return -errno;
	err = read_maps(file, all, out);
	fclose(file);
	return err;
}

int procmaps__read_pid(int pid, struct proc_maps *out)
{
	return read_pid(pid, false, out);
}

int procmaps__read_pid_all(int pid, struct proc_maps *out)
{
	return read_pid(pid, true, out);
}

const struct proc_map *procmaps__find(const struct proc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_map *m = &maps->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

int procmaps__open_file(uint32_t pid, const struct proc_map *map, bool by_name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, map->start,
		 map->end);
	/* O_NONBLOCK, as by name: that file may have been swapped for a FIFO since. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		/*
		 * The very file mapped, yet not always one the process may read:
		 * the kernel maps an executable it may only run (mode 0711).
		 */
		int err = proc_creds__check_fd(pid, fd);

		if (err) {
			close(fd);
			return err;
		}
		return fd;
	}
	if (!by_name || map->path[0] != '/')
		return -errno;
	return proc_root__open(pid, map->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
}

void procmaps__free(struct proc_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->nr; i++)
		free(maps->maps[i].path);
	free(maps->maps);
	maps->maps = NULL;
	maps->nr = 0;
}
