// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu: where and why threads wait off CPU.
 *
 * main() picks the subcommand from its table (tracing when there is none)
 * and wires the modules together: options, the output file (opened first
 * so a bad path fails before tracing), the tracer, the collector that
 * feeds the profile, and the output back-end. Each error is said once, in
 * one line, by whoever can name what was wrong: a bad value by options.c,
 * which knows the option; a malformed recording by its reader, which knows
 * the line (main does not repeat its -EINVAL); a tracer that cannot start by
 * the tracer, which knows the step that failed (BTF, a tracepoint, the
 * verifier, memory); everything else comes up as negative errno and is
 * reported in this file. The exit status is 0, 1
 * (environment) or 2 (usage), or the status of -- COMMAND.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/types.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/caps.h"
#include "cli/command.h"
#include "cli/comm_scan.h"
#include "cli/exit_status.h"
#include "cli/main_binary.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/snapshot.h"
#include "cli/tracer_start.h"
#include "lib/array.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/stop_signals.h"
#include "output/output.h"
#include "profile/profile.h"
#include "serve/listen.h"
#ifndef OFFCPU_STATIC
#include "serve/serve.h"
#endif
#include "symbols/ksyms.h"
#include "symbols/symbolizer.h"
#include "trace/collector.h"
#include "trace/counters.h"
#include "trace/label_reader.h"
#include "trace/recording.h"
#include "trace/tracer.h"

#define OFFCPU_VERSION "0.1.0"
/* make static: one binary to copy; only offcpu serve is left out (Makefile, STATIC_LDLIBS). */
#ifdef OFFCPU_STATIC
#define OFFCPU_BUILD                                                                               \
	" (static: libbpf, libelf, libdw, zlib, liblzma, libbz2, libiberty linked in; offcpu "     \
	"serve left out: libmicrohttpd's static library needs p11-kit's, which Debian 12 lacks)"
#else
#define OFFCPU_BUILD ""
#endif
/* The BPF side wakes us only when records pile up: poll at least this often. */
#define POLL_INTERVAL_MS 50

/*
 * timeout -s INT signals offcpu and then its process group: two SIGINTs
 * microseconds apart (a few ms when offcpu, woken by the first, preempts
 * the sender). Signals this close are one stop request; two Ctrl-Cs, even
 * a held key's autorepeat (25 a second by default), are further apart.
 */
#define SAME_STOP_NS (10 * 1000 * 1000ULL)
/*
 * On a loaded machine the sender waits longer than that between its two
 * kill(2)s (woken offcpu preempts it): 2 of 15 back-to-back pairs came
 * over 10 ms apart beside three builds. A second signal from the process
 * that sent the first (kill(2), not the terminal's Ctrl-C, which the
 * kernel sends) is the same request for this long.
 */
#define SAME_SENDER_STOP_NS (1000 * 1000 * 1000ULL)

static volatile sig_atomic_t stop_requested;
static uint64_t stop_requested_ns;
static pid_t stop_sender; /* the first signal's sender, by kill(2); 0: none */
static volatile sig_atomic_t command_pid;
/* The output's temporary file, for a second signal to remove; "" once renamed. */
static char temp_output_path[PATH_MAX];
/* The output as a second signal names it: the -o path, or "(stdout)". */
static char output_path_said[PATH_MAX] = "(stdout)";
/* The signals as offcpu was started with them, for -- COMMAND to start with. */
static struct command_signals inherited_signals;

/* Said from a signal handler: write(2) of pieces, no stdio. */
static void say_output_lost(int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
	const char *parts[] = { "offcpu: second ", name, ": exiting at once; the output ",
				output_path_said, " is not written\n" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		if (write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0)
			return;
	}
}

/* The one stop request it belongs to, or a second one. */
static bool same_stop(const siginfo_t *info, uint64_t now_ns)
{
	uint64_t since_ns = now_ns - stop_requested_ns;

	if (since_ns < SAME_STOP_NS)
		return true;
	return info && info->si_code == SI_USER && stop_sender && info->si_pid == stop_sender &&
	       since_ns < SAME_SENDER_STOP_NS;
}

static void on_signal(int sig, siginfo_t *info, void *unused)
{
	uint64_t now_ns = clock__monotonic_ns();

	(void)unused;
	/* With -- COMMAND the command decides how to stop; offcpu follows it. */
	if (command_pid > 0)
		kill(command_pid, sig);
	if (stop_requested && same_stop(info, now_ns))
		return;
	/* A second signal: the user will not wait for the output. Leave none. */
	if (stop_requested) {
		if (temp_output_path[0])
			unlink(temp_output_path);
		say_output_lost(sig);
		_exit(128 + sig);
	}
	stop_requested_ns = now_ns;
	stop_sender = info && info->si_code == SI_USER ? info->si_pid : 0;
	stop_requested = 1;
}

/* offcpu report has nothing to finish on a signal: it leaves, and leaves no file. */
static void on_report_signal(int sig, siginfo_t *info, void *unused)
{
	(void)info;
	(void)unused;
	if (temp_output_path[0])
		unlink(temp_output_path);
	_exit(128 + sig);
}

static void install_signal_handlers(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* One handler at a time: SIGTERM inside SIGINT's would race on the stop time. */
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	/* No SA_RESTART: a signal must wake the ring buffer poll. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	return collector__record(ctx, data, size);
}

/* A CPython process the collector found; the BPF side walks its frames. */
static int on_python(void *ctx, uint32_t pid, const struct offcpu_python_layout *l)
{
	return tracer__python_add(ctx, pid, l);
}

/* The environment checks that need no BPF call: one clear line each. */
static int check_environment(void)
{
	if (!caps__can_trace()) {
		log__error("not permitted: tracing needs root, or CAP_BPF and CAP_PERFMON");
		return -EPERM;
	}
	return 0;
}

struct session {
	struct options *opts;
	struct output_file output;
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct collector *collector;
	struct tracer *tracer;
	struct command command;
	bool has_command;
	struct id_list pids; /* -p, plus the command's PID */
	struct label_reader *label_reader; /* --rules' read lines */
};

/* A matched process's reads, into the BPF map. */
static int give_reads(void *ctx, uint32_t pid, const struct offcpu_reads *reads)
{
	return tracer__set_reads(ctx, pid, reads);
}

/*
 * Loaded, not attached: the processes running now, read from their first
 * wait; and CPython looked for in those the start finds waiting, whose
 * waits may still be open at the stop.
 */
static void before_attach(void *ctx, struct tracer *t)
{
	struct session *s = ctx;

	label_reader__attach(s->label_reader, give_reads, t);
	/* Test-only: bench/run's baseline without Python frames. */
	if (!s->opts->env.no_python)
		collector__set_python_sink(s->collector, on_python, t);
}

static int start_tracer(struct session *s)
{
	struct options *o = s->opts;
	struct tracer_opts to;
	int err;

	tracer_start__opts(o, &to);
	to.sample_rate = o->sample_rate;
	to.follow_forks = s->has_command;
	to.pids = &s->pids;
	to.before_attach = before_attach;
	to.before_attach_ctx = s;
	to.label_reads = o->rules.nr_groups > 0;
	/* The wakeup programs cost, measured by absence (bench/run). */
	to.wakeups = !o->env.no_wakeups;
	to.waker_stacks = o->wakers;
	to.short_sample = o->short_mode == SHORT_SAMPLE;
	/* Nothing of -- COMMAND was off CPU before it started. */
	to.date_open_waits = !s->has_command;
	err = tracer_start__new(o, &to, on_record, s->collector, &s->tracer);
	if (err)
		return err;
	/* What was waited before this is in no total: a profile is of its window. */
	s->profile->window_start_ns = tracer__start_ns(s->tracer);
	/*
	 * Attached: once more, for what forked or exec'd between the first
	 * look and attaching; from now on their records say.
	 */
	label_reader__attach(s->label_reader, give_reads, s->tracer);
	/* Loaded and attached: what is left is reading /proc and files. */
	caps__drop_or_warn("attaching");
	return 0;
}

static int record(struct session *s)
{
	uint64_t started_ns = clock__monotonic_ns(), duration_ns = s->opts->duration_ns;
	uint64_t deadline = 0, counters[OFFCPU_CNT_BPF_MAX];
	struct progress progress;
	struct timespec now;
	int err = 0;

	/* -d 307445734m is a valid DUR: past the clock's range it means never, not at once. */
	if (duration_ns)
		deadline =
		    duration_ns > UINT64_MAX - started_ns ? UINT64_MAX : started_ns + duration_ns;
	clock_gettime(CLOCK_REALTIME, &now);
	s->profile->start_time_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	progress__init(&progress, stderr, isatty(STDERR_FILENO), s->opts->verbose, s->has_command,
		       started_ns);

	while (!stop_requested) {
		err = tracer__poll(s->tracer,
				   symbolizer__poll_timeout_ms(s->symbolizer, POLL_INTERVAL_MS));
		if (err == -EINTR)
			err = 0;
		if (err)
			break;
		symbolizer__tick(s->symbolizer);
		/* A long recording's processes whose exit record was lost. */
		if (collector__reap(s->collector, clock__monotonic_ns()))
			log__warn("cannot free the processes gone: out of memory");
		if (s->has_command && command__poll_exit(&s->command))
			break;
		if (deadline && clock__monotonic_ns() >= deadline)
			break;
		if (progress__due(&progress, clock__monotonic_ns()) &&
		    !tracer__counters(s->tracer, counters))
			progress__show(&progress, clock__monotonic_ns(), counters);
	}
	progress__end(&progress);
	if (!err)
		err = tracer__stop(s->tracer, s->profile->counters);
	s->profile->duration_ns = clock__monotonic_ns() - started_ns;
	if (err) {
		log__error("reading trace records failed: %s", strerror(-err));
		return err;
	}
	err = collector__finish(s->collector);
	if (err)
		log__error("cannot finish the profile: %s", strerror(-err));
	return err;
}

/*
 * "cannot write output file": a bad -o is a usage error, before anything is
 * read or traced; out of memory is not the path's fault. Opened with SIGINT
 * and SIGTERM held, so that a handler knows of any temporary file there is.
 * The exit status.
 */
static int open_output(const char *path, struct output_file *out)
{
	sigset_t saved;
	int err;

	stop_signals__hold(&saved);
	err = output_file__open(path, out);
	if (!err && out->temp_path)
		snprintf(temp_output_path, sizeof(temp_output_path), "%s", out->temp_path);
	if (!err && path && strcmp(path, "-"))
		snprintf(output_path_said, sizeof(output_path_said), "'%s'", path);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (!err)
		return 0;
	log__error("cannot write output file '%s': %s", path ?: "-",
		   out->refused ?: strerror(-err));
	return err == -ENOMEM ? EXIT_ENVIRONMENT : EXIT_USAGE;
}

/*
 * The profile in the chosen format, into the output, committed; then --stats.
 * The exit status: 0, EXIT_ENVIRONMENT, or EXIT_PIPE when stdout was closed.
 */
static int write_profile(struct output_file *output, const struct profile *p,
			 const struct options *o, const char *stats_heading)
{
	int err = output_format__write(o->format, output->stream, p, &o->report);

	err = err ?: output_file__commit(output);
	temp_output_path[0] = '\0';
	if (err && err != -EPIPE)
		log__error("cannot write the output: %s", output->refused ?: strerror(-err));
	if (o->stats) {
		fprintf(stderr, "%s\n", stats_heading);
		counters__print(stderr, p->counters, "  ");
	}
	if (err == -EPIPE)
		return EXIT_PIPE;
	return err ? EXIT_ENVIRONMENT : 0;
}

/* The exit status, as write_profile's. */
static int write_output(struct session *s)
{
	uint64_t bpf_counters[OFFCPU_CNT_BPF_MAX];
	int err = tracer__counters(s->tracer, bpf_counters);
	unsigned int i;

	if (err) {
		log__error("cannot read the health counters: %s", strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	for (i = 0; i < OFFCPU_CNT_BPF_MAX; i++)
		s->profile->counters[i] += bpf_counters[i];
	return write_profile(&s->output, s->profile, s->opts, "offcpu health counters:");
}

/* Before tracing, whatever failed (memory, mostly) is named by what it was for. */
static int setup_failed(const char *what, int err)
{
	log__error("cannot set up %s: %s", what, strerror(-err));
	return EXIT_ENVIRONMENT;
}

/* Once tracing: a task that takes the name between the scan and the attach is traced. */
static void warn_comms_not_running(const struct options *o)
{
	bool *found;
	size_t i;

	if (!o->nr_comms)
		return;
	found = calloc(o->nr_comms, sizeof(*found));
	if (!found || comm_scan__running("/proc", o->comms, o->nr_comms, found)) {
		free(found);
		return;
	}
	for (i = 0; i < o->nr_comms; i++) {
		if (!found[i])
			log__warn("no task is named '%s' now: only one that starts, or takes that "
				  "name, while tracing is recorded",
				  o->comms[i]);
	}
	free(found);
}

/* The tracer follows -p's processes and the command's (0: none). */
static int traced_pids(const struct id_list *given, pid_t command, struct id_list *out)
{
	size_t nr = given->nr + (command > 0);

	if (!nr)
		return 0;
	out->ids = malloc(nr * sizeof(*out->ids));
	if (!out->ids)
		return -ENOMEM;
	/* -- COMMAND without -p: no ids to copy, and given->ids is NULL. */
	if (given->nr)
		memcpy(out->ids, given->ids, given->nr * sizeof(*out->ids));
	if (command > 0)
		out->ids[given->nr] = (uint32_t)command;
	out->nr = nr;
	return 0;
}

static int setup(struct session *s)
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
	int err, ksyms_err, status;

	status = open_output(o->output_path, &s->output);
	if (status)
		return status;
	err = check_environment();
	if (err)
		return EXIT_ENVIRONMENT;
	ksyms_err = ksyms__load_system(&ksyms);
	err = profile__new(o->format->lists_waits, &s->profile);
	if (err) {
		ksyms__free(ksyms);
		return setup_failed("the profile", err);
	}
	/* Sampling says so in every format, whether or not a sample comes. */
	s->profile->oncpu.period_ns = options__sample_period_ns(o);
	/* It owns ksyms from here on, whether it fails or not. */
	err = symbolizer__new(s->profile->strings, s->profile->inlines, ksyms, &s->symbolizer);
	if (err)
		return setup_failed("the symbolizer", err);
	symbolizer__set_limits(s->symbolizer, &o->env.limits);
	err = collector__new(s->profile, s->symbolizer, &co, &s->collector);
	if (err)
		return setup_failed("the collector of trace records", err);
	err = label_reader__new(&o->rules, &s->label_reader);
	if (err)
		return setup_failed("the labels of rule packs", err);
	label_reader__read_data(s->label_reader, o->read_data);
	collector__set_label_reader(s->collector, s->label_reader);
	collector__set_weights(s->collector, o->short_mode == SHORT_SAMPLE ? o->min_duration_ns : 0,
			       o->sample_rate);
	if (o->command && collector__account_threads(s->collector))
		return setup_failed("the thread accounts", -ENOMEM);
	if (o->command) {
		err = command__start(o->command, &inherited_signals, &s->command);
		if (err) {
			log__error("cannot start '%s': %s", o->command[0], strerror(-err));
			return EXIT_ENVIRONMENT;
		}
		s->has_command = true;
		command_pid = s->command.pid;
	}
	main_binary__find(o->command, &o->pids, main_binary, sizeof(main_binary));
	if (main_binary[0] && profile__set_main_binary(s->profile, main_binary))
		return setup_failed("the profile", -ENOMEM);
	err = traced_pids(&o->pids, s->has_command ? s->command.pid : 0, &s->pids);
	if (err)
		return setup_failed("the process filter", err);
	status = start_tracer(s);
	/* Said once tracing works: if it cannot start, that is the one line to read. */
	if (!status && ksyms_err)
		log__warn("kernel symbols unavailable (%s): kernel frames stay addresses",
			  strerror(-ksyms_err));
	if (!status)
		warn_comms_not_running(o);
	return status;
}

static void teardown(struct session *s)
{
	if (s->has_command)
		command__kill(&s->command);
	if (s->output.stream)
		output_file__abort(&s->output);
	tracer__free(s->tracer);
	label_reader__free(s->label_reader);
	collector__free(s->collector);
	symbolizer__free(s->symbolizer);
	profile__free(s->profile);
	id_list__free(&s->pids);
}

/*
 * A recording is a regular file, or "-" for stdin: /dev/zero, or a symlink
 * to it, is an endless file that never ends a line (6.1 GB read in 30 s).
 * A directory keeps the reader's message; a pipe on stdin is bounded by
 * the reader's line cap (RECORDING_MAX_LINE).
 */
static FILE *open_recording(const char *path)
{
	struct stat st;
	FILE *in;

	if (!strcmp(path, "-"))
		return stdin;
	in = fopen(path, "re");
	if (!in) {
		log__error("cannot read recording '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(in), &st) || S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
		return in;
	log__error("cannot read recording '%s': not a regular file (a pipe goes on stdin: '-')",
		   path);
	fclose(in);
	return NULL;
}

/* offcpu report: a saved json recording, written in another format. */
static int report(struct options *o)
{
	struct recording_filter filter = {
		.pids = &o->pids,
		.tids = &o->tids,
		.comms = o->comms,
		.nr_comms = o->nr_comms,
		.state_mask = o->state_mask,
		.min_duration_ns = o->min_duration_ns,
		.max_duration_ns = o->max_duration_ns,
		.rules = &o->rules,
	};
	struct output_file output;
	struct profile *profile = NULL;
	struct id_list no_pids = { 0 };
	char main_binary[PATH_MAX];
	FILE *in;
	int err, status;

	install_signal_handlers(on_report_signal);
	in = open_recording(o->recording_path);
	if (!in)
		return EXIT_USAGE;
	status = open_output(o->output_path, &output);
	if (status) {
		fclose(in);
		return status;
	}
	err = profile__new(o->format->lists_waits, &profile);
	if (err) {
		fclose(in);
		output_file__abort(&output);
		return setup_failed("the profile", err);
	}
	err = recording__read(in, o->recording_path, &filter, profile);
	fclose(in);
	/*
	 * A recording names the executable it profiled; an older one does
	 * not: then offcpu's own (-p here selects waits, of processes that may be gone).
	 */
	if (!err && !profile->main_binary) {
		main_binary__find(NULL, &no_pids, main_binary, sizeof(main_binary));
		if (main_binary[0])
			err = profile__set_main_binary(profile, main_binary);
	}
	if (err) {
		if (err != -EINVAL)
			log__error("cannot read recording '%s': %s", o->recording_path,
				   strerror(-err));
		output_file__abort(&output);
		temp_output_path[0] = '\0';
		profile__free(profile);
		return err == -EINVAL ? EXIT_USAGE : EXIT_ENVIRONMENT;
	}
	status = write_profile(&output, profile, o, "offcpu health counters (of the recording):");
	/* Removes the temporary file if the writing failed; nothing once committed. */
	output_file__abort(&output);
	profile__free(profile);
	return status;
}

/* offcpu [OPTIONS] [-- COMMAND]: trace, then write the profile. */
static int trace(struct options *o)
{
	struct session s = { .opts = o };
	int status;

	install_signal_handlers(on_signal);
	status = setup(&s);
	if (!status) {
		if (s.has_command)
			command__release(&s.command);
		else
			log__info("tracing; stop with Ctrl-C");
		status = record(&s) ? EXIT_ENVIRONMENT : write_output(&s);
	}
	if (s.has_command && !status) {
		while (!command__poll_exit(&s.command))
			usleep(10000);
		status = s.command.status;
	}
	teardown(&s);
	return status;
}

#ifdef OFFCPU_STATIC
/* Make static links no HTTP server (Makefile, STATIC_LDLIBS). */
static int serve(struct options *o)
{
	(void)o;
	log__error("offcpu serve is not in the static build (libmicrohttpd's static library "
		   "needs p11-kit's, which Debian 12 does not ship): run the dynamic offcpu");
	return EXIT_ENVIRONMENT;
}
#else
/*
 * offcpu serve. The port is bound first, so a taken one fails
 * before anything is loaded; the HTTP threads start once capabilities are
 * dropped (serve__run), so none of them ever holds more.
 */
static int serve(struct options *o)
{
	struct session s = { .opts = o };
	struct serve_opts so = {
		.duration_ns = o->duration_ns,
		.verbose = o->verbose,
		.stats = o->stats,
		.show_idle = o->report.show_idle,
		.sample_period_ns = options__sample_period_ns(o),
		.stop = &stop_requested,
		.rotate_stacks = o->env.rotate_stacks,
		.memstats_interval_ns = o->env.memstats_interval_ns,
		.sweep_every_tick = o->env.sweep_strings,
	};
	int status;

	install_signal_handlers(on_signal);
	so.listen_fd = listen_addr__bind(&o->listen);
	if (so.listen_fd < 0) {
		log__error("cannot listen on %s: %s", o->listen_text, strerror(-so.listen_fd));
		return EXIT_ENVIRONMENT;
	}
	status = setup(&s);
	if (status) {
		close(so.listen_fd);
	} else {
		log__info(
		    "serving on http://%s/metrics and /debug/pprof/offcpu%s; stop with Ctrl-C",
		    o->listen_text, o->freq ? ", /debug/pprof/profile, /debug/pprof/wall" : "");
		status = serve__run(&so, s.tracer, s.collector, s.profile, s.symbolizer)
			     ? EXIT_ENVIRONMENT
			     : 0;
	}
	teardown(&s);
	return status;
}
#endif

struct subcommand {
	const char *name; /* argv[1] */
	enum options_mode mode;
	int (*run)(struct options *o);
};

static const struct subcommand subcommands[] = {
	{ "report", OPTIONS_REPORT, report },
	{ "serve", OPTIONS_SERVE, serve },
	{ "snapshot", OPTIONS_SNAPSHOT, snapshot__run },
};

/* Without a subcommand's name first, offcpu traces. */
static const struct subcommand tracing = { NULL, OPTIONS_TRACE, trace };

static const struct subcommand *find_subcommand(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc > 1 && i < ARRAY_SIZE(subcommands); i++) {
		if (!strcmp(argv[1], subcommands[i].name))
			return &subcommands[i];
	}
	return &tracing;
}

/*
 * Started with 0, 1 or 2 closed (2>&-), the next file opened takes its
 * number: the output file became stderr, and -v's messages went into the
 * JSON. Each closed one is /dev/null instead, before any other open.
 */
static int open_standard_descriptors(void)
{
	int fd, null;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
		if (null < 0)
			return -errno;
		/* The lowest free number: fd itself, the ones below being open. */
		if (null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct subcommand *sub = find_subcommand(argc, argv);
	struct options opts;
	int status, err;

	err = open_standard_descriptors();
	if (err) {
		log__error("cannot open /dev/null for a closed stdin, stdout or stderr: %s",
			   strerror(-err));
		return EXIT_ENVIRONMENT;
	}
	/* Before any signal is touched: the command gets them as offcpu got them. */
	command_signals__save(&inherited_signals);
	if (sub != &tracing) {
		argc--;
		argv++;
	}
	err = options__parse(argc, argv, sub->mode, &opts);
	if (err) {
		/* Said already; only a bad value is helped by the usage, its command's own. */
		if (err == -EINVAL && sub != &tracing)
			fprintf(stderr, "Try 'offcpu %s --help'.\n", sub->name);
		else if (err == -EINVAL)
			fputs("Try 'offcpu --help'.\n", stderr);
		options__free(&opts);
		return err == -EINVAL ? EXIT_USAGE : EXIT_ENVIRONMENT;
	}
	if (opts.action == OPTIONS_HELP) {
		options__usage(stdout, sub->mode);
		options__free(&opts);
		return 0;
	}
	if (opts.action == OPTIONS_VERSION) {
		printf("offcpu %s%s\n", OFFCPU_VERSION, OFFCPU_BUILD);
		/* -v: and what this kernel has of what offcpu uses. */
		err = opts.verbose ? kernel_features__print(stdout, NULL, tracer__each_tracepoint) : 0;
		options__free(&opts);
		return err ? EXIT_ENVIRONMENT : 0;
	}
	log__set_verbose(opts.verbose);
	if (env_vars__read(&opts.env)) {
		options__free(&opts);
		return EXIT_USAGE;
	}
	/* A closed stdout (offcpu | head) is an EPIPE error, not a kill. */
	signal(SIGPIPE, SIG_IGN);
	status = sub->run(&opts);
	options__free(&opts);
	return status;
}
