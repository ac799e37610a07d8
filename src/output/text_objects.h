/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's "By object" table: what the waits waited on (a lock,
 * a sleep, a child), each row with its time, its waits, the thread that
 * held it most, and what that holder itself did meanwhile (the wait chain).
 */
#ifndef OFFCPU_TEXT_OBJECTS_H
#define OFFCPU_TEXT_OBJECTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/*
 * The table of entries[0..nr) that have an object, shares of total_ns,
 * top rows (0: OUTPUT_TOP_THREADS); nothing when none has one.
 */
int text_objects__print(FILE *out, const struct profile *p, struct profile_entry **entries,
			size_t nr, uint64_t total_ns, uint32_t top);

#endif
