// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/env_vars.h"
#include "lib/log.h"
#include "lib/parse.h"

static int bad_value(const char *name, const char *value, const char *why)
{
	log__error("invalid %s '%s': %s", name, value, why);
	return -EINVAL;
}

/* Unset is 0, as is "0"; "1" is 1: a typo must not turn a hook on, nor "0" do so. */
static int read_flag(const char *name, bool *out)
{
	const char *value = getenv(name);

	*out = false;
	if (!value || !strcmp(value, "0"))
		return 0;
	if (strcmp(value, "1"))
		return bad_value(name, value, "expected 1 or 0");
	*out = true;
	return 0;
}

/* Unset leaves *out as it is: the default. */
static int read_uint(const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *value = getenv(name);
	char why[96];

	if (!value)
		return 0;
	if (parse__uint(value, min, max, out)) {
		snprintf(why, sizeof(why), "expected a whole number from %llu to %llu",
			 (unsigned long long)min, (unsigned long long)max);
		return bad_value(name, value, why);
	}
	return 0;
}

static int read_limits(struct symbol_limits *limits)
{
	const char *name = "OFFCPU_TEST_LIMITS", *value = getenv(name), *bad;
	char why[128];

	limits__defaults(limits);
	if (!value || !limits__parse(limits, value, &bad))
		return 0;
	snprintf(why, sizeof(why), "not a limit: %.*s", (int)strcspn(bad, ","), bad);
	return bad_value(name, value, why);
}

int env_vars__read(struct env_vars *ev)
{
	uint64_t memstats_s = 0, rotate = 0, delay_us = 0;
	int err;

	memset(ev, 0, sizeof(*ev));
	ev->btf_path = getenv("OFFCPU_BTF_PATH");
	/* Set at all is set, to anything, empty too (offcpu.1, ENVIRONMENT). */
	ev->no_wakeups = getenv("OFFCPU_NO_WAKEUPS") != NULL;
	ev->memstats = getenv("OFFCPU_TEST_MEMSTATS") != NULL;
	err = read_limits(&ev->limits);
	err = err ?: read_flag("OFFCPU_TEST_DROP_EXIT", &ev->drop_exits);
	err = err ?: read_uint("OFFCPU_TEST_MEMSTATS", 0, UINT64_MAX / 1000000000, &memstats_s);
	err = err ?: read_uint("OFFCPU_TEST_ROTATE_STACKS", 1, UINT32_MAX, &rotate);
	err = err ?: read_flag("OFFCPU_TEST_SWEEP_STRINGS", &ev->sweep_strings);
	/* Under a second: a slower reader is no reader. */
	err = err ?: read_uint("OFFCPU_TEST_RECORD_DELAY_US", 0, 999999, &delay_us);
	err = err ?: read_flag("OFFCPU_TEST_NO_KERNEL_LEAF", &ev->no_kernel_leaf);
	err = err ?: read_flag("OFFCPU_TEST_SLOTS_AHEAD", &ev->slots_ahead);
	err = err ?: read_flag("OFFCPU_TEST_NO_PYTHON", &ev->no_python);
	err = err ?: read_flag("OFFCPU_TEST_NO_OBJECTS", &ev->no_objects);
	ev->memstats_interval_ns = memstats_s * 1000000000;
	ev->rotate_stacks = (size_t)rotate;
	ev->record_delay_us = (uint32_t)delay_us;
	return err;
}
