/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output back-ends, looked up by name or by file extension, and the output
 * file: written beside its destination under a temporary name and renamed
 * into place only when complete.
 */
#ifndef OFFCPU_OUTPUT_H
#define OFFCPU_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/* --group-by: what the text report's per-process table sums by. */
enum report_group_by {
	GROUP_BY_TID,
	GROUP_BY_PID,
	GROUP_BY_COMM,
	GROUP_BY_TITLE,
	GROUP_BY_STATE,
	GROUP_BY_WAIT,
};

/* The text report's lengths without --top: rows of the thread table, stacks. */
#define OUTPUT_TOP_THREADS 20U
#define OUTPUT_TOP_STACKS 10U

struct output_opts {
	enum report_group_by group_by;
	bool lines;	/* --lines: source file and line of user frames in the text report */
	uint32_t top;	/* --top: rows of each table and stacks in the text report; 0: the above */
	bool show_idle; /* -k, -c, -p, -t: kernel threads' idle loops in the text report and svg */
};

struct output_format {
	const char *name;
	const char *extension;
	bool lists_waits; /* needs every wait kept, not only the sums */
	/* Writes the finished profile; errors of the stream are checked by the caller. */
	int (*write)(FILE *out, const struct profile *p, const struct output_opts *opts);
};

/*
 * Issue #16: the pseudo-frame of a wait that had not ended at the stop,
 * after [state] and [wait class] in folded lines and the flame graph.
 */
#define OUTPUT_STILL_WAITING_FRAME "[still-waiting]"

/* "12.345 ms": three decimals in s, ms or us, as the text report and svg show time. */
void output__format_duration(uint64_t ns, char *buf, size_t size);

/* "title", "comm", "pid", "tid", "state", "wait"; -EINVAL for anything else. */
int output_group_by__parse(const char *name, enum report_group_by *out);

const struct output_format *output_format__by_name(const char *name);
/* By the extension of path; NULL if none matches. */
const struct output_format *output_format__by_path(const char *path);

int output_text__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_folded__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_json__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_pprof__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_svg__write(FILE *out, const struct profile *p, const struct output_opts *opts);

struct output_sink;

struct output_file {
	FILE *stream;
	/*
	 * A named temporary file beside the destination, only where the
	 * filesystem has no O_TMPFILE: for a signal handler to remove. NULL
	 * otherwise (the file has no name until it is committed).
	 */
	char *temp_path;
	/* Why open or commit refused the destination for what it is (their -EINVAL). */
	const char *refused;
	struct output_sink *sink; /* the descriptor under stream, where it goes, its first error */
};

/*
 * "-" or NULL is stdout; /dev/stdout, /dev/stderr, /dev/fd/N and
 * /proc/self/fd/N are that descriptor, written in place too. Any other path
 * is decided without following a symbolic link in its last component: a
 * character device or a FIFO named directly is written in place; a regular
 * file, a link to one or nothing yet is replaced whole at commit, never
 * written through; the rest is refused (-EINVAL and refused set). Fails
 * early on an unwritable destination.
 */
int output_file__open(const char *path, struct output_file *out);
/* Flushes, checks for write errors (ENOSPC...), puts the file in place: the first error's -errno.
 */
int output_file__commit(struct output_file *f);
/* Removes the temporary file; the destination is untouched. */
void output_file__abort(struct output_file *f);

#endif
