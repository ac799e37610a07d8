/* SPDX-License-Identifier: GPL-2.0 */
/* Interned strings: equal strings share one pointer, so pointers compare. */
#ifndef OFFCPU_STRPOOL_H
#define OFFCPU_STRPOOL_H

struct strpool;

struct strpool *strpool__new(void);
/* NULL only when out of memory. */
const char *strpool__intern(struct strpool *pool, const char *str);
void strpool__free(struct strpool *pool);
/* Issue #20 item 7: how many strings and their bytes, for measuring memory over time. */
void strpool__stats(const struct strpool *pool, unsigned long *strings, unsigned long *bytes);

#endif
