/* SPDX-License-Identifier: GPL-2.0 */
/* The capabilities offcpu keeps once its BPF programs are loaded and attached. */
#ifndef OFFCPU_CAPS_H
#define OFFCPU_CAPS_H

/*
 * Drops every capability but those needed to read other processes'
 * mappings and files (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_DAC_OVERRIDE,
 * and CAP_CHECKPOINT_RESTORE for map_files, or CAP_SYS_ADMIN on kernels
 * before 5.9), from the effective, permitted, inheritable and bounding
 * sets. 0, or -errno.
 */
int caps__drop_after_attach(void);

#endif
