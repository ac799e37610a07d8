/* SPDX-License-Identifier: GPL-2.0 */
/* Names and printing of the health counters of offcpu.h. */
#ifndef OFFCPU_COUNTERS_H
#define OFFCPU_COUNTERS_H

#include <stdint.h>
#include <stdio.h>

const char *counters__name(unsigned int index);
/* "name value" lines, indented, for the text report and --stats. */
void counters__print(FILE *out, const uint64_t *counters, const char *indent);

#endif
