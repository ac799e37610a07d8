/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of the thread states (offcpu.1, THREAD STATES). The BPF side maps the kernel's
 * task state bits to them (src/bpf/states.bpf.h); records carry the result.
 */
#ifndef OFFCPU_STATES_H
#define OFFCPU_STATES_H

#include <stdint.h>

const char *states__name(unsigned int state);
/* "preempted" to its enum offcpu_state; -EINVAL for no state's name. */
int states__from_name(const char *name, unsigned int *state);
/* "preempted,uninterruptible" to a bit mask of enum offcpu_state. */
int states__parse_list(const char *text, uint32_t *mask);

#endif
