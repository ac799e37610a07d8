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
	GROUP_BY_WAKER,	 /* Who woke the waits */
	GROUP_BY_OBJECT, /* What they waited on: its kind and name */
	GROUP_BY_LABEL,	 /* output_opts.group_label, a label name */
};

/*
 * --time: what folded and svg weigh stacks by. Off-CPU time is
 * blocked time (sleeping until the wakeup) plus run-queue time (runnable,
 * from the wakeup to the switch-in).
 */
enum output_time {
	OUTPUT_TIME_OFF_CPU,
	OUTPUT_TIME_BLOCKED,
	OUTPUT_TIME_RUNQ,
};

/*
 * What a pprof profile holds. offcpu serve's /debug/pprof/profile is
 * scraped as Go's CPU profile, which scrapers know by its sample and
 * period types (cpu/nanoseconds).
 */
enum output_pprof {
	OUTPUT_PPROF_ALL, /* the waits, and the on-CPU samples when sampling (-F) */
	OUTPUT_PPROF_CPU, /* the on-CPU samples alone, as Go's CPU profile */
};

/* The text report's lengths without --top: rows of the thread table, stacks. */
#define OUTPUT_TOP_THREADS 20U
#define OUTPUT_TOP_STACKS 10U

/*
 * The waits an aggregate view leaves out unless asked (-k, -c, -p, -t):
 * those of kernel threads idling, wait class idle. output_format__write
 * sums them here, for the back-end to say so; all zero when none were.
 */
struct output_hidden {
	uint64_t ns; /* weights, as profile's total_ns */
	uint64_t count;
	uint64_t runq_ns;
	struct estimate estimated;
};

struct output_opts {
	enum report_group_by group_by;
	bool lines;	/* --lines: source file and line of user frames in the text report */
	uint32_t top;	/* --top: rows of each table and stacks in the text report; 0: the above */
	bool show_idle; /* -k, -c, -p, -t: kernel threads' idle loops in every view */
	const char *group_label; /* --group-by NAMESPACE.NAME */
	enum output_time time; /* --time */
	/*
	 * offcpu report --from/--to: the part of the recording the trace
	 * draws, in ns since it began; to_ns 0: to its end.
	 */
	uint64_t from_ns;
	uint64_t to_ns;
	enum output_pprof pprof;
	struct output_hidden hidden; /* set by output_format__write */
};

struct output_format {
	const char *name;
	const char *extension;
	/*
	 * Needs every wait kept, not only the sums: a record of each wait
	 * (offcpu report reads it back), handed the whole profile, idle too.
	 */
	bool lists_waits;
	/* Writes the finished profile; errors of the stream are checked by the caller. */
	int (*write)(FILE *out, const struct profile *p, const struct output_opts *opts);
};

/*
 * The pseudo-frame of a wait that had not ended at the stop,
 * after [state] and [wait class] in folded lines and the flame graph.
 */
#define OUTPUT_STILL_WAITING_FRAME "[still-waiting]"

/* "12.345 ms": three decimals in s, ms or us, as the text report and svg show time. */
void output__format_duration(uint64_t ns, char *buf, size_t size);
/*
 * "kind name" of what a wait waited on ("mutex orders_lock"), the name
 * alone where it says its kind ("timer 20 ms"); raw, as the formats that
 * escape their own strings want it.
 */
void output__object_name(const struct wait_object *o, char *buf, size_t size);

/*
 * "title", "comm", "pid", "tid", "state", "wait", "waker"; -EINVAL for
 * anything else. A label name (NAMESPACE.NAME,
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

/* Letters, digits, '_' or '-', with a '.' after the first (pg.wait_event). */
bool output_label_name__valid(const char *name);

const struct output_format *output_format__by_name(const char *name);
/*
 * The one door to the back-ends: f->write on the profile as the views
 * show it, without what output__hides, whose sums opts->hidden gets.
 */
int output_format__write(const struct output_format *f, FILE *out, const struct profile *p,
			 const struct output_opts *opts);
/* Whether the aggregate views leave w out: a kernel thread idling, unless opts->show_idle. */
bool output__hides(const struct output_opts *opts, const struct wait *w);
/*
 * "3.000 ms (75.0%) in 1 wait of kernel threads idling ...; -k or -c/-p/-t
 * shows them", of the profile a back-end was handed; false if none hidden.
 */
bool output__describe_hidden(const struct profile *shown, const struct output_opts *opts,
			     char *buf, size_t size);
/* By the extension of path; NULL if none matches. */
const struct output_format *output_format__by_path(const char *path);

int output_text__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_folded__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_json__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_pprof__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_svg__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_dot__write(FILE *out, const struct profile *p, const struct output_opts *opts);
int output_trace__write(FILE *out, const struct profile *p, const struct output_opts *opts);

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
