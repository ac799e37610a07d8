// SPDX-License-Identifier: GPL-2.0
/*
 * Every recorded stack of tests/unit/fixtures/recorded_stacks.tsv (real
 * waits of known kinds, see record_stacks.py) gets the class it was
 * recorded as.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "classify/states.h"
#include "offcpu.h"

#define FIXTURE "tests/unit/fixtures/recorded_stacks.tsv"
#define MAX_FRAMES 128

/* "a;b;?" into frames, leaf first; '?' is a frame without a symbol. */
static size_t split_frames(char *list, struct frame *frames)
{
	char *save = NULL, *name;
	size_t n = 0;

	for (name = strtok_r(list, ";", &save); name && n < MAX_FRAMES;
	     name = strtok_r(NULL, ";", &save)) {
		memset(&frames[n], 0, sizeof(frames[n]));
		frames[n].sym = strcmp(name, "?") ? name : NULL;
		n++;
	}
	return n;
}

static unsigned int state_by_name(const char *name)
{
	unsigned int s;

	for (s = 0; s < OFFCPU_STATE_COUNT; s++) {
		if (!strcmp(states__name(s), name))
			return s;
	}
	fail_msg("unknown state %s in " FIXTURE, name);
	return OFFCPU_STATE_OTHER;
}

static void recorded_stacks_get_their_class(void **state)
{
	static struct frame kernel[MAX_FRAMES], user[MAX_FRAMES];
	FILE *f = fopen(FIXTURE, "r");
	char *line = NULL;
	size_t size = 0, checked = 0;

	(void)state;
	assert_non_null(f);
	while (getline(&line, &size, f) > 0) {
		char *fields[5] = { 0 }, *p = line;
		size_t nk, nu, i;
		const char *got;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		/* strtok would merge the empty user-frames field of kernel threads. */
		for (i = 0; i < 5 && p; i++) {
			fields[i] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		assert_non_null(fields[3]);
		nk = split_frames(fields[2], kernel);
		nu = split_frames(fields[3], user);
		got = classify__wait(NULL, state_by_name(fields[1]), kernel, nk, user, nu);
		if (strcmp(got, fields[0]))
			fail_msg("recorded as %s, classified %s", fields[0], got);
		checked++;
	}
	free(line);
	fclose(f);
	/* One per kind of wait the recording workload makes. */
	assert_true(checked >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recorded_stacks_get_their_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
