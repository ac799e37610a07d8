// SPDX-License-Identifier: GPL-2.0
/*
 * The command line: defaults written once, --top, report's options, parsing
 * twice, each command's help.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "classify/pg_events.h"
#include "cli/options.h"

static int parse(enum options_mode mode, struct options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options__parse(argc, argv, mode, o);
}

/* A compound literal: argv lives as long as the test, as o.command may point into it. */
#define PARSE(mode, o, ...) parse(mode, o, (char *[]){ __VA_ARGS__, NULL })

static void defaults(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu"), 0);
	assert_int_equal(o.mode, OPTIONS_TRACE);
	assert_int_equal(o.min_duration_ns, OPTIONS_DEFAULT_MIN_DURATION_NS);
	assert_int_equal(o.max_entries, OPTIONS_DEFAULT_MAX_ENTRIES);
	assert_int_equal(o.report.top, 0);
	assert_null(o.command);
	options__free(&o);
}

static char *usage_text(enum options_mode mode)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	options__usage(out, mode);
	assert_int_equal(fclose(out), 0);
	return text;
}

/* The help says the defaults the options take. */
static void help_shows_the_defaults(void **state)
{
	char *text = usage_text(OPTIONS_TRACE), want[64];

	(void)state;
	/* The -m default offcpu.1 documents; the help renders the constant as a DUR. */
	assert_int_equal(OPTIONS_DEFAULT_MIN_DURATION_NS, 1000000);
	assert_non_null(strstr(text, "(default 1ms; 0: all)"));
	assert_non_null(strstr(text, OPTIONS_DEFAULT_SHORT == SHORT_SAMPLE
					 ? "unbiased totals); default sample\n"
					 : "unbiased totals); default drop\n"));
	snprintf(want, sizeof(want), "until it exits (default %u)", OPTIONS_DEFAULT_MAX_ENTRIES);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "(default %u threads, %u stacks)", OUTPUT_TOP_THREADS,
		 OUTPUT_TOP_STACKS);
	assert_non_null(strstr(text, want));
	free(text);
	/* A report keeps every wait of the recording unless -m says otherwise. */
	text = usage_text(OPTIONS_REPORT);
	assert_non_null(strstr(text, "(default 0: every\n"));
	assert_null(strstr(text, "(default 1ms"));
	free(text);
}

/*
 * The help ends with examples, as BCC's tools and perf's do: system wide,
 * one process, a command, PostgreSQL, a flame graph, pprof, a report; each
 * one a command line these options parse.
 */
static void help_ends_with_examples(void **state)
{
	static const char *const kinds[] = { "offcpu -d 10s ",	 "offcpu -p ",	"offcpu -- ",
					     "--rules postgres", "-o wait.svg", "-o wait.pb.gz",
					     "offcpu report " };
	char *text = usage_text(OPTIONS_TRACE), *at = strstr(text, "\nExamples:\n"), *copy, *line;
	char self[16], *save, *other;
	enum options_mode mode;
	size_t i;

	(void)state;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	assert_non_null(at);
	assert_string_equal(at + 1, options__examples);
	/* The subcommands' man pages say their --help has the examples too. */
	for (mode = OPTIONS_REPORT; mode <= OPTIONS_SNAPSHOT; mode++) {
		other = usage_text(mode);
		assert_non_null(strstr(other, "\nExamples:\n"));
		assert_string_equal(strstr(other, "\nExamples:\n") + 1, options__examples);
		free(other);
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!strstr(at, kinds[i]))
			fail_msg("no example with '%s'", kinds[i]);
	}
	copy = strdup(options__examples);
	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *words[32], *w, *wsave, *cmd;
		int n = 0;
		struct options o;

		cmd = strstr(line, "offcpu ");
		if (!cmd)
			continue;
		/* Up to the description, two blanks or more away. */
		w = strstr(cmd, "  ");
		if (w)
			*w = '\0';
		/*
		 * The example's PID, here one that exists; the pack beside this
		 * test binary is the repository's file.
		 */
		for (w = strtok_r(cmd, " ", &wsave); w && n < 31; w = strtok_r(NULL, " ", &wsave)) {
			if (!strcmp(w, "1234"))
				w = self;
			else if (n && !strcmp(words[n - 1], "--rules"))
				w = "rules/postgres.rules";
			words[n++] = w;
		}
		words[n] = NULL;
		if (n > 1 && !strcmp(words[1], "report"))
			assert_int_equal(parse(OPTIONS_REPORT, &o, words + 1), 0);
		else if (n > 1 && !strcmp(words[1], "snapshot"))
			assert_int_equal(parse(OPTIONS_SNAPSHOT, &o, words + 1), 0);
		else
			assert_int_equal(parse(OPTIONS_TRACE, &o, words), 0);
		options__free(&o);
	}
	free(copy);
	free(text);
}

/* Whether the command takes --name: parsed with a value it accepts, its refusal not shown. */
static bool takes(enum options_mode mode, const char *name, const char *value)
{
	char option[32], *argv[8];
	struct options o;
	int argc = 0, saved, null, err;

	snprintf(option, sizeof(option), "--%s", name);
	argv[argc++] = mode == OPTIONS_TRACE ? "offcpu" : "sub";
	/* A report's --from and --to cut a timeline, and it reads one recording. */
	if (mode == OPTIONS_REPORT) {
		argv[argc++] = "-f";
		argv[argc++] = "trace";
	}
	argv[argc++] = option;
	if (value)
		argv[argc++] = (char *)value;
	if (mode == OPTIONS_REPORT)
		argv[argc++] = "rec.json";
	argv[argc] = NULL;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && null >= 0);
	assert_int_equal(dup2(null, STDERR_FILENO), STDERR_FILENO);
	err = options__parse(argc, argv, mode, &o);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(null);
	options__free(&o);
	if (err && err != -EINVAL)
		fail_msg("%s: %s", option, strerror(-err));
	return !err;
}

/*
 * The lines of a help that list --name, or any option when name is NULL:
 * "  -x, --name ..." or "      --name ..." (a description goes on further in).
 */
static size_t tag_lines(const char *help, const char *name)
{
	size_t n = name ? strlen(name) : 0, found = 0;
	const char *line, *next, *at;

	for (line = help; line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : NULL;
		at = line + strspn(line, " ");
		if (at - line < 2 || at - line > 6)
			continue;
		if (at[0] == '-' && at[1] != '-' && at[2] == ',' && at[3] == ' ')
			at += 4;
		if (strncmp(at, "--", 2))
			continue;
		at += 2;
		if (!name || (!strncmp(at, name, n) && (at[n] == ' ' || at[n] == '\n')))
			found++;
	}
	return found;
}

/*
 * Each command's --help lists exactly the options its parser takes, as its
 * man page does (tests/integration/test_docs.py checks the pages and every
 * option of the parser's table); its usage line names the command.
 */
static void help_lists_what_each_command_takes(void **state)
{
	/* A value each option's parser accepts, so that only the command decides. */
	static const struct {
		const char *name;
		const char *value; /* NULL: takes none */
	} options[] = {
		{ "pid", "1" },
		{ "tid", "1" },
		{ "comm", "sh" },
		{ "cgroup", "/sys/fs/cgroup" },
		{ "user-threads-only", NULL },
		{ "kernel-threads-only", NULL },
		{ "min-duration", "1ms" },
		{ "max-duration", "1s" },
		{ "sample-rate", "2" },
		{ "short", "sample" },
		{ "state", "interruptible" },
		{ "duration", "1s" },
		{ "format", "json" },
		{ "output", "out.json" },
		{ "max-entries", "16" },
		{ "stack-depth", "8" },
		{ "no-kernel-stack", NULL },
		{ "no-user-stack", NULL },
		{ "call-graph", "fp" },
		{ "stats", NULL },
		{ "measure-clock", NULL },
		{ "read-data", NULL },
		{ "rules", "rules/postgres.rules" },
		{ "group-by", "tid" },
		{ "lines", NULL },
		{ "top", "3" },
		{ "listen", "127.0.0.1:9466" },
		{ "allow-remote", NULL },
		{ "wakers", NULL },
		{ "freq", "99" },
		{ "time", "off-cpu" },
		{ "from", "1" },
		{ "to", "2" },
		{ "verbose", NULL },
		{ "help", NULL },
		{ "version", NULL },
	};
	static const char *const command[] = {
		[OPTIONS_TRACE] = "offcpu",
		[OPTIONS_REPORT] = "offcpu report",
		[OPTIONS_SERVE] = "offcpu serve",
		[OPTIONS_SNAPSHOT] = "offcpu snapshot",
	};
	static const char *const usage[] = {
		[OPTIONS_TRACE] = "Usage: offcpu [OPTIONS] [-- COMMAND [ARG...]]\n",
		[OPTIONS_REPORT] = "Usage: offcpu report [OPTIONS] RECORDING.json\n",
		[OPTIONS_SERVE] =
		    "Usage: offcpu serve [--listen ADDR:PORT] [--allow-remote] [OPTIONS]\n",
		[OPTIONS_SNAPSHOT] = "Usage: offcpu snapshot [-m DUR] [OPTIONS]\n",
	};
	enum options_mode mode;
	size_t i, nr_listed;
	char *help;

	(void)state;
	for (mode = OPTIONS_TRACE; mode <= OPTIONS_SNAPSHOT; mode++) {
		help = usage_text(mode);
		assert_memory_equal(help, usage[mode], strlen(usage[mode]));
		nr_listed = 0;
		for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
			bool listed = tag_lines(help, options[i].name) == 1;

			if (listed != takes(mode, options[i].name, options[i].value))
				fail_msg("%s --help %s --%s", command[mode],
					 listed ? "lists, though it refuses," : "lacks",
					 options[i].name);
			nr_listed += listed;
		}
		/* And none but those. */
		assert_int_equal(tag_lines(help, NULL), nr_listed);
		free(help);
	}
}

/* -o picks the format by its extension; one no format has is an error, not a text report. */
static void output_extension(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-o", "dir.d/wait.svg"), 0);
	assert_string_equal(o.format->name, "svg");
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-o", "dir.d/wait"), 0);
	assert_string_equal(o.format->name, "text");
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-o", ".wait"), 0);
	assert_string_equal(o.format->name, "text");
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-f", "json", "-o", "wait.png"), 0);
	assert_string_equal(o.format->name, "json");
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-o", "wait.png"), -EINVAL);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "-o", "wait.png", "in.json"), -EINVAL);
}

/* offcpu snapshot takes the filters and -m, not -d nor a command. */
static void snapshot_options(void **state)
{
	char *ok[] = { "snapshot", "-m", "1s", "-k", "-f", "json", NULL };
	char *duration[] = { "snapshot", "-d", "1s", NULL };
	char *command[] = { "snapshot", "--", "true", NULL };
	struct options o;

	(void)state;
	assert_int_equal(parse(OPTIONS_SNAPSHOT, &o, ok), 0);
	assert_int_equal(o.min_duration_ns, 1000000000ULL);
	assert_true(o.kernel_threads_only);
	options__free(&o);
	assert_int_equal(parse(OPTIONS_SNAPSHOT, &o, duration), -EINVAL);
	options__free(&o);
	assert_int_equal(parse(OPTIONS_SNAPSHOT, &o, command), -EINVAL);
	options__free(&o);
}

static void top(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--top", "5"), 0);
	assert_int_equal(o.report.top, 5);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--top", "0"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "--top", "3", "rec.json"), 0);
	assert_int_equal(o.report.top, 3);
	options__free(&o);
}

static void report_mode(void **state)
{
	struct options o;

	(void)state;
	/* Options anywhere; the recording's waits all kept unless -m says otherwise. */
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "rec.json", "-f", "folded"), 0);
	assert_int_equal(o.mode, OPTIONS_REPORT);
	assert_string_equal(o.recording_path, "rec.json");
	assert_string_equal(o.format->name, "folded");
	assert_int_equal(o.min_duration_ns, 0);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "-d", "1s", "rec.json"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report"), -EINVAL);
	options__free(&o);
	/* Tracing stops at the command: its options are its own. */
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-m", "0", "--", "ls", "-l"), 0);
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "ls");
	assert_string_equal(o.command[1], "-l");
	options__free(&o);
}

/* --short drop (the default) or sample; anything else refused; tracing only. */
static void short_mode(void **state)
{
	static const char *const bad[] = { "", "keep", "Sample", "drop,sample" };
	struct options o;
	size_t i;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu"), 0);
	assert_int_equal(o.short_mode, OPTIONS_DEFAULT_SHORT);
	assert_int_equal(o.short_mode, SHORT_DROP);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--short", "sample"), 0);
	assert_int_equal(o.short_mode, SHORT_SAMPLE);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--short", "sample", "--short", "drop"),
			 0);
	assert_int_equal(o.short_mode, SHORT_DROP);
	options__free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--short", (char *)bad[i]),
				 -EINVAL);
		options__free(&o);
	}
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "--short", "sample", "r.json"),
			 -EINVAL);
	options__free(&o);
}

/* dwarf (16 KiB) by default; SIZE a multiple of 8 in 512..65528; anything else refused. */
static void call_graph(void **state)
{
	static const char *const bad[] = {
		"dwarf,", "dwarf,100", "dwarf,65536", "dwarf,1001", "dwarf,8k", "lbr", "fp,8", "",
	};
	struct options o;
	size_t i;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu"), 0);
	assert_int_equal(o.call_graph, CALL_GRAPH_DWARF);
	assert_int_equal(o.stack_copy_bytes, 16384);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--call-graph", "fp"), 0);
	assert_int_equal(o.call_graph, CALL_GRAPH_FP);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--call-graph", "dwarf,512"), 0);
	assert_int_equal(o.call_graph, CALL_GRAPH_DWARF);
	assert_int_equal(o.stack_copy_bytes, 512);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--call-graph", "dwarf,65528"), 0);
	assert_int_equal(o.stack_copy_bytes, 65528);
	options__free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--call-graph", (char *)bad[i]),
				 -EINVAL);
		options__free(&o);
	}
	/* Tracing only: a recording's stacks are already unwound. */
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "--call-graph", "fp", "r.json"),
			 -EINVAL);
	options__free(&o);
}

/* A parse that stopped inside "-hV" leaves nothing for the next one to resume. */
static void parsed_twice(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-hV"), 0);
	assert_int_equal(o.action, OPTIONS_HELP);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--stats"), 0);
	assert_int_equal(o.action, OPTIONS_RUN);
	assert_true(o.stats);
	options__free(&o);
}

/* Kernel threads' idle loops are shown to who asks for kernel threads or names threads. */
static void idle_shown_when_asked_for(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-d", "1s"), 0);
	assert_false(o.report.show_idle);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-k"), 0);
	assert_true(o.report.show_idle);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "-c", "kcompactd0", "rec.json"), 0);
	assert_true(o.report.show_idle);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "-t", "1", "rec.json"), 0);
	assert_true(o.report.show_idle);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "--state", "idle", "rec.json"), 0);
	assert_false(o.report.show_idle);
	options__free(&o);
}

/* "-c -d 1s" forgot -c's name: -d is not taken for one. */
static void option_looking_values(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-c", "-d", "1s"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--comm", "-d"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-p", "-t", "1"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-t", "-1"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "-c", "-k", "rec.json"), -EINVAL);
	options__free(&o);
	/* Written attached, a name that begins with '-' is meant. */
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--comm=-d", "-d", "1s"), 0);
	assert_int_equal(o.nr_comms, 1);
	assert_string_equal(o.comms[0], "-d");
	assert_int_equal(o.duration_ns, 1000000000ULL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "-c-x", "-c", "-"), 0);
	assert_int_equal(o.nr_comms, 2);
	assert_string_equal(o.comms[0], "-x");
	options__free(&o);
}

/* offcpu serve listens on loopback unless told, and writes no report. */
static void serve_mode(void **state)
{
	struct options o;

	(void)state;
	assert_int_equal(PARSE(OPTIONS_SERVE, &o, "serve", "-c", "postgres", "-m", "5ms"), 0);
	assert_string_equal(o.listen_text, LISTEN_DEFAULT);
	assert_true(o.listen.loopback);
	assert_int_equal(o.nr_comms, 1);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_SERVE, &o, "serve", "--listen", "[::1]:8080", "--stats"), 0);
	assert_true(o.listen.loopback && o.stats);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_SERVE, &o, "serve", "--listen", "0.0.0.0:8080"), -EINVAL);
	options__free(&o);
	assert_int_equal(
	    PARSE(OPTIONS_SERVE, &o, "serve", "--allow-remote", "--listen", "0.0.0.0:8080"), 0);
	assert_false(o.listen.loopback);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_SERVE, &o, "serve", "-o", "x.json"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_SERVE, &o, "serve", "--", "ls"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_TRACE, &o, "offcpu", "--listen", "127.0.0.1:1"), -EINVAL);
	options__free(&o);
	assert_int_equal(PARSE(OPTIONS_REPORT, &o, "report", "--allow-remote", "r.json"), -EINVAL);
	options__free(&o);
}

/* Parses argv, and what that writes to stderr into out. */
static int with_stderr(struct options *o, char **argv, char *out, size_t size)
{
	FILE *capture = tmpfile();
	int saved, err;
	size_t n;

	assert_non_null(capture);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(capture), STDERR_FILENO), STDERR_FILENO);
	err = parse(OPTIONS_TRACE, o, argv);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	rewind(capture);
	n = fread(out, 1, size - 1, capture);
	out[n] = '\0';
	fclose(capture);
	return err;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/*
 * A rules file that decodes with PostgreSQL's tables reads them from the
 * file beside it; a bad one is said once, with its path and line, and
 * costs nothing but its own names: the rules load, the built-in tables
 * name the waits.
 */
static void pg_events_file_beside_the_rules(void **state)
{
	char dir[] = "/tmp/offcpu-opts-XXXXXX", rules[64], data[96], said[1024];
	struct options o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rules, sizeof(rules), "%s/pg.rules", dir);
	snprintf(data, sizeof(data), "%s/postgres-wait-events.tsv", dir);
	write_file(rules,
		   "process postgres version PostgreSQL\n"
		   "read my_wait_event_info deref u32 as pg.wait_event decode pg_wait_event\n"
		   "label pg.wait_event Lock:* lock:pg-heavyweight\n");
	write_file(data, "18\tIPC\t0x0000\tAppendReady\n");
	assert_int_equal(
	    with_stderr(&o, (char *[]){ "offcpu", "--rules", rules, NULL }, said, sizeof(said)), 0);
	assert_string_equal(said, "");
	assert_non_null(o.rules.pg_events);
	assert_string_equal(o.rules.pg_events_path, data);
	assert_true(pg_events__supported(o.rules.pg_events, 18));
	assert_false(pg_events__supported(o.rules.pg_events, 15));
	options__free(&o);

	write_file(data, "# a comment\n18\tIPC\t0x0000\tAppendReady\n18\tIpc\t0x0001\tX\n");
	assert_int_equal(
	    with_stderr(&o, (char *[]){ "offcpu", "--rules", rules, "--rules", rules, NULL }, said,
			sizeof(said)),
	    0);
	assert_non_null(strstr(said, data));
	assert_non_null(strstr(said, " line 3: unknown class"));
	/* Once, though two rules files decode with the tables. */
	assert_null(strstr(strstr(said, data) + 1, data));
	assert_null(o.rules.pg_events);
	assert_null(o.rules.pg_events_path);
	assert_int_equal(o.rules.nr, 2);
	assert_int_equal(o.rules.nr_groups, 2);
	assert_true(pg_events__supported(o.rules.pg_events, 15));
	options__free(&o);

	/* The pack in rules/ reads the file beside it, the repository's. */
	assert_int_equal(
	    with_stderr(&o, (char *[]){ "offcpu", "--rules", "rules/postgres.rules", NULL }, said,
			sizeof(said)),
	    0);
	assert_string_equal(said, "");
	assert_string_equal(o.rules.pg_events_path, "rules/postgres-wait-events.tsv");
	assert_true(pg_events__supported(o.rules.pg_events, 17));
	options__free(&o);

	assert_int_equal(unlink(data), 0);
	assert_int_equal(unlink(rules), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(serve_mode),
		cmocka_unit_test(short_mode),
		cmocka_unit_test(help_shows_the_defaults),
		cmocka_unit_test(top),
		cmocka_unit_test(report_mode),
		cmocka_unit_test(parsed_twice),
		cmocka_unit_test(option_looking_values),
		cmocka_unit_test(help_ends_with_examples),
		cmocka_unit_test(help_lists_what_each_command_takes),
		cmocka_unit_test(idle_shown_when_asked_for),
		cmocka_unit_test(call_graph),
		cmocka_unit_test(output_extension),
		cmocka_unit_test(snapshot_options),
		cmocka_unit_test(pg_events_file_beside_the_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
