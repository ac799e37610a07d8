/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the text report names a row: a thread ("comm pid tid"), a process
 * ("title pid"), a state, a wait class, a waker, an object or a label's value, each
 * printable (frame_names__printable), as every table of it shows them.
 */
#ifndef OFFCPU_TEXT_LABEL_H
#define OFFCPU_TEXT_LABEL_H

#include <stddef.h>

#include "output/output.h"

/* The name of the row key is in, grouped by by (label_name: GROUP_BY_LABEL's). */
void text_label__of(const struct wait *key, enum report_group_by by, const char *label_name,
		    char *buf, size_t size);

/* "kind name" of what a wait waited on ("mutex orders_lock"), or "(none)". */
void text_label__object(const struct wait_object *o, char *buf, size_t size);

#endif
