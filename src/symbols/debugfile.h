/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the separate debug file of an ELF file stripped of its symbols or
 * DWARF, where distributions and GDB put them: by build ID under the debug
 * root (/usr/lib/debug/.build-id/ab/cdef....debug, Debian's -dbg and
 * -dbgsym packages), else by its .gnu_debuglink name. A candidate counts
 * only if it is the file's own: the same build ID, or for a file without
 * one, the CRC32 that .gnu_debuglink gives.
 *
 * The debug link is the traced process's to choose, and so is what lies
 * beside its file: a candidate is opened without following a symlink or
 * blocking on a FIFO, and read only if it is a regular file no larger
 * than the limit, owned by root or by the file's owner, and one found by
 * its link inside the process's root only if the process may read it
 * itself (proc_root.h); reading it for its CRC32 is paid from the file's
 * read budget.
 */
#ifndef OFFCPU_DEBUGFILE_H
#define OFFCPU_DEBUGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_file.h"
#include "symbols/elf_section.h"

/* Where Debian's -dbg and -dbgsym packages put separate debug files, and dwz its alt files. */
#define DEBUG_ROOT "/usr/lib/debug"
/* A build ID's path under it, and room enough for the longest. */
#define DEBUG_BUILD_ID_PATH_MAX (sizeof(DEBUG_ROOT "/.build-id/") + 2 * ELF_BUILD_ID_MAX + 16)

/*
 * path gets /usr/lib/debug/.build-id/ab/cdef....debug for the id of len
 * bytes (2 to ELF_BUILD_ID_MAX); -EINVAL for another length.
 */
int debugfile__build_id_path(const unsigned char *id, size_t len,
			     char path[DEBUG_BUILD_ID_PATH_MAX]);
/*
 * An open fd of f's verified debug file (the caller closes it), or a
 * negative errno: -ENOENT when there is none. path (NULL: no debug link
 * is followed) is f's file name inside the root of process pid (0:
 * offcpu's own root): its debug link is looked up beside it there.
 */
int debugfile__open(struct elf_file *f, uint32_t pid, const char *path);

#endif
