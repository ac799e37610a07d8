/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The executable a pprof profile names as its main binary. go tool pprof
 * titles a profile by its first mapping ("File: sleep"), as Go's own
 * profiles name the program they profiled: the traced program, or else the
 * program that made the profile, offcpu.
 */
#ifndef OFFCPU_MAIN_BINARY_H
#define OFFCPU_MAIN_BINARY_H

#include <stddef.h>

#include "lib/parse.h"

/*
 * Into buf: COMMAND's executable as execvp(3) finds it, symbolic links
 * resolved as /proc/PID/maps names it; else the executable of the one
 * process of pids; else offcpu's own. "" if none can be read.
 */
void main_binary__find(char *const *command, const struct id_list *pids, char *buf, size_t size);
/* As execvp(3) searches: a name with a '/' as it is, else the first executable in PATH. */
int main_binary__search_path(const char *name, const char *path_env, char *buf, size_t size);

#endif
