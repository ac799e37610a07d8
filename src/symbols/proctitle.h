/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's title: its /proc/PID/cmdline as a line of text. Servers set
 * it to say what a process is ("postgres: checkpointer", "postgres: alice
 * bench [local] UPDATE"), which comm (15 bytes, "postgres") cannot.
 */
#ifndef OFFCPU_PROCTITLE_H
#define OFFCPU_PROCTITLE_H

#include <stddef.h>

/*
 * From cmdline bytes: arguments joined by spaces, control bytes as '?',
 * trailing blanks dropped, cut to out_size - 1. Returns the length; 0 when
 * there is nothing to say (a kernel thread).
 */
size_t proctitle__from_cmdline(const char *cmdline, size_t len, char *out, size_t out_size);
/* Reads it for pid; 0 when the process is gone or has none. */
size_t proctitle__read(int pid, char *out, size_t out_size);

#endif
