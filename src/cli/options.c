// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/pg_events.h"
#include "classify/reads.h"
#include "classify/states.h"
#include "cli/options.h"
#include "lib/array.h"
#include "lib/log.h"
#include "offcpu.h"

enum long_only_option {
	OPT_CGROUP = 256,
	OPT_SAMPLE_RATE,
	OPT_STATE,
	OPT_MAX_ENTRIES,
	OPT_STACK_DEPTH,
	OPT_NO_KERNEL_STACK,
	OPT_NO_USER_STACK,
	OPT_CALL_GRAPH,
	OPT_STATS,
	OPT_MEASURE_CLOCK,
	OPT_READ_DATA,
	OPT_RULES,
	OPT_GROUP_BY,
	OPT_LINES,
	OPT_TOP,
	OPT_LISTEN,
	OPT_ALLOW_REMOTE,
	OPT_WAKERS,
	OPT_TIME,
	OPT_SHORT,
	OPT_FROM,
	OPT_TO,
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "comm", required_argument, NULL, 'c' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "user-threads-only", no_argument, NULL, 'u' },
	{ "kernel-threads-only", no_argument, NULL, 'k' },
	{ "min-duration", required_argument, NULL, 'm' },
	{ "max-duration", required_argument, NULL, 'M' },
	{ "sample-rate", required_argument, NULL, OPT_SAMPLE_RATE },
	{ "short", required_argument, NULL, OPT_SHORT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "duration", required_argument, NULL, 'd' },
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "max-entries", required_argument, NULL, OPT_MAX_ENTRIES },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "no-kernel-stack", no_argument, NULL, OPT_NO_KERNEL_STACK },
	{ "no-user-stack", no_argument, NULL, OPT_NO_USER_STACK },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "measure-clock", no_argument, NULL, OPT_MEASURE_CLOCK },
	{ "read-data", no_argument, NULL, OPT_READ_DATA },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "freq", required_argument, NULL, 'F' },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* '+': stop at the first non-option, so COMMAND's own options stay its own. */
static const char short_options[] = "+p:t:c:ukm:M:d:f:o:F:vhV";

/* A default as it would be typed: the largest unit that holds it whole. */
static void format_duration(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{ "m", 60000000000ULL },
		{ "s", 1000000000ULL },
		{ "ms", 1000000ULL },
		{ "us", 1000ULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[i].ns),
				 units[i].name);
			return;
		}
	}
	snprintf(buf, size, ns ? "%lluns" : "%llu", (unsigned long long)ns);
}

/* The man page's EXAMPLES say the same (tests/unit/cli/test_options.c compares them). */
const char options__examples[] =
    "Examples:\n"
    "  offcpu -d 10s                        system wide for 10 s, text report\n"
    "  offcpu -p 1234 -m 5ms -d 30s         one process, waits of 5 ms or more\n"
    "  offcpu -- make -j8                   a command and what it forks, until it exits\n"
    "  offcpu -c postgres --rules postgres --short sample --group-by title -d 10s\n"
    "                                       why PostgreSQL's backends wait\n"
    "  offcpu -c postgres --rules postgres --short sample --group-by pg.wait_event -d 10s\n"
    "                                       by their own wait events\n"
    "  offcpu -d 10s -o wait.svg            an interactive flame graph\n"
    "  offcpu -d 10s -o wait.pb.gz          for go tool pprof -http=: wait.pb.gz\n"
    "  offcpu -d 10s --wakers -o w.svg      an off-wake flame graph: who woke them\n"
    "  offcpu -m 0 -d 5s -o run.trace.json  a timeline for Perfetto UI: waits and wakeups\n"
    "  offcpu -d 10s -o g.dot               who waits for whom: dot -Tsvg g.dot\n"
    "  offcpu -d 60s -o rec.json            a recording, then its report:\n"
    "  offcpu report -c postgres --state uninterruptible -o io.svg rec.json\n"
    "  offcpu snapshot -m 1s                who is blocked for 1 s or more now, and where\n";

uint64_t options__sample_period_ns(const struct options *o)
{
	return o->freq ? 1000000000ULL / o->freq : 0;
}

/*
 * Which commands take an option, a bit per enum options_mode: the lines of
 * each command's --help, as its man page's OPTIONS. The parser refuses the
 * others on its own (tracing_only(), not_serving(), check_snapshot(), the
 * mode checks of parse_one()); tests/unit/cli/test_options.c holds the
 * two to each other, tests/integration/test_docs.py both to the pages.
 */
#define FOR_TRACE (1U << OPTIONS_TRACE)
#define FOR_REPORT (1U << OPTIONS_REPORT)
#define FOR_SERVE (1U << OPTIONS_SERVE)
#define FOR_SNAPSHOT (1U << OPTIONS_SNAPSHOT)
#define FOR_ALL (FOR_TRACE | FOR_REPORT | FOR_SERVE | FOR_SNAPSHOT)
/* What the BPF program does, which a report of a recording cannot redo. */
#define FOR_TRACERS (FOR_TRACE | FOR_SERVE | FOR_SNAPSHOT)
/* What shapes a written report, which offcpu serve does not write. */
#define FOR_WRITERS (FOR_TRACE | FOR_REPORT | FOR_SNAPSHOT)

/* Each command's usage line and what it does; its man page's SYNOPSIS. */
static const char *const usage_heads[] = {
	[OPTIONS_TRACE] =
	    "Usage: offcpu [OPTIONS] [-- COMMAND [ARG...]]\n"
	    "Records where and why threads wait off CPU, with kernel and user stacks.\n"
	    "Waits that began before a recording, or had not ended at its stop, are\n"
	    "reported too, marked (json \"open\"; \"[still-waiting]\" in the others).\n"
	    "Subcommands, each with its own --help: 'offcpu report' writes a json\n"
	    "recording in another format, 'offcpu serve' serves metrics and profiles\n"
	    "over HTTP, 'offcpu snapshot' lists the threads off CPU right now.\n",
	[OPTIONS_REPORT] =
	    "Usage: offcpu report [OPTIONS] RECORDING.json\n"
	    "Turns a json recording ('-': stdin) into another format (-f trace: a Perfetto\n"
	    "timeline, cut with --from/--to); the options below apply to it as to tracing\n"
	    "(man offcpu-report).\n",
	[OPTIONS_SERVE] =
	    "Usage: offcpu serve [--listen ADDR:PORT] [--allow-remote] [OPTIONS]\n"
	    "Records until SIGINT/SIGTERM (or -d) and serves over HTTP /metrics\n"
	    "(Prometheus), /debug/pprof/offcpu?seconds=N (pprof of the next N seconds)\n"
	    "and /healthz, with -F also /debug/pprof/profile (on CPU) and /debug/pprof/wall\n"
	    "(man offcpu-serve).\n",
	[OPTIONS_SNAPSHOT] =
	    "Usage: offcpu snapshot [-m DUR] [OPTIONS]\n"
	    "Records nothing: every selected thread off CPU right now for at least -m,\n"
	    "longest first, with its state, class, time so far and stacks\n"
	    "(man offcpu-snapshot).\n",
};

/* One option's lines of the help, if the command being helped takes it. */
static void __attribute__((format(printf, 4, 5)))
option_help(FILE *out, enum options_mode mode, unsigned int commands, const char *fmt, ...)
{
	va_list ap;

	if (!(commands & (1U << mode)))
		return;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

void options__usage(FILE *out, enum options_mode mode)
{
	char min_duration[32];

	format_duration(OPTIONS_DEFAULT_MIN_DURATION_NS, min_duration, sizeof(min_duration));
	fprintf(out, "%s\n", usage_heads[mode]);
	option_help(
	    out, mode, FOR_ALL,
	    "  -p, --pid LIST              process IDs, comma separated (all their threads)\n");
	option_help(out, mode, FOR_ALL,
		    "  -t, --tid LIST              thread IDs, comma separated\n");
	option_help(out, mode, FOR_ALL,
		    "  -c, --comm NAME             task command name, exact (repeatable)\n");
	option_help(out, mode, FOR_TRACERS,
		    "      --cgroup PATH           tasks inside this cgroup v2 directory\n");
	option_help(out, mode, FOR_TRACERS, "  -u, --user-threads-only     only user threads\n");
	option_help(out, mode, FOR_TRACERS,
		    "  -k, --kernel-threads-only   only kernel threads, idle loops shown\n");
	option_help(
	    out, mode, FOR_ALL & ~FOR_REPORT,
	    "  -m, --min-duration DUR      only waits at least this long (default %s; 0: all)\n",
	    min_duration);
	/* The recording already passed its own -m (check_report()). */
	option_help(
	    out, mode, FOR_REPORT,
	    "  -m, --min-duration DUR      only waits at least this long (default 0: every\n"
	    "                              wait the recording holds)\n");
	option_help(out, mode, FOR_ALL,
		    "  -M, --max-duration DUR      only waits at most this long\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --sample-rate N         keep 1 in N of the waits that pass (default 1)\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --short MODE            waits shorter than -m: drop (counted and summed)\n"
	    "                              or sample (kept with probability duration/min,\n"
	    "                              weighted min: unbiased totals); default %s\n",
	    OPTIONS_DEFAULT_SHORT == SHORT_SAMPLE ? "sample" : "drop");
	option_help(out, mode, FOR_ALL,
		    "      --state LIST            only these thread states: interruptible,\n"
		    "                              uninterruptible, idle, preempted, running,\n"
		    "                              stopped, traced, parked, other\n");
	option_help(
	    out, mode, FOR_TRACE | FOR_SERVE,
	    "  -d, --duration DUR          stop after this long (default: at SIGINT/SIGTERM)\n");
	option_help(
	    out, mode, FOR_WRITERS,
	    "  -f, --format FMT            text, folded, json, pprof, svg, dot, trace (default:\n"
	    "                              from -o, else text)\n");
	option_help(
	    out, mode, FOR_WRITERS,
	    "  -o, --output FILE           write here ('-': stdout); .txt .folded .json .pb.gz\n"
	    "                              .svg .dot .trace.json pick the format\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --max-entries N         slots for the selected threads: each holds one from\n"
	    "                              its first wait until it exits (default %u)\n",
	    OPTIONS_DEFAULT_MAX_ENTRIES);
	option_help(out, mode, FOR_TRACERS,
		    "      --stack-depth N         frames per stack, 1..%u (%u)\n",
		    OFFCPU_MAX_STACK_DEPTH, OFFCPU_MAX_STACK_DEPTH);
	option_help(out, mode, FOR_TRACERS,
		    "      --no-kernel-stack       do not record kernel stacks\n");
	option_help(out, mode, FOR_TRACERS,
		    "      --no-user-stack         do not record user stacks\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --call-graph MODE       user stacks: dwarf[,SIZE] (call-frame information,\n"
	    "                              SIZE bytes of stack copied per wait, default %u)\n"
	    "                              or fp (frame pointers only); default dwarf\n",
	    OPTIONS_DEFAULT_STACK_COPY_BYTES);
	option_help(
	    out, mode, FOR_ALL,
	    "      --stats                 print the health counters to stderr at the end\n");
	option_help(
	    out, mode, FOR_TRACE | FOR_SERVE,
	    "      --measure-clock         print to stderr at the end how far the kernel's\n"
	    "                              switch times, converted, are from the traced ones\n");
	option_help(
	    out, mode, FOR_ALL,
	    "      --rules FILE|PACK       wait-class rules, tried before the built-in ones\n"
	    "                              (repeatable; packs: postgres)\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --read-data             also the labels a rule pack marks as data: with\n"
	    "                              postgres, pg.query, the first 63 bytes of the\n"
	    "                              statement each backend runs; off by default,\n"
	    "                              as statements can hold anyone's data\n");
	option_help(
	    out, mode, FOR_TRACERS,
	    "      --wakers                also the waker's stacks at each wakeup, for waits\n"
	    "                              already past -m: off-wake folded and svg\n");
	option_help(
	    out, mode, FOR_TRACE | FOR_SERVE,
	    "  -F, --freq HZ               also sample threads on CPU, HZ times a second per\n"
	    "                              CPU, with the same stacks: a wall-clock profile\n"
	    "                              (0: off, the default)\n");
	option_help(out, mode, FOR_ALL,
		    "      --time KIND             what folded and svg weigh: off-cpu (default),\n"
		    "                              blocked (until the wakeup) or runq (wakeup to\n"
		    "                              switch-in: waiting for a CPU)\n");
	option_help(
	    out, mode, FOR_WRITERS,
	    "      --group-by KEY          the text report's table by tid (default), pid,\n"
	    "                              comm, title, state, wait, waker, object or a\n"
	    "                              label a rule pack reads (pg.wait_event,\n"
	    "                              pg.backend_type); with dot, pid makes processes\n"
	    "                              the nodes; object, a frame in folded and svg\n");
	option_help(out, mode, FOR_WRITERS,
		    "      --lines                 file:line of user frames in the text report\n");
	option_help(
	    out, mode, FOR_WRITERS,
	    "      --top N                 rows of each table and stacks in the text report\n"
	    "                              (default %u threads, %u stacks)\n",
	    OUTPUT_TOP_THREADS, OUTPUT_TOP_STACKS);
	option_help(out, mode, FOR_REPORT,
		    "      --from TIME             report -f trace: the timeline from here, and\n"
		    "      --to TIME               to here: seconds since the recording began\n"
		    "                              (12.5) or a DUR (1500ms)\n");
	option_help(out, mode, FOR_SERVE,
		    "      --listen ADDR:PORT      serve: where to listen (default " LISTEN_DEFAULT
		    ")\n");
	option_help(out, mode, FOR_SERVE,
		    "      --allow-remote          serve: on an address that is not loopback\n");
	option_help(out, mode, FOR_ALL, "  -v, --verbose               say more on stderr\n");
	option_help(out, mode, FOR_ALL, "  -h, --help                  this help\n");
	option_help(
	    out, mode, FOR_ALL,
	    "  -V, --version               the version; with -v, what this kernel offers\n");
	fputs("\nDUR is a number with a unit: ns, us, ms, s, m (500us, 1.5s); a bare 0.\n", out);
	if (mode == OPTIONS_TRACE)
		fputs("Ctrl-C (SIGINT) or SIGTERM stops tracing and writes the output; a second "
		      "Ctrl-C\nwhile that is under way exits at once, writing nothing.\n",
		      out);
	fprintf(out, "\n%s", options__examples);
}

static int bad_value(const char *option, const char *value, const char *why)
{
	log__error("invalid %s '%s': %s", option, value, why);
	return -EINVAL;
}

static int parse_duration_option(const char *option, const char *value, uint64_t *out)
{
	int err = parse__duration_ns(value, out);

	if (err == -ERANGE)
		return bad_value(option, value, "too large");
	if (err)
		return bad_value(option, value, "expected a number with a unit: ns, us, ms, s, m");
	return 0;
}

static int parse_number_option(const char *option, const char *value, uint64_t min, uint64_t max,
			       uint32_t *out)
{
	uint64_t n;
	char why[96];

	if (parse__uint(value, min, max, &n)) {
		snprintf(why, sizeof(why), "expected a whole number from %llu to %llu",
			 (unsigned long long)min, (unsigned long long)max);
		return bad_value(option, value, why);
	}
	*out = (uint32_t)n;
	return 0;
}

static int parse_ids(const char *option, const char *value, struct id_list *list, bool tasks,
		     bool must_exist)
{
	size_t before = list->nr, i;
	char path[64];

	if (id_list__parse(value, list))
		return bad_value(option, value, "expected positive IDs separated by commas");
	for (i = before; must_exist && i < list->nr; i++) {
		/* /proc/TID exists for every thread, listed or not. */
		snprintf(path, sizeof(path), "/proc/%u", list->ids[i]);
		if (access(path, F_OK)) {
			log__error("no such %s: %u", tasks ? "thread" : "process", list->ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* "fp", "dwarf" or "dwarf,SIZE". */
static int parse_call_graph(const char *value, struct options *o)
{
	char why[128];
	uint64_t n;

	if (!strcmp(value, "fp")) {
		o->call_graph = CALL_GRAPH_FP;
		return 0;
	}
	if (!strcmp(value, "dwarf")) {
		o->call_graph = CALL_GRAPH_DWARF;
		o->stack_copy_bytes = OPTIONS_DEFAULT_STACK_COPY_BYTES;
		return 0;
	}
	if (strncmp(value, "dwarf,", 6))
		return bad_value("--call-graph", value, "expected dwarf, dwarf,SIZE or fp");
	if (parse__uint(value + 6, OPTIONS_MIN_STACK_COPY_BYTES, OPTIONS_MAX_STACK_COPY_BYTES,
			&n) ||
	    n % 8) {
		snprintf(why, sizeof(why), "SIZE is bytes, a multiple of 8 from %u to %u",
			 OPTIONS_MIN_STACK_COPY_BYTES, OPTIONS_MAX_STACK_COPY_BYTES);
		return bad_value("--call-graph", value, why);
	}
	o->call_graph = CALL_GRAPH_DWARF;
	o->stack_copy_bytes = (uint32_t)n;
	return 0;
}

static int add_comm(struct options *o, const char *value)
{
	char **grown;

	if (!value[0] || strlen(value) >= OFFCPU_COMM_LEN)
		return bad_value("--comm", value, "a command name is 1 to 15 characters");
	grown = realloc(o->comms, (o->nr_comms + 1) * sizeof(*grown));
	if (!grown) {
		log__error("cannot hold --comm '%s': %s", value, strerror(ENOMEM));
		return -ENOMEM;
	}
	o->comms = grown;
	o->comms[o->nr_comms++] = (char *)value;
	return 0;
}

/*
 * The tables of the pg_* decoders, for the first rules file that decodes
 * with them: the file beside it or where packs are, else the built-in
 * copy. A bad file costs only its own names: it is reported and the
 * built-in tables name the waits instead.
 */
static void load_pg_events(const char *rules_path, struct rule_set *set)
{
	char path[512];
	unsigned int line = 0;
	const char *why = NULL;
	FILE *file;
	int err;

	if (set->pg_events_looked_up || !reads__use_pg_events(set))
		return;
	set->pg_events_looked_up = true;
	err = rules__open_beside(rules_path, PG_EVENTS_FILE, path, sizeof(path), &file);
	if (err) {
		log__warn("%s not read: %s; PostgreSQL's wait events named by offcpu's built-in "
			  "tables instead",
			  path,
			  err == -EPERM ? "not a regular file owned by root or by the rules file's owner "
					  "and writable by that owner alone"
					: strerror(-err));
		return;
	}
	if (!file)
		return;
	err = pg_events__parse(file, &set->pg_events, &line, &why);
	fclose(file);
	if (!err) {
		set->pg_events_path = strdup(path);
		if (!set->pg_events_path) {
			pg_events__free(set->pg_events);
			set->pg_events = NULL;
			err = -ENOMEM;
		}
	}
	if (err == -EINVAL)
		log__warn("%s line %u: %s; PostgreSQL's wait events named by offcpu's built-in "
			  "tables instead",
			  path, line, why);
	else if (err)
		log__warn("cannot read %s: %s; PostgreSQL's wait events named by offcpu's built-in "
			  "tables instead",
			  path, strerror(-err));
}

static int load_rules(const char *value, struct options *o)
{
	char path[512], why_line[800];
	unsigned int line = 0;
	const char *why = NULL;
	FILE *file = rules__open(value, path, sizeof(path));
	int err;

	if (!file)
		return bad_value("--rules", value, "no such file or rule pack");
	err = rules__parse(file, &o->rules, &line, &why);
	fclose(file);
	if (err && err != -EINVAL) {
		/* The system's error, not a line's; naming a directory is a usage error. */
		if (strcmp(path, value))
			log__error("cannot read --rules '%s' (%s): %s", value, path,
				   strerror(-err));
		else
			log__error("cannot read --rules '%s': %s", value, strerror(-err));
		return err == -EISDIR ? -EINVAL : err;
	}
	if (err) {
		/* Name the file read when a pack name stood for it. */
		if (strcmp(path, value))
			snprintf(why_line, sizeof(why_line), "%s line %u: %s", path, line, why);
		else
			snprintf(why_line, sizeof(why_line), "line %u: %s", line, why);
		return bad_value("--rules", value, why_line);
	}
	load_pg_events(path, &o->rules);
	return 0;
}

/*
 * --from/--to: seconds since the recording began, decimals allowed
 * ("12.5"), or a DUR ("1500ms"); stored as ns.
 */
static int parse_offset_option(const char *option, const char *value, uint64_t *out)
{
	char seconds[64];
	size_t n = strlen(value);
	int err;

	if (n && n < sizeof(seconds) - 1 && strspn(value, "0123456789.") == n) {
		snprintf(seconds, sizeof(seconds), "%ss", value);
		err = parse__duration_ns(seconds, out);
	} else {
		err = parse__duration_ns(value, out);
	}
	if (err == -ERANGE)
		return bad_value(option, value, "too large");
	if (err)
		return bad_value(option, value,
				 "expected seconds since the recording began (12.5) or a number "
				 "with a unit: ns, us, ms, s, m");
	return 0;
}

static int parse_format(const char *value, struct options *o)
{
	o->format = output_format__by_name(value);
	if (!o->format)
		return bad_value("--format", value,
				 "expected text, folded, json, pprof, svg, dot or trace");
	return 0;
}

/* Options offcpu serve has no use for: it writes no file and runs no command. */
static const char *not_serving(int opt)
{
	switch (opt) {
	case 'f':
		return "--format";
	case 'o':
		return "--output";
	case OPT_GROUP_BY:
		return "--group-by";
	case OPT_LINES:
		return "--lines";
	case OPT_TOP:
		return "--top";
	default:
		return NULL;
	}
}

/* Options that shape tracing itself, which a report of a recording cannot redo. */
static const char *tracing_only(int opt)
{
	switch (opt) {
	case OPT_CGROUP:
		return "--cgroup";
	case 'u':
		return "--user-threads-only";
	case 'k':
		return "--kernel-threads-only";
	case OPT_SAMPLE_RATE:
		return "--sample-rate";
	case OPT_SHORT:
		return "--short";
	case 'd':
		return "--duration";
	case OPT_MAX_ENTRIES:
		return "--max-entries";
	case OPT_STACK_DEPTH:
		return "--stack-depth";
	case OPT_NO_KERNEL_STACK:
		return "--no-kernel-stack";
	case OPT_NO_USER_STACK:
		return "--no-user-stack";
	case OPT_CALL_GRAPH:
		return "--call-graph";
	case OPT_MEASURE_CLOCK:
		return "--measure-clock";
	case OPT_READ_DATA:
		return "--read-data";
	case OPT_WAKERS:
		return "--wakers";
	case 'F':
		return "--freq";
	default:
		return NULL;
	}
}

static int parse_one(int opt, const char *arg, struct options *o)
{
	if (!o->tracing_option)
		o->tracing_option = tracing_only(opt);
	if (!o->not_serving_option)
		o->not_serving_option = not_serving(opt);
	switch (opt) {
	case 'p':
		/* A recording's processes may be long gone. */
		return parse_ids("--pid", arg, &o->pids, false, o->mode != OPTIONS_REPORT);
	case 't':
		return parse_ids("--tid", arg, &o->tids, true, o->mode != OPTIONS_REPORT);
	case 'c':
		return add_comm(o, arg);
	case OPT_CGROUP:
		o->cgroup_path = arg;
		return 0;
	case 'u':
		o->user_threads_only = true;
		return 0;
	case 'k':
		o->kernel_threads_only = true;
		return 0;
	case 'm':
		o->min_duration_given = true;
		return parse_duration_option("--min-duration", arg, &o->min_duration_ns);
	case 'M':
		return parse_duration_option("--max-duration", arg, &o->max_duration_ns);
	case OPT_SAMPLE_RATE:
		return parse_number_option("--sample-rate", arg, 1, UINT32_MAX, &o->sample_rate);
	case OPT_SHORT:
		if (!strcmp(arg, "drop"))
			o->short_mode = SHORT_DROP;
		else if (!strcmp(arg, "sample"))
			o->short_mode = SHORT_SAMPLE;
		else
			return bad_value("--short", arg, "expected drop or sample");
		return 0;
	case OPT_STATE:
		if (states__parse_list(arg, &o->state_mask))
			return bad_value("--state", arg,
					 "expected state names separated by commas (see --help)");
		return 0;
	case 'd':
		if (parse_duration_option("--duration", arg, &o->duration_ns))
			return -EINVAL;
		if (o->duration_ns == 0)
			return bad_value("--duration", arg, "must be longer than 0");
		return 0;
	case 'f':
		return parse_format(arg, o);
	case 'o':
		if (!arg[0])
			return bad_value("--output", arg, "empty file name");
		o->output_path = strcmp(arg, "-") ? arg : NULL;
		return 0;
	case OPT_MAX_ENTRIES:
		return parse_number_option("--max-entries", arg, 1, 1U << 24, &o->max_entries);
	case OPT_STACK_DEPTH:
		return parse_number_option("--stack-depth", arg, 1, OFFCPU_MAX_STACK_DEPTH,
					   &o->stack_depth);
	case OPT_NO_KERNEL_STACK:
		o->kernel_stack = false;
		return 0;
	case OPT_NO_USER_STACK:
		o->user_stack = false;
		return 0;
	case OPT_CALL_GRAPH:
		return parse_call_graph(arg, o);
	case OPT_STATS:
		o->stats = true;
		return 0;
	case OPT_MEASURE_CLOCK:
		o->measure_clock = true;
		return 0;
	case OPT_READ_DATA:
		o->read_data = true;
		return 0;
	case OPT_RULES:
		return load_rules(arg, o);
	case OPT_GROUP_BY:
		if (output_group_by__parse(arg, &o->report.group_by))
			return bad_value("--group-by", arg,
					 "expected title, comm, pid, tid, state, wait, waker or a "
					 "label name such as pg.wait_event");
		o->report.group_label = o->report.group_by == GROUP_BY_LABEL ? arg : NULL;
		return 0;
	case OPT_LINES:
		o->report.lines = true;
		return 0;
	case OPT_TOP:
		return parse_number_option("--top", arg, 1, UINT32_MAX, &o->report.top);
	case OPT_LISTEN:
		if (o->mode != OPTIONS_SERVE)
			return bad_value("--listen", arg, "only 'offcpu serve' listens");
		o->listen_text = arg;
		if (listen_addr__parse(arg, &o->listen))
			return bad_value("--listen", arg,
					 "expected ADDR:PORT, a numeric address and a port from 1 "
					 "to 65535 (127.0.0.1:9465, [::1]:9465)");
		return 0;
	case OPT_ALLOW_REMOTE:
		if (o->mode != OPTIONS_SERVE) {
			log__error("--allow-remote applies to 'offcpu serve' only");
			return -EINVAL;
		}
		o->allow_remote = true;
		return 0;
	case OPT_WAKERS:
		o->wakers = true;
		return 0;
	case 'F':
		return parse_number_option("--freq", arg, 0, OPTIONS_MAX_FREQ, &o->freq);
	case OPT_FROM:
		if (o->mode != OPTIONS_REPORT)
			return bad_value("--from", arg, "only 'offcpu report' cuts a recording");
		o->window_given = true;
		return parse_offset_option("--from", arg, &o->report.from_ns);
	case OPT_TO:
		if (o->mode != OPTIONS_REPORT)
			return bad_value("--to", arg, "only 'offcpu report' cuts a recording");
		o->window_given = true;
		if (parse_offset_option("--to", arg, &o->report.to_ns))
			return -EINVAL;
		if (!o->report.to_ns)
			return bad_value("--to", arg, "must be after the recording's start");
		return 0;
	case OPT_TIME:
		if (output_time__parse(arg, &o->report.time))
			return bad_value("--time", arg, "expected off-cpu, blocked or runq");
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case 'h':
		o->action = OPTIONS_HELP;
		return 0;
	case 'V':
		o->action = OPTIONS_VERSION;
		return 0;
	default:
		return -EINVAL;
	}
}

static int check_report(struct options *o, int argc, char **argv)
{
	if (o->tracing_option) {
		log__error("%s applies to tracing, not to 'offcpu report'", o->tracing_option);
		return -EINVAL;
	}
	if (optind >= argc) {
		log__error("'offcpu report' needs a recording: offcpu report [OPTIONS] FILE.json");
		return -EINVAL;
	}
	if (optind + 1 < argc) {
		log__error("unexpected argument '%s' (one recording at a time)", argv[optind + 1]);
		return -EINVAL;
	}
	o->recording_path = argv[optind];
	/* The recording already passed its own -m: keep every wait it holds. */
	if (!o->min_duration_given)
		o->min_duration_ns = 0;
	return 0;
}

/* offcpu serve takes no command and no output, and stays on loopback unless told. */
static int check_serve(struct options *o, int argc, char **argv)
{
	if (o->not_serving_option) {
		log__error("%s applies to writing a report, not to 'offcpu serve'",
			   o->not_serving_option);
		return -EINVAL;
	}
	if (optind < argc) {
		log__error("unexpected argument '%s' ('offcpu serve' runs no command)",
			   argv[optind]);
		return -EINVAL;
	}
	if (!o->listen_text) {
		o->listen_text = LISTEN_DEFAULT;
		listen_addr__parse(LISTEN_DEFAULT, &o->listen);
	}
	if (!o->listen.loopback && !o->allow_remote) {
		log__error("invalid --listen '%s': not a loopback address; --allow-remote serves "
			   "the profiles of this machine to whoever can reach it",
			   o->listen_text);
		return -EINVAL;
	}
	return 0;
}

/* One look, no recording: nothing to stop, nothing to run. */
static int check_snapshot(struct options *o, int argc, char **argv)
{
	if (o->duration_ns) {
		log__error("--duration applies to tracing, not to 'offcpu snapshot' (it records "
			   "nothing)");
		return -EINVAL;
	}
	if (o->measure_clock) {
		log__error("--measure-clock applies to tracing, not to 'offcpu snapshot' (it traces "
			   "no switch)");
		return -EINVAL;
	}
	if (o->freq) {
		log__error("--freq applies to tracing, not to 'offcpu snapshot' (it samples "
			   "nothing)");
		return -EINVAL;
	}
	if (optind < argc) {
		log__error("unexpected argument '%s' ('offcpu snapshot' runs no command)",
			   argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* A dot in the file's name past its first character ("out.png", not ".hidden" or "out"). */
static bool has_extension(const char *path)
{
	const char *name = strrchr(path, '/');
	const char *dot;

	name = name ? name + 1 : path;
	dot = strrchr(name, '.');
	return dot && dot > name && dot[1];
}

static int check_combination(struct options *o)
{
	if (o->user_threads_only && o->kernel_threads_only) {
		log__error("--user-threads-only and --kernel-threads-only exclude each other");
		return -EINVAL;
	}
	if (o->min_duration_ns > o->max_duration_ns) {
		log__error("--min-duration is above --max-duration: no wait could pass");
		return -EINVAL;
	}
	if (!o->format && o->output_path) {
		o->format = output_format__by_path(o->output_path);
		/* -o wait.png wrote a text report under that name: a typo is no format. */
		if (!o->format && has_extension(o->output_path)) {
			log__error("-o %s: no format has that extension: .txt .folded .json .pb.gz "
				   ".svg .dot .trace.json do, or -f names one",
				   o->output_path);
			return -EINVAL;
		}
	}
	if (!o->format)
		o->format = output_format__by_name("text");
	if (o->window_given && strcmp(o->format->name, "trace")) {
		log__error("--from and --to cut the timeline: they apply to -f trace only");
		return -EINVAL;
	}
	if (o->report.to_ns && o->report.from_ns >= o->report.to_ns) {
		log__error("--from is not before --to: nothing of the recording is between them");
		return -EINVAL;
	}
	return 0;
}

/*
 * "-c -d 1s" forgot -c's value and would trace a command named "-d" for
 * ever. A value of -c, -p or -t given as a word of its own that begins
 * with '-' is taken for that mistake; "--comm=-d" and "-c-d" still name it.
 */
static int option_looking_value(int opt, int argc, char **argv)
{
	const char *name = opt == 'c' ? "--comm" : opt == 'p' ? "--pid" : "--tid";

	if ((opt != 'c' && opt != 'p' && opt != 't') || optind < 1 || optind > argc ||
	    optarg != argv[optind - 1] || optarg[0] != '-' || !optarg[1])
		return 0;
	log__error("invalid %s '%s': a value, not an option, was expected%s", name, optarg,
		   opt == 'c' ? " (--comm=NAME for a name that begins with '-')" : "");
	return -EINVAL;
}

int options__parse(int argc, char **argv, enum options_mode mode, struct options *o)
{
	/* A report takes its options anywhere; tracing stops at COMMAND ('+'). */
	const char *shorts = mode != OPTIONS_TRACE ? short_options + 1 : short_options;
	int opt, err;

	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->min_duration_ns = OPTIONS_DEFAULT_MIN_DURATION_NS;
	o->max_duration_ns = UINT64_MAX;
	o->sample_rate = 1;
	o->short_mode = OPTIONS_DEFAULT_SHORT;
	o->max_entries = OPTIONS_DEFAULT_MAX_ENTRIES;
	o->stack_depth = OFFCPU_MAX_STACK_DEPTH;
	o->kernel_stack = true;
	o->user_stack = true;
	o->call_graph = CALL_GRAPH_DWARF;
	o->stack_copy_bytes = OPTIONS_DEFAULT_STACK_COPY_BYTES;

	opterr = 0;
	/* 0, not 1: glibc then forgets a previous parse (a cluster it stopped in). */
	optind = 0;
	while ((opt = getopt_long(argc, argv, shorts, long_options, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			if (optopt && optopt < 256)
				log__error("unknown option or missing value: '-%c'", optopt);
			else
				log__error("unknown option or missing value: '%s'",
					   argv[optind - 1]);
			return -EINVAL;
		}
		err = option_looking_value(opt, argc, argv);
		err = err ?: parse_one(opt, optarg, o);
		if (err)
			return err;
		/* --version goes on for a -v after it: the kernel's features too. */
		if (o->action == OPTIONS_HELP)
			return 0;
	}
	if (o->action != OPTIONS_RUN)
		return 0;
	/*
	 * Who asks for kernel threads, or names threads, asks for all their
	 * waits, idle loops too; a report of a recording can only name them.
	 */
	o->report.show_idle = o->kernel_threads_only || o->pids.nr || o->tids.nr || o->nr_comms;
	if (mode == OPTIONS_REPORT) {
		err = check_report(o, argc, argv);
		if (err)
			return err;
	} else if (mode == OPTIONS_SERVE) {
		err = check_serve(o, argc, argv);
		if (err)
			return err;
	} else if (mode == OPTIONS_SNAPSHOT) {
		err = check_snapshot(o, argc, argv);
		if (err)
			return err;
	} else if (optind < argc) {
		/* getopt stops at "--" and consumes it; anything else is stray. */
		if (strcmp(argv[optind - 1], "--")) {
			log__error("unexpected argument '%s' (a command goes after '--')",
				   argv[optind]);
			return -EINVAL;
		}
		o->command = &argv[optind];
	}
	return check_combination(o);
}

void options__free(struct options *o)
{
	id_list__free(&o->pids);
	id_list__free(&o->tids);
	free(o->comms);
	o->comms = NULL;
	o->nr_comms = 0;
	rules__free(&o->rules);
}
