// SPDX-License-Identifier: GPL-2.0
/* What the tests of a profile's window share. */
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"

#include "window_fixtures.h"

struct wait ended_wait(struct profile *p, uint32_t tid, uint64_t end_ns, uint64_t duration_ns,
		       uint64_t weight_ns)
{
	struct wait w = { .end_ts_ns = end_ns, .duration_ns = duration_ns, .weight_ns = weight_ns };

	w.pid = 100;
	w.tid = tid;
	w.comm = strpool__intern(p->strings, "app");
	w.wait_class = strpool__intern(p->strings, "pipe");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	return w;
}
