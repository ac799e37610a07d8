// SPDX-License-Identifier: GPL-2.0
/* The text report of the fixture profile: its tables, --group-by; hostile names, folded's too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void text_report(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_text__write, p);

	(void)state;
	assert_non_null(strstr(text, "offcpu: 3 waits, 100.000 ms off CPU in total"));
	assert_non_null(strstr(
	    text,
	    "  interruptible                          100.000 ms  100.0%         3     100.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "  lock:futex                              50.000 ms   50.0%         1      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "  app                   100      101      50.000 ms   50.0%         2      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(text,
			       "  #1 app;[interruptible];[lock:futex]  50.000 ms, 50.0%, 1 wait\n"
			       "    kernel:\n      futex_wait_queue\n      __x64_sys_futex\n"));
	/* No counter counted anything: one line says so. */
	assert_non_null(strstr(text, "\nHealth counters\n  all counters: 0\n"));
	assert_null(strstr(text, "  switches"));
	free(text);
	profile__free(p);
}
static void text_group_by(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render_by(output_text__write, p, GROUP_BY_TITLE);

	(void)state;
	assert_non_null(strstr(text, "By process title (top 20)\n"));
	assert_non_null(strstr(
	    text,
	    "\n  app --worker                            50.000 ms   50.0%         1      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "\n  app                                     50.000 ms   50.0%         2      50.000 ms"
	    "       0.000 us\n"));
	assert_null(strstr(text, "By thread (top 20)"));
	free(text);
	text = render_by(output_text__write, p, GROUP_BY_PID);
	assert_non_null(strstr(text, "By process (top 20)\n"));
	free(text);
	/* By state or wait class: the tables above already are. */
	text = render_by(output_text__write, p, GROUP_BY_WAIT);
	assert_null(strstr(text, "(top 20)"));
	free(text);
	profile__free(p);
}
static void hostile_names_in_text_and_folded(void **state)
{
	struct profile *p = hostile_profile(false);
	char *text = render(output_text__write, p), *line, *end;
	size_t lines = 0, semicolons, spaces;

	(void)state;
	assert_no_terminal_controls(text, strlen(text));
	assert_non_null(strstr(text, "  \\x1b]0;PWN\\x07\\x1b[2J       66       66  "));
	assert_non_null(strstr(text, "  lock:x\\x1b[31m;y z\\x0a1 2\\u2029  "));
	assert_non_null(
	    strstr(text, "  \xef\xbf\xbe" REPLACEMENT "                 66       67  "));
	assert_non_null(strstr(text, "      f\\x1b[2J<&>_" REPLACEMENT "\n"));
	free(text);
	text = render_by(output_text__write, p, GROUP_BY_TITLE);
	assert_no_terminal_controls(text, strlen(text));
	assert_non_null(strstr(
	    text,
	    "  t\\x0d;\"'<>& \\x7f\\x9b" REPLACEMENT REPLACEMENT REPLACEMENT REPLACEMENT REPLACEMENT
	    "\xef\xbf\xbf\\u2028"));
	free(text);

	/* Folded: a name cannot add a frame, a line or a value. */
	text = render(output_folded__write, p);
	assert_no_terminal_controls(text, strlen(text));
	for (line = text; *line; line = end + 1, lines++) {
		end = strchr(line, '\n');
		assert_non_null(end);
		semicolons = spaces = 0;
		for (const char *c = line; c < end; c++) {
			semicolons += *c == ';';
			spaces += *c == ' ';
		}
		assert_int_equal(spaces, 1);
		/* comm, state, class, one user frame (and its inlined one), one kernel frame */
		assert_int_equal(semicolons,
				 memmem(line, (size_t)(end - line), "in\\x9b", 6) ? 5 : 4);
	}
	assert_int_equal(lines, 2);
	assert_non_null(strstr(text,
			       "\\x1b]0_PWN\\x07\\x1b[2J;[interruptible];"
			       "[lock:x\\x1b[31m_y_z\\x0a1_2\\u2029];f\\x1b[2J<&>_" REPLACEMENT
			       ";do_nanosleep_[k] 20000000\n"));
	assert_non_null(strstr(text,
			       "\xef\xbf\xbe" REPLACEMENT ";[interruptible];[sleep];l" REPLACEMENT
			       "_b\\x07.so+0x1200;in\\x9b\\x01_x;do_nanosleep_[k] 10000000\n"));
	free(text);

	/* --lines: the source file's name too. */
	{
		struct output_opts opts = { .group_by = GROUP_BY_TID, .lines = true };
		char *buf = NULL;
		size_t size = 0;
		FILE *out = open_memstream(&buf, &size);

		assert_int_equal(output_text__write(out, p, &opts), 0);
		fclose(out);
		assert_no_terminal_controls(buf, size);
		assert_non_null(strstr(buf, " (\\x1b[2Jx.c:3)\n"));
		free(buf);
	}
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report),
		cmocka_unit_test(text_group_by),
		cmocka_unit_test(hostile_names_in_text_and_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
