/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What python_elf__read found in each file, by device, inode,
 * size and modification time: system wide, every process is looked at
 * when it execs and at its first wait, and nearly all run one of a few
 * executables. python__detect of a process running bash, measured: 90 us
 * with bash's .dynsym parsed each time, 60 with it remembered (/bin/sleep:
 * 58 and 52); the rest is its /proc/PID/maps and the files opened.
 */
#ifndef OFFCPU_PYTHON_FILES_H
#define OFFCPU_PYTHON_FILES_H

#include "python/python_elf.h"
#include "symbols/limits.h"

struct python_files;

struct python_files *python_files__new(void);
void python_files__free(struct python_files *files);
/* python_elf__read of the file open at fd, read once per version of the file. */
int python_files__read(struct python_files *files, int fd, const struct symbol_limits *limits,
		       struct python_elf *out);

#endif
