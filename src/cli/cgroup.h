/* SPDX-License-Identifier: GPL-2.0 */
/* The --cgroup directory, for the BPF side's cgroup array. */
#ifndef OFFCPU_CGROUP_H
#define OFFCPU_CGROUP_H

/*
 * Opens path if it is a cgroup v2 directory: *fd, to close once the tracer
 * has it. -ENOTDIR if path is something else, or -errno.
 */
int cgroup__open(const char *path, int *fd);

#endif
