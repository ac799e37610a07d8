/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's account of every off-CPU nanosecond: what
 * it shows, what the filters dropped (summed where the duration is known,
 * counted where it is not), and under -- COMMAND each thread's life.
 */
#ifndef OFFCPU_TEXT_ACCOUNTING_H
#define OFFCPU_TEXT_ACCOUNTING_H

#include <stdio.h>

#include "output/output.h"
#include "profile/profile.h"

/*
 * "Off-CPU time accounted": shown (of p, and what the view hid of it),
 * below -m, above -M, sampled out...
 */
void text_accounting__print(FILE *out, const struct profile *p,
			    const struct output_hidden *hidden);
/* "Thread coverage": each exited thread's run and off-CPU time against its life. */
void text_accounting__print_threads(FILE *out, const struct profile *p, uint32_t top);

#endif
