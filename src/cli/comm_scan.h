/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which -c names a running task has now: a name no task has gives an empty
 * recording, and a typo in it should be said at the start, not found in an
 * empty report at the end.
 */
#ifndef OFFCPU_COMM_SCAN_H
#define OFFCPU_COMM_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/*
 * found[i] set if some thread under proc_root ("/proc": each
 * PID/task/TID/comm) is named names[i]; 0, or -errno if proc_root cannot
 * be read.
 */
int comm_scan__running(const char *proc_root, char *const *names, size_t nr, bool *found);

#endif
