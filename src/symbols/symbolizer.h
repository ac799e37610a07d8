/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one front door from addresses to names: kernel addresses through
 * kallsyms, user addresses through a snapshot of the process's mappings and
 * the ELF symbols of each mapped file (the vdso included).
 */
#ifndef OFFCPU_SYMBOLIZER_H
#define OFFCPU_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/inline_pool.h"
#include "lib/strpool.h"
#include "proc/procmaps.h"
#include "profile/frame.h"
#include "symbols/ksyms.h"
#include "symbols/limits.h"

struct symbolizer;
struct debuginfo;

/*
 * Names go into strings, inline frames into inlines. Takes ownership of
 * ksyms (may be NULL: kernel frames stay unnamed).
 */
int symbolizer__new(struct strpool *strings, struct inline_pool *inlines, struct ksyms *ksyms,
		    struct symbolizer **out);
/* What reading a process's files may cost (limits.h): the defaults unless set here. */
void symbolizer__set_limits(struct symbolizer *s, const struct symbol_limits *limits);
void symbolizer__free(struct symbolizer *s);
void symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct frame *f);
/*
 * is_leaf: addr is where the thread stopped, not a return address.
 * seen_ns: CLOCK_MONOTONIC time at which addr was on the stack.
 * Returns true when f is in a file skipped while all files held what they
 * may (limits.h's max_total_spend_bytes) that offcpu serve may still read
 * once files are freed: the same address, named again later, may have a
 * name then.
 */
bool symbolizer__user(struct symbolizer *s, uint32_t pid, uint64_t addr, bool is_leaf,
		      uint64_t seen_ns, struct frame *f);
/*
 * Fills in the source file, line and inline frames of f, a frame (or a
 * copy of one) that symbolizer__user named: where to look them up, the
 * symbolizer noted then, by the frame's module, build ID, symbol and
 * offset, so each piece of code is looked up once however many stacks
 * hold it. Looked up after the recording rather than as stacks arrive:
 * opening a distribution's compressed debug file takes tens of
 * milliseconds, and a short-lived process (or its perf map) may be gone
 * by then.
 */
void symbolizer__resolve_lines(struct symbolizer *s, struct frame *f);
/*
 * The executable mappings of pid (or of the process standing for it) for
 * the unwinder, read again as symbolizer__user would if addr, seen at
 * seen_ns, is in none of them; NULL: none known. Valid until the next call
 * for pid.
 */
const struct proc_maps *symbolizer__maps(struct symbolizer *s, uint32_t pid, uint64_t addr,
					 uint64_t seen_ns);
/*
 * The executable mappings of pid itself, for CPython's detection, which
 * takes them rather than reading them again (and a read it asks for serves
 * the symbolizer's stacks too): read now if none were, or if those held
 * were read before since_ns (CLOCK_MONOTONIC; 0: whenever) while ld.so may
 * still have been mapping libraries: they name no more files than the
 * executable and ld.so (once it has mapped them, only a dlopen changes
 * them). *read_ns says when they were read. NULL (*read_ns 0) when pid's
 * maps cannot be read (gone, or a zombie). Valid until the next call for
 * pid.
 */
const struct proc_maps *symbolizer__maps_since(struct symbolizer *s, uint32_t pid,
					       uint64_t since_ns, uint64_t *read_ns);
/* The process replaced its image: snapshot the new one now, while it lives. */
void symbolizer__exec(struct symbolizer *s, uint32_t pid);
/*
 * Reads again the maps of processes that exec'd while their dynamic loader
 * has not mapped their libraries: to be called at every poll of the trace,
 * which waits no longer than symbolizer__poll_timeout_ms says (timeout_ms,
 * or less while there are such processes).
 */
void symbolizer__tick(struct symbolizer *s);
int symbolizer__poll_timeout_ms(const struct symbolizer *s, int timeout_ms);
/* A new process maps what its parent maps until it execs. */
void symbolizer__fork(struct symbolizer *s, uint32_t parent_pid, uint32_t child_pid);
/* The process is gone: its mappings are no longer needed. */
void symbolizer__exit(struct symbolizer *s, uint32_t pid);
uint64_t symbolizer__processes_gone(const struct symbolizer *s);
/* Fn(ctx, pid) for each process held, to find those gone unseen. */
void symbolizer__for_each_process(const struct symbolizer *s, void (*fn)(void *ctx, uint32_t pid),
				  void *ctx);
/*
 * Whether pid's executable mappings are known (read, and
 * the process was not gone), so a user address in none of them is in no
 * executable mapping at all.
 */
bool symbolizer__maps_known(struct symbolizer *s, uint32_t pid);

/*
 * For offcpu serve: from now on a mapped file's symbols
 * and DWARF are freed as soon as no process maps it (offcpu record keeps
 * them to the end, where it looks up its lines). If a window is open then
 * (symbolizer__lines_needed_since), the file's code lines are looked up
 * first and kept, resolved, until every window open then has closed.
 */
void symbolizer__free_unmapped(struct symbolizer *s);
/*
 * The oldest window open started at since_ns (CLOCK_MONOTONIC; UINT64_MAX:
 * none is open): the lines of files freed before it go now.
 */
void symbolizer__lines_needed_since(struct symbolizer *s, uint64_t since_ns);

/*
 * For lib/strpool.h's sweep: marks the interned strings the
 * symbolizer holds (the kernel's module name, each file's build ID, each
 * process's perf map name, the code lines' keys and their sources) and
 * the lines' inline frames in the inline pool it was given.
 */
void symbolizer__mark_strings(const struct symbolizer *s, struct strpool *strings);

/* What the symbolizer holds, for measuring memory over time. */
struct symbolizer_stats {
	unsigned long processes;
	unsigned long files; /* mapped files' symbols and DWARF (struct dso) */
	uint64_t file_bytes; /* what reading them cost (limits.h's budget) */
	uint64_t perfmap_bytes; /* What the perf maps of live processes hold */
	unsigned long lines; /* code whose source line is noted or looked up */
	unsigned long dead_lines; /* of them, those of freed files kept for open windows */
};

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

#endif
