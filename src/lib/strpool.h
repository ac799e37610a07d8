/* SPDX-License-Identifier: GPL-2.0 */
/* Interned strings: equal strings share one pointer, so pointers compare. */
#ifndef OFFCPU_STRPOOL_H
#define OFFCPU_STRPOOL_H

struct strpool;

struct strpool *strpool__new(void);
/* NULL only when out of memory. */
const char *strpool__intern(struct strpool *pool, const char *str);
void strpool__free(struct strpool *pool);
/* How many strings and their bytes, for measuring memory over time. */
void strpool__stats(const struct strpool *pool, unsigned long *strings, unsigned long *bytes);

/*
 * Mark and sweep, for offcpu serve alone (a recording
 * keeps its strings to the end). The pool grows with every distinct
 * process title, comm, path, cgroup and symbol ever seen; serve
 * (src/serve/serve.c, sweep_strings) marks every string still held, then
 * frees the rest.
 *
 * Every module that keeps an interned pointer beyond the call that got it
 * marks what it keeps in its X__mark_strings, and serve's mark_strings
 * calls each:
 *   profile__mark_strings     the stacks' frames (and their inline frames),
 *                             label sets, entries, waits, thread accounts;
 *                             profile__mark_stacks for a retired generation
 *   metrics__mark_strings     label values shown and candidates, series
 *   collector__mark_strings   process titles, open chains' waits, the wait
 *                             class cache, pending Python frames, and:
 *     python__mark_strings    the frame kind
 *     cgroups__mark_strings   the paths of the cgroups known
 *   symbolizer__mark_strings  the kernel module's name, build IDs, perf map
 *                             modules, the code lines' keys and sources
 *   inline_pool__mark         the inline frames that a marked frame holds
 * A new holder must add itself there: a string it keeps unmarked is freed
 * under it (OFFCPU_TEST_SWEEP_STRINGS=1 sweeps at every tick, so that
 * serve under ASan reports it).
 */

/* Marks str, if it is one of the pool's; NULL, and any other string, are left alone. */
void strpool__mark(struct strpool *pool, const char *str);
/* Frees every string not marked since the last sweep, and clears the marks. */
void strpool__sweep(struct strpool *pool, unsigned long *freed, unsigned long *freed_bytes);

#endif
