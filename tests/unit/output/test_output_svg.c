// SPDX-License-Identifier: GPL-2.0
/* The SVG flame graph of the fixture profile, of 10,000 stacks, and of hostile names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void svg_flame_graph(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_svg__write, p);

	(void)state;
	assert_true(!strncmp(text, "<?xml", 5));
	assert_non_null(strstr(text, "data-total=\"100000000\""));
	/*
	 * all; sleep, its state and comm, 3 user and 2 kernel frames; lock,
	 * lock:futex, its state and comm, 2 kernel frames.
	 */
	assert_int_equal(count_of(text, "<g class=\"f\" data-"), 15);
	assert_non_null(
	    strstr(text, "data-s=\"0\" data-v=\"100000000\" data-n=\"3\" data-d=\"0\""));
	assert_non_null(
	    strstr(text, "<title>lock:futex\n50.000 ms off CPU, 50.00%, 1 wait</title>"));
	assert_non_null(strstr(text, "data-k=\"kernel\" data-c=\"sleep\"><title>do_nanosleep\n"));
	/* Self-contained: no external reference of any kind. */
	assert_null(strstr(text, "href"));
	assert_int_equal(count_of(text, "http"), 1); /* the SVG namespace */
	assert_non_null(strstr(text, "]]></script>\n</svg>\n"));
	free(text);
	profile__free(p);
}
/* 10,000 distinct stacks: narrow frames merge, and every nanosecond stays in the picture. */
static void svg_many_stacks_stay_readable(void **state)
{
	struct profile *p;
	struct wait w;
	struct frame frames[4];
	char name[32], *text, *root;
	unsigned int i;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	w = a_wait(p, "many", "io");
	w.state = OFFCPU_STATE_UNINTERRUPTIBLE;
	w.pid = w.tid = 7;
	for (i = 0; i < 10000; i++) {
		frames[0] = kframe(p, 0xffffffff81000000ULL + i, "io_schedule");
		snprintf(name, sizeof(name), "handler_%u", i);
		frames[1] = kframe(p, 0xffffffff82000000ULL + i, name);
		frames[2] = kframe(p, 0xffffffff83000000ULL, "vfs_read");
		frames[3] = kframe(p, 0xffffffff84000000ULL, "ksys_read");
		w.kernel_stack = profile__intern_stack(p, frames, 4);
		w.duration_ns = i < 10 ? 1000000000ULL : 1000 + i;
		assert_int_equal(profile__add(p, &w), 0);
	}
	text = render(output_svg__write, p);
	root = strstr(text, "data-d=\"0\"");
	assert_non_null(root);
	assert_non_null(strstr(text, "<title>all\n"));
	/* The ten wide stacks stay; the 9,990 narrow ones become one frame. */
	assert_true(count_of(text, "<g class=\"f\" data-") < 40);
	assert_non_null(strstr(text, "<title>[9990 narrow frames]\n"));
	snprintf(name, sizeof(name), "data-total=\"%llu\"", (unsigned long long)p->total_ns);
	assert_non_null(strstr(text, name));
	free(text);
	profile__free(p);
}
static void hostile_names_in_svg(void **state)
{
	struct profile *p = hostile_profile(false);
	char *text = render(output_svg__write, p);
	size_t len = strlen(text), i;

	(void)state;
	/* XML 1.0's Char: no C0 but tab, LF and CR, no U+FFFE or U+FFFF. */
	assert_true(well_formed_utf8(text, len));
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			fail_msg("C0 byte 0x%02x at %zu", c, i);
	}
	assert_null(strstr(text, "\xef\xbf\xbe"));
	assert_null(strstr(text, "\xef\xbf\xbf"));
	assert_non_null(strstr(text, "<title>\\x1b]0;PWN\\x07\\x1b[2J\n"));
	assert_non_null(strstr(text, "<title>f\\x1b[2J&lt;&amp;&gt;_" REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>lock:x\\x1b[31m;y z\\x0a1 2\\u2029\n"));
	assert_non_null(strstr(text, "<title>" REPLACEMENT REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>in\\x9b\\x01_x\n"));
	free(text);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg_flame_graph),
		cmocka_unit_test(svg_many_stacks_stay_readable),
		cmocka_unit_test(hostile_names_in_svg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
