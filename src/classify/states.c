// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/types.h>
#include <string.h>

#include "classify/states.h"
#include "offcpu.h"

static const char *const state_names[OFFCPU_STATE_COUNT] = {
	[OFFCPU_STATE_INTERRUPTIBLE] = "interruptible",
	[OFFCPU_STATE_UNINTERRUPTIBLE] = "uninterruptible",
	[OFFCPU_STATE_IDLE] = "idle",
	[OFFCPU_STATE_PREEMPTED] = "preempted",
	[OFFCPU_STATE_RUNNING] = "running",
	[OFFCPU_STATE_STOPPED] = "stopped",
	[OFFCPU_STATE_TRACED] = "traced",
	[OFFCPU_STATE_PARKED] = "parked",
	[OFFCPU_STATE_OTHER] = "other",
};

const char *states__name(unsigned int state)
{
	return state < OFFCPU_STATE_COUNT ? state_names[state] : "other";
}

/* The state named by text[0..len); OFFCPU_STATE_COUNT if none is. */
static unsigned int state_named(const char *text, size_t len)
{
	unsigned int i;

	for (i = 0; i < OFFCPU_STATE_COUNT; i++) {
		if (strlen(state_names[i]) == len && !strncmp(text, state_names[i], len))
			break;
	}
	return i;
}

int states__from_name(const char *name, unsigned int *state)
{
	unsigned int i = state_named(name, strlen(name));

	if (i == OFFCPU_STATE_COUNT)
		return -EINVAL;
	*state = i;
	return 0;
}

int states__parse_list(const char *text, uint32_t *mask)
{
	uint32_t bits = 0;
	const char *p = text;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		unsigned int i = state_named(p, len);

		if (i == OFFCPU_STATE_COUNT)
			return -EINVAL;
		bits |= 1u << i;
		if (!end)
			break;
		p = end + 1;
	}
	*mask = bits;
	return 0;
}
