/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offcpu serve's main loop. The one thread that reads the ring
 * buffer also aggregates: each wait goes into the metrics and into every
 * profile window open at its end; windows are closed, their lines looked
 * up and encoded here, and handed to the HTTP threads (serve/server.h)
 * finished. Nothing here waits for a client.
 */
#ifndef OFFCPU_SERVE_H
#define OFFCPU_SERVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "symbols/symbolizer.h"
#include "trace/collector.h"
#include "trace/tracer.h"

struct serve_opts {
	int listen_fd;	      /* bound and listening; serve__run owns it */
	uint64_t duration_ns; /* -d; 0: until *stop */
	bool verbose;
	bool stats;		     /* --stats: the health counters to stderr at the end */
	bool show_idle;		     /* -k, -c, -p, -t: kernel threads idling in every view */
	uint64_t sample_period_ns;   /* -F: what an on-CPU sample stands for; 0: not sampling */
	volatile sig_atomic_t *stop; /* set by the signal handler */
	/* Test-only hooks (cli/env_vars.h). */
	/* A generation every this many stacks, windows open or not; 0: serve's own. */
	size_t rotate_stacks;
	uint64_t memstats_interval_ns; /* what is held logged this often; 0: never */
	/* The strings swept at every tick: under ASan a holder missed shows. */
	bool sweep_every_tick;
};

/*
 * Serves until *stop or the duration: 0, or -errno after saying what
 * failed. profile only interns: its sums stay empty (profile.h, on_add).
 */
int serve__run(const struct serve_opts *o, struct tracer *t, struct collector *c,
	       struct profile *profile, struct symbolizer *symbolizer);

#endif
