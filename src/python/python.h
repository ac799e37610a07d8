/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython processes and their frames. Finds CPython in a
 * process (its executable or a libpython exporting _PyRuntime, whatever
 * the command is called), gives the layout its BPF walk needs, and names
 * the frames that walk sends: each code object read from /proc/PID/mem
 * the first time it is seen (so a process that exits later is still
 * named), cached per process and address, and read again when the object
 * at that address is no longer the one read (freed, another allocated
 * there).
 */
#ifndef OFFCPU_PYTHON_H
#define OFFCPU_PYTHON_H

#include <linux/types.h>
#include <stdint.h>

#include "lib/strpool.h"
#include "offcpu.h"
#include "proc/procmaps.h"
#include "profile/frame.h"
#include "python/python_code.h"
#include "python/python_layout.h"
#include "symbols/limits.h"

struct python;

/* What the frames of a python record name: kind "python" (frame.h). */
#define PYTHON_FRAME_KIND "python"

int python__new(struct strpool *strings, const struct symbol_limits *limits, struct python **out);
void python__free(struct python *py);

/*
 * Looks for CPython in process pid, whose executable mappings are maps
 * (the symbolizer's read: NULL when none could be read), once per image:
 * again only after python__forget. 0 and its walk's layout in *out;
 * -ENOENT when it runs no CPython this knows (or not yet: its libraries
 * are not mapped).
 */
int python__detect(struct python *py, uint32_t pid, const struct proc_maps *maps,
		   struct offcpu_python_layout *out);
/* A forked child runs its parent's interpreter at the same addresses. */
void python__fork(struct python *py, uint32_t parent_pid, uint32_t child_pid);
/* A new image, or the process is gone: its layout and code objects too. */
void python__forget(struct python *py, uint32_t pid);

/*
 * Names the frames of r into out (at most max), leaf first, kind
 * PYTHON_FRAME_KIND: sym the qualified name, file and line from the code
 * object. A frame whose code object cannot be read has no sym, and counts
 * in *unnamed. Returns the number of frames.
 */
size_t python__name(struct python *py, const struct offcpu_python_record *r, struct frame *out,
		    size_t max, uint64_t *unnamed);

/*
 * For lib/strpool.h's sweep: marks the interned strings it keeps,
 * its frames' kind (the names it gives are the frames' to hold).
 */
void python__mark_strings(const struct python *py, struct strpool *strings);

/* For tests: a process whose memory is m, with this layout, as if detected. */
int python__add_process(struct python *py, uint32_t pid, const struct python_layout *layout,
			uint64_t code_type, const struct python_memory *m);

#endif
