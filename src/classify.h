/* SPDX-License-Identifier: GPL-2.0 */
/* Wait classes of SPEC.md, derived from the blocked thread's kernel stack. */
#ifndef OFFCPU_CLASSIFY_H
#define OFFCPU_CLASSIFY_H

#include <stddef.h>

#include "symbolizer.h"

/*
 * frames are the kernel frames, leaf first. Returns a static string:
 * "class" or "class:detail".
 */
const char *classify_wait(unsigned int state, const struct frame *frames, size_t nr);
/* Does a kernel symbol name match a rule pattern ("name" or "prefix*")? */
int classify_symbol_matches(const char *pattern, const char *sym);

#endif
