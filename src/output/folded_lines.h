/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Builds the profile's folded stack lines, "comm;[state];[wait];user...;kernel_[k]"
 * (after [wait], a "[NAME=VALUE]" pseudo-frame per label a rule pack read),
 * root first, one per distinct line with its time and count summed: the
 * folded back-end writes them as they are, the text report its top stacks
 * from them. Frames are named by frame_names.h.
 */
#ifndef OFFCPU_FOLDED_LINES_H
#define OFFCPU_FOLDED_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct folded_line {
	char *text;
	uint64_t total_ns;
	uint64_t count;
};

struct folded_lines {
	struct folded_line *lines;
	size_t nr;
};

/*
 * by_total: largest first; else sorted by text. with_lines: each user frame
 * followed by " (file.c:LINE)" where DWARF knows it (not for folded files).
 * Inlined functions are frames of their own, inside their caller.
 */
int folded_lines__build(const struct profile *p, bool by_total, bool with_lines,
			struct folded_lines *out);
void folded_lines__free(struct folded_lines *lines);

#endif
