// SPDX-License-Identifier: GPL-2.0
/* The text report's row names, by what its tables group by. */
#include <stdio.h>

#include "classify/states.h"
#include "output/frame_names.h"
#include "output/text_label.h"

/* "comm pid tid" of a waking task, "[hardirq]" or "[softirq]", or no wakeup. */
static void waker_label(const struct waker *k, char *buf, size_t size)
{
	char comm[4 * OFFCPU_COMM_LEN + 1];

	if (!output__waker_context(k->context)) {
		snprintf(buf, size, "(no wakeup: preempted, yielded)");
		return;
	}
	if (k->context != OFFCPU_WAKER_TASK) {
		snprintf(buf, size, "[%s]", output__waker_context(k->context));
		return;
	}
	frame_names__printable(k->comm ? k->comm : "", comm, sizeof(comm));
	snprintf(buf, size, "%-16s %8u %8u", comm, k->pid, k->tid);
}

void text_label__object(const struct wait_object *o, char *buf, size_t size)
{
	char raw[512];

	if (!o) {
		snprintf(buf, size, "(none)");
		return;
	}
	output__object_name(o, raw, sizeof(raw));
	frame_names__printable(raw, buf, size);
}

/*
 * Names as frame_names__printable shows them: a thread or process may name
 * itself with terminal commands, and this report goes to root's terminal.
 */
void text_label__of(const struct wait *key, enum report_group_by by, const char *label_name,
		    char *buf, size_t size)
{
	const char *name = key->title ? key->title : key->comm;
	bool exited = key->pid == PROFILE_EXITED_ID;
	/* A traced comm is 16 bytes at most, each "\xNN" at most; titles are cut to the column. */
	char comm[4 * OFFCPU_COMM_LEN + 1], column[26];

	switch (by) {
	case GROUP_BY_TID:
		frame_names__printable(key->comm, comm, sizeof(comm));
		if (exited)
			snprintf(buf, size, "%-16s %17s", comm, "(exited)");
		else
			snprintf(buf, size, "%-16s %8u %8u", comm, key->pid, key->tid);
		break;
	case GROUP_BY_PID:
		frame_names__printable(name, column, sizeof(column));
		if (exited)
			snprintf(buf, size, "%-25s %8s", column, "(exited)");
		else
			snprintf(buf, size, "%-25s %8u", column, key->pid);
		break;
	case GROUP_BY_COMM:
		frame_names__printable(key->comm, buf, size);
		break;
	case GROUP_BY_TITLE:
		frame_names__printable(name, buf, size);
		break;
	case GROUP_BY_STATE:
		snprintf(buf, size, "%s", states__name(key->state));
		break;
	case GROUP_BY_WAIT:
		frame_names__printable(key->wait_class, buf, size);
		break;
	case GROUP_BY_WAKER:
		waker_label(&key->waker, buf, size);
		break;
	case GROUP_BY_OBJECT:
		text_label__object(key->object, buf, size);
		break;
	case GROUP_BY_LABEL:
		/* Waits without it (another process, none published) are one row. */
		frame_names__printable(profile__label(key->labels, label_name) ?: "(none)", buf,
				       size);
		break;
	}
}
