/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who a process is and whether it still runs, from one read of
 * /proc/PID/stat: its state, its threads and its start time.
 */
#ifndef OFFCPU_PROC_STAT_H
#define OFFCPU_PROC_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc_stat {
	char state;	      /* field 3: 'R', 'S', 'D', 'Z'... */
	uint32_t threads;     /* field 20, num_threads */
	uint64_t start_ticks; /* field 22, starttime: clock ticks after boot */
};

/* One /proc/PID/stat line (the comm may hold spaces and parentheses): 0 or -EINVAL. */
int proc_stat__parse(const char *buf, size_t len, struct proc_stat *out);
/* 0, or -ENOENT when /proc/PID is no more, or another -errno. */
int proc_stat__read(uint32_t pid, struct proc_stat *out);
/*
 * Whether the process has exited: a zombie whose threads are all gone. A
 * thread group leader that exited before its other threads is a zombie
 * too (seen: 'Z' with 2 threads), while the process runs on.
 */
bool proc_stat__exited(const struct proc_stat *st);
/*
 * Whether pid can no longer open a file through /proc/PID: reaped, or
 * exited and not yet reaped (a zombie keeps /proc/PID, not its map_files
 * or root). A file it failed to open then says nothing of the file.
 */
bool proc_stat__pid_exited(uint32_t pid);

#endif
