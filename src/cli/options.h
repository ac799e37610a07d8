/* SPDX-License-Identifier: GPL-2.0 */
/* The command line of offcpu.1 and its subcommands' pages. */
#ifndef OFFCPU_OPTIONS_H
#define OFFCPU_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "classify/rules.h"
#include "cli/env_vars.h"
#include "lib/parse.h"
#include "output/output.h"
#include "serve/listen.h"

/* Defaults, written once for the options and the help text. */
/* -m: shorter waits are counted and summed, not listed. */
#define OPTIONS_DEFAULT_MIN_DURATION_NS 1000000ULL
/* --max-entries: slots of the in-flight table. */
#define OPTIONS_DEFAULT_MAX_ENTRIES 65536U
/*
 * -F at most: 100 us between samples. Each sample of dwarf mode copies up
 * to --call-graph's SIZE of stack; faster, the ring buffer drops them.
 */
#define OPTIONS_MAX_FREQ 10000U
/*
 * --call-graph dwarf,SIZE: bytes of user stack copied per wait. 16 KiB held
 * every stack of the unwinder's measurements (python3 in its eval loop:
 * 11 KiB); SIZE is a multiple of 8 (the copy is read by words) from 512 to
 * 65528 (a record's size must fit the ring buffer's 64 KiB pages of slack).
 */
#define OPTIONS_DEFAULT_STACK_COPY_BYTES 16384U
#define OPTIONS_MIN_STACK_COPY_BYTES 512U
#define OPTIONS_MAX_STACK_COPY_BYTES 65528U

/*
 * --short: what happens to a wait shorter than -m. drop stays
 * the default until bench/ says otherwise.
 */
enum short_mode {
	SHORT_DROP,   /* counted and summed only */
	SHORT_SAMPLE, /* kept with probability duration/min, weighted min */
};
#define OPTIONS_DEFAULT_SHORT SHORT_DROP

/* --call-graph: how user stacks are unwound. */
enum call_graph {
	CALL_GRAPH_DWARF, /* a copy of the stack, unwound with CFI in user space */
	CALL_GRAPH_FP,	  /* frame pointers, walked by the kernel */
};

/* Which options apply, and how: set by the subcommand main() dispatched to. */
enum options_mode {
	OPTIONS_TRACE, /* offcpu [OPTIONS] [-- COMMAND] */
	OPTIONS_REPORT,
	OPTIONS_SERVE, /* offcpu serve [--listen ADDR:PORT] [OPTIONS] */
	OPTIONS_SNAPSHOT, /* offcpu snapshot [OPTIONS], no -d, no COMMAND */
};

enum options_action {
	OPTIONS_RUN,
	OPTIONS_HELP,
	OPTIONS_VERSION,
};

struct options {
	enum options_mode mode;
	enum options_action action;
	struct id_list pids;
	struct id_list tids;
	char **comms;
	size_t nr_comms;
	const char *cgroup_path;
	bool user_threads_only;
	bool kernel_threads_only;
	uint64_t min_duration_ns;
	uint64_t max_duration_ns; /* UINT64_MAX: none */
	uint32_t sample_rate;
	uint32_t state_mask;  /* 0: all */
	uint64_t duration_ns; /* 0: until a signal */
	const struct output_format *format;
	struct output_opts report; /* --group-by, --lines, --top */
	struct rule_set rules;	   /* --rules, in the order given */
	const char *output_path;   /* NULL: stdout */
	uint32_t max_entries;	   /* in-flight slots: a selected thread holds one until it exits */
	uint32_t stack_depth;
	bool kernel_stack;
	bool user_stack;
	enum call_graph call_graph;
	uint32_t stack_copy_bytes; /* --call-graph dwarf,SIZE */
	bool stats;
	bool measure_clock; /* --measure-clock */
	bool read_data;	    /* --read-data, rule packs' reads marked data too */
	bool verbose;
	char **command;		    /* NULL-terminated argv after "--", or NULL */
	const char *recording_path; /* offcpu report: read instead of tracing */
	const char *tracing_option; /* the first option given that only tracing takes */
	bool min_duration_given;
	/* offcpu serve. */
	struct listen_addr listen; /* --listen */
	const char *listen_text;
	bool allow_remote;
	const char *not_serving_option; /* the first option given that serve does not take */
	bool wakers; /* --wakers: the waker's stacks at each wakeup */
	uint32_t freq; /* -F: on-CPU samples a second per CPU; 0: none */
	enum short_mode short_mode; /* --short */
	bool window_given;	    /* --from or --to (report.from_ns, report.to_ns) */
	struct env_vars env;	    /* not parsed here: main() reads them (env_vars__read) */
};

/*
 * argv[0] is the program's or the subcommand's name, the options follow.
 * 0, or -EINVAL after reporting the one bad value, or another -errno (out of
 * memory, a rules file that cannot be read) after saying so. OPTIONS_REPORT takes
 * one RECORDING.json argument, into recording_path.
 */
int options__parse(int argc, char **argv, enum options_mode mode, struct options *o);
void options__free(struct options *o);
/* -F: the CPU time one on-CPU sample stands for, 1e9 / HZ ns; 0 without -F. */
uint64_t options__sample_period_ns(const struct options *o);
/*
 * The --help of the command mode stands for: its usage line, the options it
 * takes (as its man page lists them) and the examples.
 */
void options__usage(FILE *out, enum options_mode mode);
/* The help's EXAMPLES section, "Examples:\n" and a line per example. */
extern const char options__examples[];

#endif
