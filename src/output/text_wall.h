/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's wall-clock view under -F: each thread's time on CPU
 * (sampled), waiting for a CPU and blocked, which add up to its time in
 * the recording, and the stacks the samples were taken in.
 */
#ifndef OFFCPU_TEXT_WALL_H
#define OFFCPU_TEXT_WALL_H

#include <stdbool.h>
#include <stdio.h>

#include "output/output.h"
#include "profile/profile.h"

/* Whether p holds on-CPU samples: without any, the report is as without -F. */
bool text_wall__sampled(const struct profile *p);
/*
 * "on CPU ... sampled" after the headline, then "Where the time went": a
 * row per thread (a process with --group-by pid), the heaviest first.
 * -ENOMEM.
 */
int text_wall__print(FILE *out, const struct profile *p, const struct output_opts *opts);
/* "Top on-CPU stacks": the samples summed by command name and stacks. -ENOMEM. */
int text_wall__print_stacks(FILE *out, const struct profile *p, const struct output_opts *opts);

#endif
