/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files a traced process names, opened as that process sees them: inside
 * its root (/proc/PID/root), with every symlink on the way resolved inside
 * that root too, so a container cannot point offcpu at the host's files.
 */
#ifndef OFFCPU_PROC_ROOT_H
#define OFFCPU_PROC_ROOT_H

#include <stdint.h>

/*
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) of path under the
 * process's root; flags as for open(). -errno on failure.
 */
int proc_root__open(uint32_t pid, const char *path, int flags);

#endif
