/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SIGINT and SIGTERM, the signals that stop offcpu, held while a step
 * their handler must not cut in two (a temporary file made and said, a
 * file's rename, a snapshot's look) runs.
 */
#ifndef OFFCPU_STOP_SIGNALS_H
#define OFFCPU_STOP_SIGNALS_H

#include <signal.h>

/* Blocks both; the mask before into *saved, for sigprocmask(SIG_SETMASK, saved, NULL). */
void stop_signals__hold(sigset_t *saved);

#endif
