/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's name column: as wide as its longest name, within
 * bounds, so that the numbers after it line up on every row whatever a
 * process calls itself.
 */
#ifndef OFFCPU_TEXT_COLUMN_H
#define OFFCPU_TEXT_COLUMN_H

#include <stddef.h>
#include <stdio.h>

/* The ellipsis that ends a name cut to its column. */
#define TEXT_COLUMN_ELLIPSIS "\xe2\x80\xa6"

/*
 * The columns a printable string (frame_names__printable) takes: one per
 * character. (An East Asian wide character takes two on a terminal; names
 * rarely hold one.)
 */
size_t text_column__width(const char *s);
/* s in exactly width columns (at least 1): padded with spaces, or cut and ended by the ellipsis. */
void text_column__print(FILE *out, const char *s, size_t width);

#endif
