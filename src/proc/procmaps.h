/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/PID/maps: the parser takes a line or a FILE, so fixtures feed it. */
#ifndef OFFCPU_PROCMAPS_H
#define OFFCPU_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t file_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool executable;
	char *path; /* "" for anonymous memory, "[vdso]" and such for specials */
};

struct proc_maps {
	struct proc_map *maps;
	size_t nr;
};

/* Fills map from one line; map->path points into a new string. */
int procmaps__parse_line(const char *line, struct proc_map *map);
/* Keeps only executable mappings, sorted by address as the kernel lists them. */
int procmaps__read(FILE *file, struct proc_maps *out);
int procmaps__read_pid(int pid, struct proc_maps *out);
/* Every mapping, data and anonymous memory too: what an address of a lock is in. */
int procmaps__read_all(FILE *file, struct proc_maps *out);
int procmaps__read_pid_all(int pid, struct proc_maps *out);
const struct proc_map *procmaps__find(const struct proc_maps *maps, uint64_t addr);
/*
 * The very file process pid mapped at map, read-only: through
 * /proc/PID/map_files (in another mount namespace, or deleted and replaced
 * on disk since); failing that, if by_name, by its path inside the
 * process's root without following a last symlink (proc_root.h), which may
 * be another file by now. -errno on failure.
 */
int procmaps__open_file(uint32_t pid, const struct proc_map *map, bool by_name);
void procmaps__free(struct proc_maps *maps);

#endif
