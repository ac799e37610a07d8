/* SPDX-License-Identifier: GPL-2.0 */
/* The tracer as tracing and offcpu snapshot both start it from the command line. */
#ifndef OFFCPU_TRACER_START_H
#define OFFCPU_TRACER_START_H

#include "cli/options.h"
#include "trace/tracer.h"

/*
 * The tracer options that follow from the command line's alone, the same
 * for both; *to is zeroed first, the caller sets the rest (pids, sampling).
 */
void tracer_start__opts(const struct options *o, struct tracer_opts *to);
/*
 * tracer__new, with o's --cgroup directory open while it loads. The exit
 * status: 0, EXIT_USAGE (not a cgroup v2 directory, said) or
 * EXIT_ENVIRONMENT (tracer__new said why: only it knows the file,
 * tracepoint or program).
 */
int tracer_start__new(const struct options *o, struct tracer_opts *to, tracer_record_fn fn,
		      void *ctx, struct tracer **out);

#endif
