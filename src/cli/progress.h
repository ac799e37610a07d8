/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The progress line of a recording on stderr: elapsed time, waits and
 * drops, once a second. On a terminal it is rewritten in place and erased
 * before the report; with -v and no terminal, a plain line every ten
 * seconds, for logs. stdout is never touched.
 */
#ifndef OFFCPU_PROGRESS_H
#define OFFCPU_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *out;
	bool in_place;	   /* a terminal: "\r" and erase */
	uint64_t every_ns; /* 0: no progress line */
	uint64_t started_ns;
	uint64_t next_ns;
	bool shown;
};

/*
 * Shown when verbose, or on a terminal unless a traced command owns that
 * terminal; out is stderr, is_terminal whether it is one.
 */
void progress__init(struct progress *p, FILE *out, bool is_terminal, bool verbose, bool has_command,
		    uint64_t now_ns);
/* Is a line due? The caller then reads the counters and calls progress__show. */
bool progress__due(const struct progress *p, uint64_t now_ns);
/* counters: the BPF side's (OFFCPU_CNT_BPF_MAX of them). */
void progress__show(struct progress *p, uint64_t now_ns, const uint64_t *counters);
/* Erases the line on a terminal, so that the report starts on a clean line. */
void progress__end(struct progress *p);
/* "offcpu: 12s, 3456 waits, 0 dropped"; snprintf's result. */
int progress__format(char *buf, size_t size, uint64_t elapsed_ns, uint64_t waits, uint64_t dropped);

#endif
