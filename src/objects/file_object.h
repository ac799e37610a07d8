/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file a wait in a call on one fd waited on, named from what BPF read
 * of its struct file at the switch-in (struct offcpu_file): a pipe by its
 * inode, a socket by its addresses, a FIFO or a file by its path. The fd
 * was the thread's only while it waited: a path read from /proc since is
 * trusted only where it still leads to the inode BPF read, on its device;
 * nothing is kept by fd number.
 */
#ifndef OFFCPU_FILE_OBJECT_H
#define OFFCPU_FILE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "objects/objects.h"
#include "offcpu.h"

/*
 * Names f, taken from a wait of pid in the system call nr, into out (kind,
 * name; failed when a read or check the name needed failed, and it fell
 * back to the inode: "file:[INODE]"). proc is "/proc", or a tree laid out
 * as it is for a test.
 */
void file_object__name(const char *proc, uint32_t pid, uint32_t nr, const struct offcpu_file *f,
		       struct object_name *out);

/*
 * An internet socket's "tcp 127.0.0.1:40122 -> 127.0.0.1:5432" ("tcp6",
 * "[::1]:5432"; the local end alone while it listens or has no peer);
 * false for any other family.
 */
bool file_object__inet_name(const struct offcpu_file *f, char *buf, size_t size);

/*
 * The path of the unix socket with inode ino in /proc/PID/net/unix
 * (abstract names start with '@'): 0; -ENOENT if it has none or is not
 * there; -EEXIST if two lines claim it (a path with a line end forged one).
 */
int file_object__unix_path(FILE *net_unix, uint64_t ino, char *buf, size_t size);

/*
 * The fds an epoll watches, from its /proc/PID/fdinfo/FD ("tfd:" lines):
 * 0; -ESTALE if its "ino:" is not ino (the fd holds another file now).
 */
int file_object__epoll_fds(FILE *fdinfo, uint64_t ino, uint32_t *count);

#endif
