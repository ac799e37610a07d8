/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files a traced process names, opened as that process sees them: inside
 * its root (/proc/PID/root), with every symlink on the way resolved inside
 * that root too, so a container cannot point offcpu at the host's files;
 * and only where that process may read them itself (proc/proc_creds.h).
 */
#ifndef OFFCPU_PROC_ROOT_H
#define OFFCPU_PROC_ROOT_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/proc_creds.h"

/*
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) of path under the
 * process's root; flags as for open(). -EACCES where creds may not read
 * the file opened, -errno on other failures.
 */
int proc_root__open_as(uint32_t pid, const struct proc_creds *creds, const char *path, int flags);

/* proc_root__open_as with the process's credentials as they are now. */
int proc_root__open(uint32_t pid, const char *path, int flags);

/*
 * Whether /proc/PID is no more (the process exited and was reaped): then
 * no file can be opened through it, which says nothing of the file.
 */
bool proc_root__gone(uint32_t pid);

#endif
