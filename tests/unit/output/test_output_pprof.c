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
/* profile.proto read back as far as these tests look: types, samples and their labels. */
#define PP_MAX 16

struct pp_label {
	uint64_t key; /* string indices */
	uint64_t str;
	uint64_t num;
};

struct pp_sample {
	uint64_t values[PP_MAX];
	size_t nr_values;
	struct pp_label labels[PP_MAX];
	size_t nr_labels;
};

struct pp_profile {
	char *strings[256];
	size_t nr_strings;
	uint64_t types[PP_MAX][2]; /* type, unit */
	size_t nr_types;
	struct pp_sample samples[PP_MAX];
	size_t nr_samples;
	uint64_t period_type[2];
	uint64_t period;
	uint64_t default_type;
};

static void read_value_type(const struct pb_field *f, uint64_t out[2])
{
	struct pb_field g;
	size_t at = 0;

	while (next_field(f->data, f->len, &at, &g))
		if (g.number == 1 || g.number == 2)
			out[g.number - 1] = g.value;
}

static void read_sample(const struct pb_field *f, struct pp_sample *s)
{
	struct pb_field g, h;
	size_t at = 0, v, in;

	while (next_field(f->data, f->len, &at, &g)) {
		if (g.number == 2) {
			v = 0;
			while (s->nr_values < PP_MAX &&
			       read_varint(g.data, g.len, &v, &s->values[s->nr_values]))
				s->nr_values++;
		}
		if (g.number != 3)
			continue;
		assert_true(s->nr_labels < PP_MAX);
		in = 0;
		while (next_field(g.data, g.len, &in, &h)) {
			if (h.number == 1)
				s->labels[s->nr_labels].key = h.value;
			if (h.number == 2)
				s->labels[s->nr_labels].str = h.value;
			if (h.number == 3)
				s->labels[s->nr_labels].num = h.value;
		}
		s->nr_labels++;
	}
}

static void read_pprof(const struct profile *p, enum output_pprof what, struct pp_profile *out)
{
	struct output_opts opts = { .pprof = what };
	char *gz = NULL;
	size_t gz_len = 0, len, at = 0;
	FILE *stream = open_memstream(&gz, &gz_len);
	struct pb_field f;
	uint8_t *pb;

	memset(out, 0, sizeof(*out));
	assert_int_equal(output_pprof__write(stream, p, &opts), 0);
	fclose(stream);
	pb = gunzip(gz, gz_len, &len);
	while (next_field(pb, len, &at, &f)) {
		if (f.number == 1) {
			assert_true(out->nr_types < PP_MAX);
			read_value_type(&f, out->types[out->nr_types++]);
		} else if (f.number == 2) {
			assert_true(out->nr_samples < PP_MAX);
			read_sample(&f, &out->samples[out->nr_samples++]);
		} else if (f.number == 6) {
			assert_true(out->nr_strings < 256);
			out->strings[out->nr_strings++] = strndup((const char *)f.data, f.len);
		} else if (f.number == 11) {
			read_value_type(&f, out->period_type);
		} else if (f.number == 12) {
			out->period = f.value;
		} else if (f.number == 14) {
			out->default_type = f.value;
		}
	}
	free(pb);
	free(gz);
}

static void free_pprof(struct pp_profile *pp)
{
	for (size_t i = 0; i < pp->nr_strings; i++)
		free(pp->strings[i]);
}

static const char *pp_string(const struct pp_profile *pp, uint64_t index)
{
	assert_true(index < pp->nr_strings);
	return pp->strings[index];
}

/* The sample's string label key; NULL if it has none. */
static const char *pp_label(const struct pp_profile *pp, const struct pp_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(pp_string(pp, s->labels[i].key), key))
			return pp_string(pp, s->labels[i].str);
	return NULL;
}

static uint64_t pp_number(const struct pp_profile *pp, const struct pp_sample *s, const char *key)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(pp_string(pp, s->labels[i].key), key))
			return s->labels[i].num;
	fail_msg("no label %s", key);
	return 0;
}

static void assert_types(const struct pp_profile *pp, const char *const *types, size_t nr)
{
	assert_int_equal(pp->nr_types, nr);
	for (size_t i = 0; i < nr; i++) {
		assert_string_equal(pp_string(pp, pp->types[i][0]), types[i]);
		assert_string_equal(pp_string(pp, pp->types[i][1]), i ? "nanoseconds" : "count");
	}
}

#define PERIOD_NS 1000000ULL /* -F 1000 */

/*
 * The fixture's waits (100 ms off CPU in 3 waits of threads 101 and 102)
 * and on-CPU samples: thread 101 computing (3 samples) and thread 103
 * interrupted in the kernel on its way back to user space (1).
 */
static struct profile *sampled_profile(void)
{
	struct profile *p = fixture_profile(false);
	struct frame compute[2], irq[1];
	struct wait s = { 0 };
	int i;

	compute[0] = uframe(p, 0x1400, "compute");
	compute[1] = uframe(p, 0x1300, "main");
	irq[0] = kframe(p, 0xffffffff81000210ULL, "irqentry_exit_to_user_mode");
	s.pid = 100;
	s.tid = 101;
	s.comm = strpool__intern(p->strings, "app");
	s.state = OFFCPU_STATE_RUNNING;
	s.user_stack = profile__intern_stack(p, compute, 2);
	s.duration_ns = PERIOD_NS;
	for (i = 0; i < 3; i++) {
		s.end_ts_ns = 4000 + (uint64_t)i;
		assert_int_equal(profile__add_sample(p, &s), 0);
	}
	s.tid = 103;
	s.kernel_stack = profile__intern_stack(p, irq, 1);
	assert_int_equal(profile__add_sample(p, &s), 0);
	p->oncpu.period_ns = PERIOD_NS;
	return p;
}

/*
 * With samples, every sample carries cpu and wall besides the wait's
 * values: a wait none of the first, its off-CPU time as the second; an
 * on-CPU entry its time as both, and no off-CPU or run-queue time, in
 * state on-cpu, not running (a wait's state: a yield).
 */
static void pprof_samples_beside_waits(void **state)
{
	static const char *const types[] = { "samples", "off_cpu", "runq", "cpu", "wall" };
	struct profile *p = sampled_profile();
	struct pp_profile pp;
	uint64_t sums[5] = { 0 };
	size_t i, k, on_cpu = 0;

	(void)state;
	read_pprof(p, OUTPUT_PPROF_ALL, &pp);
	assert_types(&pp, types, 5);
	assert_string_equal(pp_string(&pp, pp.default_type), "wall");
	assert_string_equal(pp_string(&pp, pp.period_type[0]), "wall");
	assert_int_equal(pp.period, PERIOD_NS);
	assert_int_equal(pp.nr_samples, 4);
	for (i = 0; i < pp.nr_samples; i++) {
		const struct pp_sample *s = &pp.samples[i];

		assert_int_equal(s->nr_values, 5);
		for (k = 0; k < 5; k++)
			sums[k] += s->values[k];
		assert_string_equal(pp_label(&pp, s, "thread.name"), "app");
		assert_int_equal(pp_number(&pp, s, "process.pid"), 100);
		if (strcmp(pp_label(&pp, s, "thread.state"), "on-cpu")) {
			assert_non_null(pp_label(&pp, s, "wait.class"));
			assert_int_equal(s->values[3], 0);
			assert_int_equal(s->values[4], s->values[1]);
			continue;
		}
		on_cpu++;
		assert_null(pp_label(&pp, s, "wait.class"));
		assert_int_equal(s->values[1], 0);
		assert_int_equal(s->values[2], 0);
		assert_int_equal(s->values[3], s->values[0] * PERIOD_NS);
		assert_int_equal(s->values[4], s->values[3]);
		assert_int_equal(s->values[0], pp_number(&pp, s, "thread.id") == 101 ? 3 : 1);
	}
	assert_int_equal(on_cpu, 2);
	assert_int_equal(sums[0], 3 + 4);
	assert_int_equal(sums[1], 100000000); /* the waits' off-CPU time, as without samples */
	assert_int_equal(sums[3], 4 * PERIOD_NS);
	assert_int_equal(sums[4], 100000000 + 4 * PERIOD_NS);
	free_pprof(&pp);
	profile__free(p);
}

/* offcpu serve's /debug/pprof/profile: the samples alone, typed as Go's CPU profile. */
static void pprof_cpu_profile_as_go_writes_it(void **state)
{
	static const char *const types[] = { "samples", "cpu" };
	struct profile *p = sampled_profile();
	struct pp_profile pp;
	uint64_t count = 0, cpu_ns = 0;
	size_t i;

	(void)state;
	read_pprof(p, OUTPUT_PPROF_CPU, &pp);
	assert_types(&pp, types, 2);
	assert_string_equal(pp_string(&pp, pp.period_type[0]), "cpu");
	assert_string_equal(pp_string(&pp, pp.period_type[1]), "nanoseconds");
	assert_int_equal(pp.period, PERIOD_NS);
	assert_string_equal(pp_string(&pp, pp.default_type), "cpu");
	assert_int_equal(pp.nr_samples, 2);
	for (i = 0; i < pp.nr_samples; i++) {
		assert_int_equal(pp.samples[i].nr_values, 2);
		assert_string_equal(pp_label(&pp, &pp.samples[i], "thread.state"), "on-cpu");
		count += pp.samples[i].values[0];
		cpu_ns += pp.samples[i].values[1];
	}
	assert_int_equal(count, 4);
	assert_int_equal(cpu_ns, 4 * PERIOD_NS);
	free_pprof(&pp);
	profile__free(p);
}

/* Without -F the profile is the off-CPU one: three types, off_cpu shown, a period of 1 ns. */
static void pprof_without_samples_is_off_cpu(void **state)
{
	static const char *const types[] = { "samples", "off_cpu", "runq" };
	struct profile *p = fixture_profile(false);
	struct pp_profile pp;

	(void)state;
	read_pprof(p, OUTPUT_PPROF_ALL, &pp);
	assert_types(&pp, types, 3);
	assert_string_equal(pp_string(&pp, pp.default_type), "off_cpu");
	assert_string_equal(pp_string(&pp, pp.period_type[0]), "off_cpu");
	assert_int_equal(pp.period, 1);
	assert_int_equal(pp.nr_samples, 2);
	assert_int_equal(pp.samples[0].nr_values, 3);
	free_pprof(&pp);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pprof_encoding),
		cmocka_unit_test(pprof_main_binary_is_the_first_mapping),
		cmocka_unit_test(hostile_names_in_pprof),
		cmocka_unit_test(pprof_samples_beside_waits),
		cmocka_unit_test(pprof_cpu_profile_as_go_writes_it),
		cmocka_unit_test(pprof_without_samples_is_off_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
