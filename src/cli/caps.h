/* SPDX-License-Identifier: GPL-2.0 */
/* The capabilities offcpu needs to trace, and those it keeps once attached. */
#ifndef OFFCPU_CAPS_H
#define OFFCPU_CAPS_H

#include <stdbool.h>

/*
 * Loading the BPF programs needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN,
 * which also covers them before Linux 5.8): checked up front, so that a
 * missing privilege is said once instead of as whatever fails first. True
 * when it cannot be told.
 */
bool caps__can_trace(void);

/*
 * Drops every capability but those needed to read other processes'
 * mappings and files (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_DAC_OVERRIDE,
 * and CAP_CHECKPOINT_RESTORE for map_files, or CAP_SYS_ADMIN on kernels
 * before 5.9), from the effective, permitted, inheritable and bounding
 * sets. 0, or -errno.
 */
int caps__drop_after_attach(void);
/*
 * caps__drop_after_attach, a failure said as a warning: not fatal, but
 * never quiet, offcpu runs with more privilege than it says it keeps.
 * after: what was done ("attaching", "loading").
 */
void caps__drop_or_warn(const char *after);

#endif
