/* SPDX-License-Identifier: GPL-2.0 */
/* Interned strings: equal strings share one pointer, so pointers compare. */
#ifndef OFFCPU_STRPOOL_H
#define OFFCPU_STRPOOL_H

struct strpool;

struct strpool *strpool__new(void);
/* NULL only when out of memory. */
const char *strpool__intern(struct strpool *pool, const char *str);
void strpool__free(struct strpool *pool);

#endif
