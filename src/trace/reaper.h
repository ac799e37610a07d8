/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes held (the collector's, the symbolizer's)
 * whose exit record never came, found by looking at them. Under load the
 * ring buffer drops records, the exit records with the rest: in an
 * 18-minute bench/soak-serve system wide at -m 0 (87.8 million drops) the
 * symbolizer held 2,167 processes at the end, 45 of them alive, and their
 * code lines, titles and Python state with them.
 *
 * Every REAPER_INTERVAL_NS each process held is looked at, one read of
 * /proc/PID/stat: one gone (no /proc/PID, or a zombie whose threads are
 * all gone) at REAPER_GONE_LOOKS looks in a row is to be freed, as its exit
 * record would have; so is one whose PID another process has now (its
 * start time is not the one read when it was first held), at once: a
 * reused PID must not keep the old image's symbols.
 */
#ifndef OFFCPU_REAPER_H
#define OFFCPU_REAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A process gone is freed 10 to 20 s after it exited: what is held is the
 * processes whose exit records 20 s of drops lost (the soak lost two a
 * second), for a look that reads each process held once (2,000 processes:
 * see reaper.c).
 */
#define REAPER_INTERVAL_NS (10 * 1000000000ULL)
/*
 * The grace: a process that exited may still have waits in the ring
 * buffer, reserved before its exit. Gone at the first look, it is freed
 * at the next, REAPER_INTERVAL_NS later, when the reader (which drains
 * the buffer at every 50 ms poll) has long read them.
 */
#define REAPER_GONE_LOOKS 2

struct reaper;

int reaper__new(struct reaper **out);
void reaper__free(struct reaper *r);
/* pid is held anew (its first wait, its exec): who it is, read now. */
void reaper__hold(struct reaper *r, uint32_t pid);
/* Its exit record came: forgotten. */
void reaper__forget(struct reaper *r, uint32_t pid);
/* Whether a look is due at now_ns (CLOCK_MONOTONIC); if so, it begins. */
bool reaper__look_due(struct reaper *r, uint64_t now_ns);
/* In a look: pid is held (said once or more; a process not said is forgotten). */
void reaper__look_at(struct reaper *r, uint32_t pid);
/*
 * Ends the look: the pids to free, in *pids (nr of them, the caller frees
 * the array; NULL when none), and how many were looked at in *held.
 */
int reaper__end_look(struct reaper *r, uint32_t **pids, size_t *nr, size_t *held);

#endif
