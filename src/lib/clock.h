/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC in nanoseconds: the clock of the BPF side's timestamps
 * (bpf_ktime_get_ns), so user space compares its own times with theirs.
 */
#ifndef OFFCPU_CLOCK_H
#define OFFCPU_CLOCK_H

#include <stdint.h>

uint64_t clock__monotonic_ns(void);

#endif
