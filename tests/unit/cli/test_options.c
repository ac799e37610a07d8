// SPDX-License-Identifier: GPL-2.0
/* The command line: each mode's options, parsing twice. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_mode),
		cmocka_unit_test(parsed_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
