// SPDX-License-Identifier: GPL-2.0
/* The formats by name and by extension, and every format on a 100,000-frame stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/array.h"
#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void formats_by_name_and_extension(void **state)
{
	(void)state;
	assert_string_equal(output_format__by_name("json")->name, "json");
	assert_null(output_format__by_name("xml"));
	assert_string_equal(output_format__by_path("out.folded")->name, "folded");
	assert_string_equal(output_format__by_path("/tmp/a.b/out.json")->name, "json");
	assert_string_equal(output_format__by_path("report.txt")->name, "text");
	assert_null(output_format__by_path("out.data"));
	/* A hidden file named ".json" has no extension. */
	assert_null(output_format__by_path(".json"));
	/* The longer extension wins, wherever the table lists it. */
	assert_string_equal(output_format__by_path("run.trace.json")->name, "trace");
	assert_string_equal(output_format__by_path("trace.json")->name, "json");
	assert_string_equal(output_format__by_name("trace")->name, "trace");
}
/*
 * A stack as deep as a recording may say: 100,000 frames. No format walks
 * it by recursion (the SVG's tree did, and overflowed the stack); each
 * writes it whole.
 */
#define DEEP_FRAMES 100000

static void deep_stack_in_every_format(void **state)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_opts *) = {
		output_text__write, output_folded__write, output_svg__write,
		output_json__write, output_pprof__write,
	};
	struct frame *frames = calloc(DEEP_FRAMES, sizeof(*frames));
	struct profile *p;
	struct wait w;
	char name[32], *text;
	size_t i, len;

	(void)state;
	assert_non_null(frames);
	assert_int_equal(profile__new(true, &p), 0);
	for (i = 0; i < DEEP_FRAMES; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		frames[i] = uframe(p, 0x1000 + i, name);
	}
	w = a_wait(p, "deep", "sleep");
	w.pid = w.tid = 5;
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.user_stack = profile__intern_stack(p, frames, DEEP_FRAMES);
	w.duration_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);
	for (i = 0; i < ARRAY_SIZE(writers); i++) {
		if (writers[i] == output_pprof__write) {
			uint8_t *pb = pprof_of(p, &len);

			/* A location and a function for every frame. */
			assert_true(len > 2 * DEEP_FRAMES);
			free(pb);
			continue;
		}
		text = render(writers[i], p);
		assert_true(strlen(text) > DEEP_FRAMES);
		if (writers[i] == output_svg__write) {
			/* all, sleep, [interruptible], deep and every frame */
			assert_int_equal(count_of(text, "<g class=\"f\" data-"), DEEP_FRAMES + 4);
			assert_non_null(strstr(text, "data-d=\"100003\""));
		}
		if (writers[i] == output_folded__write)
			assert_non_null(
			    strstr(text, "deep;[interruptible];[sleep];f99999;f99998;"));
		free(text);
	}
	free(frames);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats_by_name_and_extension),
		cmocka_unit_test(deep_stack_in_every_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
