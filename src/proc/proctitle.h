/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's title: its /proc/PID/cmdline as a line of text. Servers set
 * it to say what a process is ("postgres: checkpointer", "postgres: alice
 * bench [local] UPDATE"), which comm (15 bytes, "postgres") cannot.
 */
#ifndef OFFCPU_PROCTITLE_H
#define OFFCPU_PROCTITLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A live process's title is read again at most this often: a server
 * retitles itself as it works (a PostgreSQL backend per statement:
 * "... UPDATE waiting", "... idle"), and a read is an open and a read of
 * /proc/PID/cmdline.
 */
#define PROCTITLE_REFRESH_NS (100 * 1000 * 1000ULL)

/* When a process's title was last read. */
struct proctitle_age {
	uint64_t read_ns;
	bool read;
};

/*
 * From cmdline bytes: arguments joined by spaces, control bytes as '?',
 * trailing blanks dropped, cut to out_size - 1. Returns the length; 0 when
 * there is nothing to say (a kernel thread).
 */
size_t proctitle__from_cmdline(const char *cmdline, size_t len, char *out, size_t out_size);
/* Reads it for pid; 0 when the process is gone or has none. */
size_t proctitle__read(int pid, char *out, size_t out_size);
/*
 * Whether the title is due for a read at now_ns (never read, or read
 * PROCTITLE_REFRESH_NS before); if so, counts it as read then.
 */
bool proctitle__due(struct proctitle_age *age, uint64_t now_ns);

#endif
