// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu snapshot: one look, no recording. The BPF object is loaded but
 * nothing is attached; its open-wait iterator (tracer__open_waits) walks
 * every task once (twice where it finds CPython, the second time with the
 * Python frames) and reports each selected thread off CPU with what it
 * has waited so far (dated from the kernel's own switch times: sched_info),
 * its state and both stacks, read from the blocked task. The records go
 * through the collector as a recording's do: symbolized, classified, in
 * any format. Longest first.
 *
 * It takes well under a second, so SIGINT and SIGTERM are held until the
 * output is committed: the output is whole or not there, and no temporary
 * file is left beside it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/caps.h"
#include "cli/exit_status.h"
#include "cli/main_binary.h"
#include "cli/snapshot.h"
#include "cli/tracer_start.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/stop_signals.h"
#include "output/output.h"
#include "profile/profile.h"
#include "symbols/ksyms.h"
#include "symbols/symbolizer.h"
#include "trace/collector.h"
#include "trace/counters.h"
#include "trace/label_reader.h"
#include "trace/tracer.h"

struct snapshot {
	struct options *opts;
	struct output_file output;
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct collector *collector;
	struct tracer *tracer;
	struct label_reader *label_reader; /* --rules' read lines */
};

static int on_record(void *ctx, const void *data, size_t size)
{
	return collector__record(ctx, data, size);
}

/* A process a rule pack's read lines match: the iterator reads its values. */
static int give_reads(void *ctx, uint32_t pid, const struct offcpu_reads *reads)
{
	return tracer__set_reads(ctx, pid, reads);
}

/* A CPython process the collector found: the iterator walks its frames. */
static int on_python(void *ctx, uint32_t pid, const struct offcpu_python_layout *l)
{
	return tracer__python_add(ctx, pid, l);
}

/* Longest first; then by thread, so that equal waits keep one order. */
static int compare_longest_first(const void *a, const void *b)
{
	const struct wait *x = a, *y = b;

	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int start(struct snapshot *s)
{
	struct options *o = s->opts;
	struct tracer_opts to;
	int err;

	tracer_start__opts(o, &to);
	to.sample_rate = 1;
	to.pids = &o->pids;
	to.snapshot = true;
	to.label_reads = o->rules.nr_groups > 0;
	err = tracer_start__new(o, &to, on_record, s->collector, &s->tracer);
	if (err)
		return err;
	label_reader__attach(s->label_reader, give_reads, s->tracer);
	/* As a recording's (main.c): test-only, the baseline without Python frames. */
	if (!o->env.no_python)
		collector__set_python_sink(s->collector, on_python, s->tracer);
	caps__drop_or_warn("loading");
	return 0;
}

static int setup(struct snapshot *s)
{
	struct options *o = s->opts;
	struct collector_opts co = {
		.rules = &o->rules,
		.state_mask = o->state_mask,
		.drop_exits = o->env.drop_exits,
		.log_reaps = o->env.memstats,
	};
	struct ksyms *ksyms = NULL;
	char main_binary[PATH_MAX];
	int err;

	err = output_file__open(o->output_path, &s->output);
	if (err) {
		log__error("cannot write output file '%s': %s", o->output_path ?: "-",
			   s->output.refused ?: strerror(-err));
		return err == -ENOMEM ? EXIT_ENVIRONMENT : EXIT_USAGE;
	}
	if (!caps__can_trace()) {
		log__error("not permitted: a snapshot needs root, or CAP_BPF and CAP_PERFMON");
		return EXIT_ENVIRONMENT;
	}
	err = ksyms__load_system(&ksyms);
	if (err)
		log__warn("kernel symbols unavailable (%s): kernel frames stay addresses",
			  strerror(-err));
	err = profile__new(o->format->lists_waits, &s->profile);
	if (err) {
		ksyms__free(ksyms);
		log__error("cannot set up the profile: %s", strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	main_binary__find(NULL, &o->pids, main_binary, sizeof(main_binary));
	if (main_binary[0] && profile__set_main_binary(s->profile, main_binary)) {
		log__error("cannot set up the profile: %s", strerror(ENOMEM));
		return EXIT_ENVIRONMENT;
	}
	err = symbolizer__new(s->profile->strings, s->profile->inlines, ksyms, &s->symbolizer);
	if (!err)
		symbolizer__set_limits(s->symbolizer, &o->env.limits);
	err = err ?: collector__new(s->profile, s->symbolizer, &co, &s->collector);
	if (err) {
		log__error("cannot set up the symbolizer: %s", strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	err = label_reader__new(&o->rules, &s->label_reader);
	if (err) {
		log__error("cannot set up the labels of rule packs: %s", strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	label_reader__read_data(s->label_reader, o->read_data);
	collector__set_label_reader(s->collector, s->label_reader);
	return start(s);
}

static int look(struct snapshot *s)
{
	struct timespec now;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	s->profile->start_time_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	err = tracer__open_waits(s->tracer, on_record, s->collector, s->profile->counters);
	if (err)
		return EXIT_ENVIRONMENT;
	err = collector__finish(s->collector);
	if (err) {
		log__error("cannot finish the profile: %s", strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	/* Kept for the formats that list every wait; the others sort their own. */
	if (s->profile->nr_waits)
		qsort(s->profile->waits, s->profile->nr_waits, sizeof(*s->profile->waits),
		      compare_longest_first);
	return 0;
}

static int write_output(struct snapshot *s)
{
	const struct options *o = s->opts;
	int err = output_format__write(o->format, s->output.stream, s->profile, &o->report);

	err = err ?: output_file__commit(&s->output);
	if (err && err != -EPIPE)
		log__error("cannot write the output: %s", s->output.refused ?: strerror(-err));
	if (o->stats) {
		fprintf(stderr, "offcpu health counters (of the snapshot):\n");
		counters__print(stderr, s->profile->counters, "  ");
	}
	if (err == -EPIPE)
		return EXIT_PIPE;
	return err ? EXIT_ENVIRONMENT : 0;
}

int snapshot__run(struct options *o)
{
	struct snapshot s = { .opts = o };
	sigset_t saved;
	int status;

	stop_signals__hold(&saved);
	status = setup(&s);
	status = status ?: look(&s);
	status = status ?: write_output(&s);
	if (s.output.stream)
		output_file__abort(&s.output);
	tracer__free(s.tracer);
	collector__free(s.collector);
	label_reader__free(s.label_reader);
	symbolizer__free(s.symbolizer);
	profile__free(s.profile);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	return status;
}
