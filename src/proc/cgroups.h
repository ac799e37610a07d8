/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup v2 ids, as the BPF side reads them (the kernfs node id
 * of the cgroup, which is its directory's inode number on 64-bit kernels),
 * named by their path below the cgroup v2 mount, "/system.slice/cron.service",
 * as /proc/PID/cgroup writes them. The tree is walked once and again on a
 * miss, at most once a second: cgroups come and go with containers and
 * units, and a walk costs a stat per cgroup.
 */
#ifndef OFFCPU_CGROUPS_H
#define OFFCPU_CGROUPS_H

#include <stdint.h>
#include <stdio.h>

#include "lib/strpool.h"

struct cgroups;

/* The mount point of the first cgroup2 line of a mountinfo file; -ENOENT: none. */
int cgroups__find_mount(FILE *mountinfo, char *path, size_t size);
/* root: the cgroup v2 mount (NULL: found in /proc/self/mountinfo); names interned in strings. */
int cgroups__new(const char *root, struct strpool *strings, struct cgroups **out);
void cgroups__free(struct cgroups *c);
/*
 * The path of cgroup id as of now_ns (CLOCK_MONOTONIC); one that no walk
 * found (gone before it was named) is "[cgroup ID]". NULL: out of memory.
 */
const char *cgroups__name(struct cgroups *c, uint64_t id, uint64_t now_ns);
/*
 * For lib/strpool.h's sweep: marks the paths of the cgroups known
 * (an unknown one's name is the caller's to hold); NULL is fine.
 */
void cgroups__mark_strings(const struct cgroups *c, struct strpool *strings);

#endif
