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

#include "ksyms.h"
#include "strpool.h"

/*
 * A function inlined at a frame's address, from DWARF: the innermost first,
 * each called from the next, the last called from the frame's own function.
 */
struct frame_inline {
	const char *function; /* demangled */
	const char *file;     /* where its code at this address is */
	uint32_t line;
	const struct frame_inline *caller;
};

struct frame {
	uint64_t addr;
	const char *sym;	 /* interned, demangled; NULL when no symbol holds addr */
	const char *system_name; /* interned raw (mangled) name, where it differs */
	uint64_t off;		 /* addr - symbol start */
	const char *module;	 /* interned path or "[kernel.kallsyms]"; NULL if unmapped */
	uint64_t module_off;	 /* offset in module: file offset, or addr in the kernel */
	const char *build_id;	 /* interned hex GNU build ID of module; NULL if none */
	const char *file;	 /* interned source file (DWARF); NULL if unknown */
	uint32_t line;		 /* in file: of addr, or of the call into inlined code */
	const struct frame_inline *inlined; /* owned by the symbolizer; NULL: none */
	bool kernel;
};

struct symbolizer;

/* Takes ownership of ksyms (may be NULL: kernel frames stay unnamed). */
int symbolizer__new(struct strpool *strings, struct ksyms *ksyms, struct symbolizer **out);
void symbolizer__free(struct symbolizer *s);
void symbolizer__kernel(struct symbolizer *s, uint64_t addr, struct frame *f);
/*
 * is_leaf: addr is where the thread stopped, not a return address.
 * seen_ns: CLOCK_MONOTONIC time at which addr was on the stack.
 */
void symbolizer__user(struct symbolizer *s, uint32_t pid, uint64_t addr, bool is_leaf,
		      uint64_t seen_ns, struct frame *f);
/* The process replaced its image: snapshot the new one now, while it lives. */
void symbolizer__exec(struct symbolizer *s, uint32_t pid);
/* A new process maps what its parent maps until it execs. */
void symbolizer__fork(struct symbolizer *s, uint32_t parent_pid, uint32_t child_pid);
/* The process is gone: its mappings are no longer needed. */
void symbolizer__exit(struct symbolizer *s, uint32_t pid);
uint64_t symbolizer__processes_gone(const struct symbolizer *s);

#endif
