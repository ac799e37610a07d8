// SPDX-License-Identifier: GPL-2.0
/* The pprof profile read back: samples, mappings (the main binary's first), strings. */
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

static void pprof_encoding(void **state)
{
	struct profile *p = fixture_profile(false);
	char *gz = NULL;
	size_t gz_len = 0, len, at = 0, i;
	FILE *out = open_memstream(&gz, &gz_len);
	struct output_opts opts = { 0 };
	const char *strings[128];
	size_t nr_strings = 0, nr_samples = 0, nr_locations = 0, nr_functions = 0;
	size_t nr_mappings = 0;
	uint64_t value_sum[2] = { 0, 0 };
	struct pb_field f, g;
	uint8_t *pb;
	bool saw_label_key = false;

	(void)state;
	p->start_time_ns = 1700000000000000000ULL;
	p->duration_ns = 5000000000ULL;
	assert_int_equal(output_pprof__write(out, p, &opts), 0);
	fclose(out);
	pb = gunzip(gz, gz_len, &len);
	while (next_field(pb, len, &at, &f)) {
		size_t inner = 0;

		switch (f.number) {
		case 2: /* sample: values are packed in field 2 */
			nr_samples++;
			while (next_field(f.data, f.len, &inner, &g)) {
				size_t v = 0, k = 0;
				uint64_t n;

				if (g.number != 2)
					continue;
				while (read_varint(g.data, g.len, &v, &n) && k < 2)
					value_sum[k++] += n;
			}
			break;
		case 3:
			nr_mappings++;
			break;
		case 4:
			nr_locations++;
			break;
		case 5:
			nr_functions++;
			break;
		case 6:
			assert_true(nr_strings < 128);
			strings[nr_strings++] = strndup((const char *)f.data, f.len);
			break;
		case 9:
			assert_int_equal(f.value, 1700000000000000000ULL);
			break;
		case 10:
			assert_int_equal(f.value, 5000000000ULL);
			break;
		}
	}
	assert_int_equal(at, len);
	assert_int_equal(nr_samples, 2);
	assert_int_equal(value_sum[0], 3);	   /* waits */
	assert_int_equal(value_sum[1], 100000000); /* nanoseconds, as the text report says */
	/* Kernel and app mappings; 4 kernel + 3 user locations; one function each. */
	assert_int_equal(nr_mappings, 2);
	assert_int_equal(nr_locations, 7);
	assert_int_equal(nr_functions, 7);
	assert_string_equal(strings[0], "");
	for (i = 0; i < nr_strings; i++) {
		if (!strcmp(strings[i], "thread.state"))
			saw_label_key = true;
	}
	assert_true(saw_label_key);
	for (i = 0; i < nr_strings; i++)
		free((char *)strings[i]);
	free(pb);
	free(gz);
	profile__free(p);
}
/* Each mapping's file name in order of the profile, and its memory limit. */
static size_t pprof_mappings(const char *main_binary, const char *names[8], uint64_t limits[8])
{
	struct profile *p = fixture_profile(false);
	struct output_opts opts = { 0 };
	char *gz = NULL;
	size_t gz_len = 0, len, at = 0, nr = 0, nr_strings = 0, i;
	FILE *out = open_memstream(&gz, &gz_len);
	uint64_t name_index[8];
	const char *strings[128];
	struct pb_field f, g;
	uint8_t *pb;

	if (main_binary)
		assert_int_equal(profile__set_main_binary(p, main_binary), 0);
	assert_int_equal(output_pprof__write(out, p, &opts), 0);
	fclose(out);
	pb = gunzip(gz, gz_len, &len);
	while (next_field(pb, len, &at, &f)) {
		size_t inner = 0;

		if (f.number == 6 && nr_strings < 128)
			strings[nr_strings++] = strndup((const char *)f.data, f.len);
		if (f.number != 3)
			continue;
		assert_true(nr < 8);
		limits[nr] = 0;
		while (next_field(f.data, f.len, &inner, &g)) {
			if (g.number == 1) /* IDs go 1, 2, ... in order */
				assert_int_equal(g.value, nr + 1);
			if (g.number == 3)
				limits[nr] = g.value;
			if (g.number == 5)
				name_index[nr] = g.value;
		}
		nr++;
	}
	for (i = 0; i < nr; i++)
		names[i] = strdup(strings[name_index[i]]);
	for (i = 0; i < nr_strings; i++)
		free((char *)strings[i]);
	free(pb);
	free(gz);
	profile__free(p);
	return nr;
}
/*
 * pprof takes the first mapping for the main binary ("File:"): the one
 * named, whether frames are in it (they keep their span) or not (it spans
 * nothing); without one, the first module met, the kernel's, leaf first.
 */
static void pprof_main_binary_is_the_first_mapping(void **state)
{
	const char *names[8];
	uint64_t limits[8];
	size_t nr, i;

	(void)state;
	nr = pprof_mappings("/usr/bin/app", names, limits);
	assert_int_equal(nr, 2);
	assert_string_equal(names[0], "/usr/bin/app");
	assert_true(limits[0] > 0);
	assert_string_equal(names[1], "[kernel.kallsyms]");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
	nr = pprof_mappings("/usr/sbin/offcpu", names, limits);
	assert_int_equal(nr, 3);
	assert_string_equal(names[0], "/usr/sbin/offcpu");
	assert_int_equal(limits[0], 0);
	assert_string_equal(names[1], "[kernel.kallsyms]");
	assert_string_equal(names[2], "/usr/bin/app");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
	nr = pprof_mappings(NULL, names, limits);
	assert_int_equal(nr, 2);
	assert_string_equal(names[0], "[kernel.kallsyms]");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
}
/* Every string of the profile: UTF-8 (profile.proto's string type) with no terminal control. */
static void hostile_names_in_pprof(void **state)
{
	struct profile *p = hostile_profile(false);
	size_t len, at = 0;
	uint8_t *pb = pprof_of(p, &len);
	struct pb_field f;
	bool comm = false, title = false, function = false;

	(void)state;
	while (next_field(pb, len, &at, &f)) {
		if (f.number != 6)
			continue;
		assert_no_terminal_controls((const char *)f.data, f.len);
		comm |= f.len == strlen("\\x1b]0;PWN\\x07\\x1b[2J") &&
			!memcmp(f.data, "\\x1b]0;PWN\\x07\\x1b[2J", f.len);
		title |= f.len == strlen("t\\x0d;\"'<>& \\x7f\\x9b") + 5 * 3 + 3 + 6 &&
			 !memcmp(f.data, "t\\x0d;\"'<>& \\x7f\\x9b" REPLACEMENT, 21);
		function |= f.len == strlen("f\\x1b[2J<&>;" REPLACEMENT) &&
			    !memcmp(f.data, "f\\x1b[2J<&>;" REPLACEMENT, f.len);
	}
	assert_true(comm && title && function);
	free(pb);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof_encoding),
		cmocka_unit_test(pprof_main_binary_is_the_first_mapping),
		cmocka_unit_test(hostile_names_in_pprof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
