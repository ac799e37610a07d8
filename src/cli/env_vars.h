/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment variables offcpu reads, all of them, read once at the
 * start: the modules below get what they say through their options
 * (tracer_opts, collector_opts, serve_opts, symbolizer__set_limits) and
 * never read the environment themselves. Two are offcpu.1's ENVIRONMENT;
 * the rest are test and bench hooks, tests/README.md's "Environment".
 */
#ifndef OFFCPU_ENV_VARS_H
#define OFFCPU_ENV_VARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/limits.h"

struct env_vars {
	const char *btf_path; /* OFFCPU_BTF_PATH; NULL: /sys/kernel/btf/vmlinux */
	bool no_wakeups;      /* OFFCPU_NO_WAKEUPS, set to anything: no wakeup programs */
	/* The test-only ones, OFFCPU_TEST_*. A flag is 1 or 0. */
	struct symbol_limits limits;   /* LIMITS: name=value,... over the defaults */
	bool drop_exits;	       /* DROP_EXIT: the collector ignores exit records */
	bool memstats;		       /* MEMSTATS=SECONDS set: each reaping pass logged */
	uint64_t memstats_interval_ns; /* serve logs what it holds this often; 0: never */
	size_t rotate_stacks;	       /* ROTATE_STACKS: serve's generations; 0: its own */
	bool sweep_strings;	       /* SWEEP_STRINGS: serve sweeps at every tick */
	uint32_t record_delay_us;      /* RECORD_DELAY_US: slept before each record */
	bool no_kernel_leaf;	       /* NO_KERNEL_LEAF */
	bool slots_ahead;	       /* SLOTS_AHEAD */
	bool no_python;		       /* NO_PYTHON */
	bool no_objects;	       /* NO_OBJECTS */
};

/*
 * Fills ev from the environment. 0, or -EINVAL after saying which
 * variable's value is bad, and why, in one line.
 */
int env_vars__read(struct env_vars *ev);

#endif
