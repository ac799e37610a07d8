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
	GROUP_BY_WAKER, /* issue 15: who woke the waits */
	GROUP_BY_LABEL, /* issue #19: output_opts.group_label, a label name */
};

/*
 * Issue 15, --time: what folded and svg weigh stacks by. Off-CPU time is
 * blocked time (sleeping until the wakeup) plus run-queue time (runnable,
 * from the wakeup to the switch-in).
 */
enum output_time {
	OUTPUT_TIME_OFF_CPU,
	OUTPUT_TIME_BLOCKED,
	OUTPUT_TIME_RUNQ,
};

/* The text report's lengths without --top: rows of the thread table, stacks. */
#define OUTPUT_TOP_THREADS 20U
#define OUTPUT_TOP_STACKS 10U

struct output_opts {
	enum report_group_by group_by;
	bool lines;	/* --lines: source file and line of user frames in the text report */
	uint32_t top;	/* --top: rows of each table and stacks in the text report; 0: the above */
	bool show_idle; /* -k, -c, -p, -t: kernel threads' idle loops in the text report and svg */
	const char *group_label; /* issue #19: --group-by NAMESPACE.NAME */
	enum output_time time; /* issue 15, --time */
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

/*
 * "title", "comm", "pid", "tid", "state", "wait", "waker"; -EINVAL for
 * anything else. Issue #19: a label name (NAMESPACE.NAME,
 * output_label_name__valid) is GROUP_BY_LABEL, which output_opts.group_label
 * names.
 */
int output_group_by__parse(const char *name, enum report_group_by *out);
/* "off-cpu", "blocked", "runq"; -EINVAL for anything else. */
int output_time__parse(const char *name, enum output_time *out);
/* An entry's time as --time weighs it. */
uint64_t output__entry_time(const struct profile_entry *e, enum output_time time);
/* "task", "hardirq", "softirq" for a waker's context; NULL for none. */
const char *output__waker_context(unsigned int context);

/* Issue #19: letters, digits, '_' or '-', with a '.' after the first (pg.wait_event). */
bool output_label_name__valid(const char *name);

const struct output_format *output_format__by_name(const char *name);
/* By the extension of path; NULL if none matches. */
const struct output_format *output_format__by_path(const char *path);

int output_text__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_folded__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_json__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_pprof__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_svg__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_dot__write(FILE *out, const struct profile *p, const struct output_opts *opts);

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
