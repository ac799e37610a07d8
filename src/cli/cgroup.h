/* SPDX-License-Identifier: GPL-2.0 */
/* A cgroup v2 directory as the BPF side identifies it. */
#ifndef OFFCPU_CGROUP_H
#define OFFCPU_CGROUP_H

#include <stdint.h>

/* id: the kernfs node ID (the directory's inode); level: depth below the root. */
int cgroup__resolve(const char *path, uint64_t *id, uint32_t *level);

#endif
