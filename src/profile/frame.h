/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One frame of a stack, as every stage after the symbolizer sees it: the
 * core data type of the profile and of every output back-end. Pure data:
 * what the symbolizer needs to finish it later, it keeps itself.
 */
#ifndef OFFCPU_FRAME_H
#define OFFCPU_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/inline_pool.h"

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
	const struct frame_inline *inlined; /* interned; NULL: none */
	bool kernel;
	/*
	 * Interpreted code ("python"), interned; NULL for native
	 * code. Such a frame is complete when made: addr is its code object,
	 * sym its qualified name, file and line its source, off its
	 * instruction's byte offset in the code; no module.
	 */
	const char *kind;
};

#endif
