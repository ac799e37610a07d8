/* SPDX-License-Identifier: GPL-2.0 */
/* offcpu snapshot: who is off CPU right now, for how long, and where. */
#ifndef OFFCPU_SNAPSHOT_H
#define OFFCPU_SNAPSHOT_H

#include "cli/options.h"

/* The exit status: 0, 1 (environment) or 2 (usage), every error said once. */
int snapshot__run(struct options *o);

#endif
