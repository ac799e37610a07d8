/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of a profile's window share (the profile's sums, a
 * recording's weights, serve's counters): a window 1000 s after boot and
 * waits that ended in it or before it.
 */
#ifndef OFFCPU_TESTS_UNIT_WINDOW_FIXTURES_H
#define OFFCPU_TESTS_UNIT_WINDOW_FIXTURES_H

#include <stdint.h>

#include "profile/profile.h"

#define S 1000000000ULL
/* The window begins 1000 s after boot. */
#define START (1000 * S)

/* A wait of duration_ns that ended at end_ns, weighing weight_ns whole (0: its duration). */
struct wait ended_wait(struct profile *p, uint32_t tid, uint64_t end_ns, uint64_t duration_ns,
		       uint64_t weight_ns);

#endif
