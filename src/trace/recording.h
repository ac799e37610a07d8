/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads a JSON Lines recording that offcpu wrote back into a profile, so
 * `offcpu report` turns one recording into every other format without
 * tracing again.
 */
#ifndef OFFCPU_RECORDING_H
#define OFFCPU_RECORDING_H

#include <stdint.h>
#include <stdio.h>

#include "classify/rules.h"
#include "lib/parse.h"
#include "profile/profile.h"

/* Which recorded waits the report keeps: the tracing filters, applied afterwards. */
struct recording_filter {
	const struct id_list *pids;
	const struct id_list *tids;
	char *const *comms;
	size_t nr_comms;
	uint32_t state_mask; /* 0: all */
	uint64_t min_duration_ns;
	uint64_t max_duration_ns;
	const struct rule_set *rules; /* non-empty: classify the waits again with these */
};

/*
 * Adds every wait of the recording that passes filter to p, and takes its
 * health counters. A malformed line is reported once, naming name and the
 * line: -EINVAL; so are waits whose total would pass 2^64 ns. A directory is
 * said the same way (-EINVAL); any other read failure (EIO, ENOMEM) returns
 * its negative errno, unsaid, for the caller to report.
 */
/*
 * The longest line a recording may have, in bytes: offcpu writes a wait of
 * 127 + 127 frames with their inlined functions in well under it. A longer
 * one is refused (-EINVAL, said), so that a stream without line ends
 * (/dev/zero, a pipe of junk) takes no more memory than that.
 */
#define RECORDING_MAX_LINE (16u << 20)
int recording__read(FILE *in, const char *name, const struct recording_filter *filter,
		    struct profile *p);

#endif
