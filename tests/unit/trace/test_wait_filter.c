// SPDX-License-Identifier: GPL-2.0
/*
 * The duration filter both sides run (offcpu_filter__judge, offcpu.h): its
 * order, its counters' verdicts, an open wait never drawn, and coins that
 * keep what they should in the long run and the same wait the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offcpu.h"

#define MS 1000000ULL
#define DROPPED OFFCPU_VERDICT_DROPPED

static struct offcpu_filter filter_of(uint64_t min_ns, uint64_t max_ns, uint32_t rate, int sample)
{
	struct offcpu_filter f = {
		.min_duration_ns = min_ns,
		.max_duration_ns = max_ns,
		.sample_rate = rate,
		.short_sample = sample && min_ns,
	};

	while (min_ns >> f.short_shift > UINT32_MAX)
		f.short_shift++;
	return f;
}

static void bounds_in_order(void **state)
{
	struct offcpu_filter f = filter_of(MS, 10 * MS, 1, 0);

	(void)state;
	assert_int_equal(offcpu_filter__judge(&f, 2 * MS, 1, 100, 0), 0);
	assert_int_equal(offcpu_filter__judge(&f, MS, 1, 100, 0), 0);
	assert_int_equal(offcpu_filter__judge(&f, 10 * MS, 1, 100, 0), 0);
	assert_int_equal(offcpu_filter__judge(&f, MS - 1, 1, 100, 0),
			 OFFCPU_VERDICT_BELOW_MIN | DROPPED);
	assert_int_equal(offcpu_filter__judge(&f, 10 * MS + 1, 1, 100, 0),
			 OFFCPU_VERDICT_ABOVE_MAX | DROPPED);
	/* Open or ended, -m and -M judge alike. */
	assert_int_equal(offcpu_filter__judge(&f, MS - 1, 1, 100, OFFCPU_WAIT_OPEN_AFTER),
			 OFFCPU_VERDICT_BELOW_MIN | DROPPED);
	assert_int_equal(offcpu_filter__judge(&f, 10 * MS + 1, 1, 100, OFFCPU_WAIT_RECOVERED),
			 OFFCPU_VERDICT_ABOVE_MAX | DROPPED);
}

/* 1 in N of the ended waits kept, each verdict the same at a second look; an open one always. */
static void sample_rate_draws_ended_waits_only(void **state)
{
	struct offcpu_filter f = filter_of(0, ~0ULL, 10, 0);
	uint64_t start = 123456789012ULL;
	unsigned int i, kept = 0, n = 100000;

	(void)state;
	for (i = 0; i < n; i++) {
		uint32_t v = offcpu_filter__judge(&f, 5 * MS, 1000 + i % 7, start + i * 997, 0);

		assert_int_equal(v, offcpu_filter__judge(&f, 5 * MS, 1000 + i % 7, start + i * 997,
							 OFFCPU_WAIT_RECOVERED));
		if (!v)
			kept++;
		else
			assert_int_equal(v, OFFCPU_VERDICT_SAMPLED_OUT | DROPPED);
		assert_int_equal(
		    offcpu_filter__judge(&f, 5 * MS, 1000 + i % 7, start + i * 997,
					 OFFCPU_WAIT_OPEN_AFTER | OFFCPU_WAIT_OPEN_BEFORE),
		    0);
	}
	/* 10000 expected, sd 95. */
	assert_in_range(kept, 9500, 10500);
}

/* --short sample keeps a wait with probability d / min; an open one (d not known yet) never. */
static void short_coin_keeps_d_over_min(void **state)
{
	struct offcpu_filter f = filter_of(MS, ~0ULL, 1, 1);
	unsigned int i, kept = 0, n = 100000;

	(void)state;
	for (i = 0; i < n; i++) {
		uint32_t v = offcpu_filter__judge(&f, MS / 4, 42, 5000000000ULL + i * 1013ULL, 0);

		if (v == (OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_SHORT_SAMPLED))
			kept++;
		else
			assert_int_equal(v, OFFCPU_VERDICT_BELOW_MIN | DROPPED);
		assert_int_equal(offcpu_filter__judge(&f, MS / 4, 42, 5000000000ULL + i * 1013ULL,
						      OFFCPU_WAIT_OPEN_AFTER),
				 OFFCPU_VERDICT_BELOW_MIN | DROPPED);
	}
	/* 25000 expected, sd 137. */
	assert_in_range(kept, 24300, 25700);
}

/* Both coins at once: independent halves of the coin, so 1/4 * 1/8 of the short waits kept. */
static void coins_independent(void **state)
{
	struct offcpu_filter f = filter_of(MS, ~0ULL, 8, 1);
	unsigned int i, kept = 0, out = 0, n = 200000;

	(void)state;
	for (i = 0; i < n; i++) {
		uint32_t v =
		    offcpu_filter__judge(&f, MS / 4, 7 + i % 3, 900000000ULL + i * 331ULL, 0);

		if (v == (OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_SHORT_SAMPLED))
			kept++;
		else if (v & OFFCPU_VERDICT_SAMPLED_OUT)
			out++;
	}
	/* 6250 kept (sd 77), 43750 drawn out (sd 185). */
	assert_in_range(kept, 5850, 6650);
	assert_in_range(out, 42800, 44700);
}

/* -m of 4.3 s and more: min shifted below 2^32, the coin still d / min, no overflow. */
static void short_coin_long_min(void **state)
{
	struct offcpu_filter f = filter_of(10000 * MS, ~0ULL, 1, 1);
	unsigned int i, kept = 0, n = 100000;

	(void)state;
	assert_true(f.short_shift > 0);
	for (i = 0; i < n; i++)
		if (!(offcpu_filter__judge(&f, 5000 * MS, 99, 77777ULL + i * 7919ULL, 0) & DROPPED))
			kept++;
	assert_in_range(kept, 49300, 50700);
	/* At min - 1 nearly every wait is kept; none lost to a wrapped product. */
	for (i = 0, kept = 0; i < 1000; i++)
		if (!(offcpu_filter__judge(&f, 10000 * MS - 1, 99, 77777ULL + i * 7919ULL, 0) &
		      DROPPED))
			kept++;
	assert_in_range(kept, 990, 1000);
}

/* A short wait kept by its coin still meets -M and --sample-rate after it. */
static void short_sampled_then_later_filters(void **state)
{
	struct offcpu_filter f = filter_of(MS, MS / 2, 1, 1);
	unsigned int i, seen = 0;

	(void)state;
	for (i = 0; i < 1000; i++) {
		uint32_t v = offcpu_filter__judge(&f, MS - 1000, 3, 1000000ULL + i * 104729ULL, 0);

		if (v & OFFCPU_VERDICT_SHORT_SAMPLED) {
			assert_int_equal(v, OFFCPU_VERDICT_BELOW_MIN |
						OFFCPU_VERDICT_SHORT_SAMPLED |
						OFFCPU_VERDICT_ABOVE_MAX | DROPPED);
			seen++;
		}
	}
	assert_true(seen > 900);
}

static void inside_ns_of_waits_begun_before(void **state)
{
	(void)state;
	/* Begun 3 ms before a recording that started at 10 ms: 2 of its 5 ms inside. */
	assert_int_equal(offcpu_inside_ns(10 * MS, 7 * MS, 5 * MS), 2 * MS);
	/* Begun after the start, or with no recording (a snapshot): whole. */
	assert_int_equal(offcpu_inside_ns(10 * MS, 11 * MS, 5 * MS), 5 * MS);
	assert_int_equal(offcpu_inside_ns(10 * MS, 10 * MS, 5 * MS), 5 * MS);
	assert_int_equal(offcpu_inside_ns(0, 7 * MS, 5 * MS), 5 * MS);
	/* Ended before the recording: no part inside to take, whole (not negative). */
	assert_int_equal(offcpu_inside_ns(20 * MS, 7 * MS, 5 * MS), 5 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bounds_in_order),
		cmocka_unit_test(sample_rate_draws_ended_waits_only),
		cmocka_unit_test(short_coin_keeps_d_over_min),
		cmocka_unit_test(coins_independent),
		cmocka_unit_test(short_coin_long_min),
		cmocka_unit_test(short_sampled_then_later_filters),
		cmocka_unit_test(inside_ns_of_waits_begun_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
