// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <unistd.h>

#include "cli/cgroup.h"
#include "cli/exit_status.h"
#include "cli/tracer_start.h"
#include "lib/log.h"

void tracer_start__opts(const struct options *o, struct tracer_opts *to)
{
	memset(to, 0, sizeof(*to));
	to->min_duration_ns = o->min_duration_ns;
	to->max_duration_ns = o->max_duration_ns;
	to->state_mask = o->state_mask;
	to->max_entries = o->max_entries;
	to->stack_depth = o->stack_depth;
	to->stack_copy_bytes = o->call_graph == CALL_GRAPH_DWARF ? o->stack_copy_bytes : 0;
	to->kernel_stack = o->kernel_stack;
	to->user_stack = o->user_stack;
	to->user_threads_only = o->user_threads_only;
	to->kernel_threads_only = o->kernel_threads_only;
	to->tids = &o->tids;
	to->comms = o->comms;
	to->nr_comms = o->nr_comms;
	to->btf_path = o->env.btf_path;
	to->no_kernel_leaf = o->env.no_kernel_leaf;
	to->no_objects = o->env.no_objects;
	to->slots_ahead = o->env.slots_ahead;
	to->measure_clock = o->measure_clock;
	to->freq = o->freq;
	to->record_delay_us = o->env.record_delay_us;
}

int tracer_start__new(const struct options *o, struct tracer_opts *to, tracer_record_fn fn,
		      void *ctx, struct tracer **out)
{
	int err;

	if (o->cgroup_path) {
		if (cgroup__open(o->cgroup_path, &to->cgroup_fd)) {
			log__error("invalid --cgroup '%s': not a cgroup v2 directory",
				   o->cgroup_path);
			return EXIT_USAGE;
		}
		to->filter_cgroup = true;
	}
	err = tracer__new(to, fn, ctx, out);
	if (to->filter_cgroup)
		close(to->cgroup_fd);
	return err ? EXIT_ENVIRONMENT : 0;
}
