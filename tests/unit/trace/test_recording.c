// SPDX-License-Identifier: GPL-2.0
/*
 * A json recording read back: the same profile, the same pprof as tracing
 * wrote, hostile names as they were; bad recordings and failed reads refused.
 * A window's waits weigh their part inside it, to the nanosecond read back;
 * recordings older than the window are read whole, forged weights refused.
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

#include "lib/array.h"
#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"
#include "trace/recording.h"

#include "../profile_fixtures.h"
#include "../window_fixtures.h"

/* json -> report -> json gives the same waits and counters. */
static void recording_round_trip(void **state)
{
	struct profile *p = fixture_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	char *text, *again;

	(void)state;
	p->counters[OFFCPU_CNT_SWITCHES] = 42;
	/* A recording that does not say how long it ran, as before it did. */
	text = render(output_json__write, p);
	assert_null(strstr(text, "\"recording_duration_ns\""));
	back = read_back(text, &all, true);
	assert_int_equal(back->total_count, 3);
	assert_int_equal(back->total_ns, 100000000);
	assert_int_equal(back->counters[OFFCPU_CNT_SWITCHES], 42);
	/* From the earliest start (clamped at 0 here) to the last end. */
	assert_int_equal(back->duration_ns, 3000);
	assert_int_equal(back->start_time_ns, 0);
	profile__free(back);
	free(text);

	/* One that does, as tracing writes them: the same recording again. */
	p->start_time_ns = 1700000000123456789ULL;
	p->duration_ns = 5000000000ULL;
	text = render(output_json__write, p);
	assert_non_null(strstr(text, ",\"recording_start_ns\":1700000000123456789,"
				     "\"recording_duration_ns\":5000000000}\n"));
	back = read_back(text, &all, true);
	assert_int_equal(back->start_time_ns, 1700000000123456789ULL);
	assert_int_equal(back->duration_ns, 5000000000ULL);
	again = render(output_json__write, back);
	assert_string_equal(again, text);
	free(again);
	profile__free(back);

	/* --state and -m apply to a report as to tracing. */
	all.min_duration_ns = 30000000;
	back = read_back(text, &all, false);
	assert_int_equal(back->total_count, 2);
	profile__free(back);
	free(text);
	profile__free(p);
}
/* A sample of thread tid at ts_ns, one period of CPU, with the fixture's strings. */
static struct wait sample_of(struct profile *p, uint32_t tid, uint64_t ts_ns)
{
	struct wait s = { .end_ts_ns = ts_ns,
			  .duration_ns = 1000000,
			  .pid = 7,
			  .tid = tid,
			  .cpu = 1,
			  .state = OFFCPU_STATE_RUNNING };

	s.comm = strpool__intern(p->strings, "spinner");
	return s;
}

/* A sample with all a wait's names: title, cgroup, a label, both stacks. */
static struct wait named_sample_of(struct profile *p, uint32_t tid, uint64_t ts_ns)
{
	struct wait s = sample_of(p, tid, ts_ns);
	struct frame k = kframe(p, 0xffffffff81000100, "copy_page");
	struct frame u = uframe(p, 0x1400, "spin");
	struct label label = { "pg.wait_event", "CPU" };
	int err = 0;

	s.title = strpool__intern(p->strings, "spinner --fast");
	s.cgroup = strpool__intern(p->strings, "/system.slice/spin.service");
	s.labels = profile__intern_labels(p, &label, 1, &err);
	s.kernel_stack = profile__intern_stack(p, &k, 1);
	s.user_stack = profile__intern_stack(p, &u, 1);
	assert_int_equal(err, 0);
	return s;
}

/*
 * -F's samples go out among the waits, in time order, and come back as
 * samples: -p, -t and -c select them, --state, -m and -M (the waits') not.
 */
static void samples_round_trip(void **state)
{
	struct profile *p = fixture_profile(true), *back;
	struct id_list none = { 0 }, tid_9 = { .nr = 1, .ids = (uint32_t[]){ 9 } };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct wait s;
	char *text, *again;

	(void)state;
	/* A recording that says how long it ran and that it sampled, as tracing writes them. */
	p->duration_ns = 5000000000ULL;
	p->oncpu.period_ns = 1000000;
	s = sample_of(p, 8, 1);
	assert_int_equal(profile__add_sample(p, &s), 0);
	s = named_sample_of(p, 9, UINT64_MAX);
	assert_int_equal(profile__add_sample(p, &s), 0);
	text = render(output_json__write, p);
	assert_non_null(strstr(text, "{\"type\":\"oncpu\",\"ts_ns\":1,\"pid\":7,\"tid\":8,"
				     "\"comm\":\"spinner\",\"cpu\":1,\"weight_ns\":1000000,"
				     "\"kernel_stack\":[],\"user_stack\":[]}\n"));
	/* The first line is the earliest sample's, the last before the stats the latest's. */
	assert_ptr_equal(strstr(text, "{\"type\":\"oncpu\",\"ts_ns\":1,"), text);
	assert_non_null(strstr(text, "\"ts_ns\":18446744073709551615,\"pid\":7,\"tid\":9,"
				     "\"comm\":\"spinner\",\"title\":\"spinner --fast\","
				     "\"cgroup\":\"/system.slice/spin.service\",\"cpu\":1,"
				     "\"weight_ns\":1000000,\"labels\":{\"pg.wait_event\":\"CPU\"},"
				     "\"kernel_stack\":[{\"addr\":\"0xffffffff81000100\",\"sym\":"
				     "\"copy_page\""));
	assert_non_null(strstr(text, ",\"recording_sample_period_ns\":1000000}\n"));
	assert_true(strstr(text, "\"tid\":9,") > strstr(text, "\"type\":\"offcpu\""));

	back = read_back(text, &all, true);
	assert_int_equal(back->oncpu.count, 2);
	assert_int_equal(back->oncpu.total_ns, 2000000);
	assert_int_equal(back->oncpu.period_ns, 1000000);
	assert_int_equal(back->total_count, 3);
	assert_string_equal(back->oncpu.list[1].title, "spinner --fast");
	assert_string_equal(back->oncpu.list[1].user_stack->frames[0].sym, "spin");
	again = render(output_json__write, back);
	assert_string_equal(again, text);
	free(again);
	profile__free(back);

	all.min_duration_ns = 30000000;
	all.state_mask = 1u << OFFCPU_STATE_INTERRUPTIBLE;
	back = read_back(text, &all, true);
	assert_int_equal(back->oncpu.count, 2);
	profile__free(back);

	all.tids = &tid_9;
	back = read_back(text, &all, true);
	assert_int_equal(back->oncpu.count, 1);
	assert_int_equal(back->oncpu.list[0].tid, 9);
	profile__free(back);
	free(text);
	profile__free(p);
}

static void recording_errors(void **state)
{
	static const char *const bad[] = {
		"\n",						 /* no stats record: cut short */
		"{\"type\":\"offcpu\"}\n{\"type\":\"stats\"}\n", /* fields missing */
		"not json\n",
		"{\"type\":\"stats\"}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"asleep\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"kernel_stack\":[{\"addr\":"
		"\"12\"}]}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"stats\",\"switches\":-1}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"user_stack\":[{\"addr\":"
		"\"0x12\",\"module\":\"/a\",\"module_off\":\"0x2\"}]}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"stats\",\"recording_duration_ns\":\"5s\"}\n",
		/* A sample that stands for no time, and one without its comm. */
		"{\"type\":\"oncpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"cpu\":0,"
		"\"weight_ns\":0}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"oncpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"cpu\":0,"
		"\"weight_ns\":1}\n{\"type\":\"stats\"}\n",
		/* Objects without a kind, with an address not in hex, a holder without a tid. */
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"object\":{\"name\":\"l\"}}\n"
		"{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"object\":{\"kind\":"
		"\"mutex\","
		"\"name\":\"l\",\"addr\":\"4096\"}}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"object\":{\"kind\":"
		"\"mutex\","
		"\"name\":\"l\",\"holder\":{\"pid\":1,\"comm\":\"h\"}}}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"object\":\"mutex\"}\n"
		"{\"type\":\"stats\"}\n",
	};
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		FILE *in = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		assert_int_equal(profile__new(false, &p), 0);
		if (recording__read(in, "bad", &all, p) != -EINVAL)
			fail_msg("accepted bad recording %zu: %s", i, bad[i]);
		fclose(in);
		profile__free(p);
	}
}
/* A stream that gives its text, then fails as a disk does: EIO. */
static ssize_t read_then_fail(void *cookie, char *buf, size_t size)
{
	const char **text = cookie;
	size_t n = strlen(*text);

	if (!n) {
		errno = EIO;
		return -1;
	}
	n = n < size ? n : size;
	memcpy(buf, *text, n);
	*text += n;
	return (ssize_t)n;
}
/*
 * A read that fails is no end of file: its errno comes back (the caller
 * says it, exit 1), not "no stats record". A directory is the wrong
 * argument: said here, -EINVAL (exit 2).
 */
static void recording_read_errors(void **state)
{
	const char *text = "{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\","
			   "\"state\":\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0}\n";
	cookie_io_functions_t io = { .read = read_then_fail };
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;
	FILE *in;

	(void)state;
	in = fopencookie(&text, "r", io);
	assert_non_null(in);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(recording__read(in, "disk", &all, p), -EIO);
	fclose(in);
	profile__free(p);

	in = fopen("/", "r");
	assert_non_null(in);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(recording__read(in, "/", &all, p), -EINVAL);
	fclose(in);
	profile__free(p);
}
/*
 * offcpu report -f pprof of a json recording is the profile that tracing
 * with -f pprof writes of the same waits: the same mappings (file offsets,
 * build IDs), locations, functions, samples, time and comments.
 */
static void pprof_of_recording_is_the_live_one(void **state)
{
	struct profile *live = full_profile(false), *recorded = full_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	size_t live_len, back_len;
	uint8_t *live_pb, *back_pb;
	char *text;

	(void)state;
	/* The main binary too, which the stats record carries. */
	assert_int_equal(profile__set_main_binary(live, "/usr/bin/app"), 0);
	assert_int_equal(profile__set_main_binary(recorded, "/usr/bin/app"), 0);
	text = render(output_json__write, recorded);
	assert_non_null(strstr(text, "\"recording_main_binary\":\"/usr/bin/app\""));
	back = read_back(text, &all, false);
	assert_string_equal(back->main_binary, "/usr/bin/app");
	live_pb = pprof_of(live, &live_len);
	back_pb = pprof_of(back, &back_len);
	assert_int_equal(back_len, live_len);
	assert_memory_equal(back_pb, live_pb, live_len);
	free(live_pb);
	free(back_pb);
	free(text);
	profile__free(back);
	profile__free(recorded);
	profile__free(live);
}
/*
 * offcpu report of a recording of such names shows what tracing showed:
 * the JSON keeps every character (escaped), and what no format can hold,
 * bytes that are no character, is U+FFFD in the recording as in every
 * format written live.
 */
static void hostile_names_read_back_the_same(void **state)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_opts *) = {
		output_text__write,
		output_folded__write,
		output_svg__write,
		output_json__write,
	};
	struct profile *live = hostile_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	char *recording = render(output_json__write, live), *a, *b;
	size_t live_len, back_len, i;
	uint8_t *live_pb, *back_pb;
	FILE *in = fmemopen(recording, strlen(recording), "r");

	(void)state;
	assert_int_equal(profile__new(true, &back), 0);
	assert_int_equal(recording__read(in, "hostile", &all, back), 0);
	fclose(in);
	for (i = 0; i < ARRAY_SIZE(writers); i++) {
		a = render(writers[i], live);
		b = render(writers[i], back);
		assert_string_equal(b, a);
		free(a);
		free(b);
	}
	a = render_by(output_text__write, live, GROUP_BY_TITLE);
	b = render_by(output_text__write, back, GROUP_BY_TITLE);
	assert_string_equal(b, a);
	free(a);
	free(b);
	live_pb = pprof_of(live, &live_len);
	back_pb = pprof_of(back, &back_len);
	assert_int_equal(back_len, live_len);
	assert_memory_equal(back_pb, live_pb, live_len);
	free(live_pb);
	free(back_pb);
	free(recording);
	profile__free(back);
	profile__free(live);
}

static char *json_of(const struct profile *p)
{
	struct output_opts opts = { 0 };
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	assert_int_equal(output_json__write(out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static int read_json(const char *text, struct profile *p)
{
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(in);
	err = recording__read(in, "window", &all, p);
	fclose(in);
	return err;
}

/*
 * json: duration_ns whole, weight_ns of the window, the window's start in
 * the stats record; read back, the same sums to the nanosecond (an odd
 * share of an odd sampled weight too), and the same json in the same order.
 */
static void json_and_its_report_count_the_window(void **state)
{
	struct profile *p, *back;
	struct wait w;
	char *text, *again;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = START;
	p->duration_ns = 3 * S;
	w = ended_wait(p, 2, START + S, S / 2, 0);
	assert_int_equal(profile__add(p, &w), 0);
	w = ended_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.open = OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER;
	assert_int_equal(profile__add(p, &w), 0);
	/* 7 s + 3 ns, 2 s + 1 ns of it inside, sampled 1 in 3: 6 s + 3 ns, not divisible. */
	w = ended_wait(p, 3, START + 2 * S + 1, 7 * S + 3, 3 * (7 * S + 3));
	w.open = OFFCPU_WAIT_OPEN_BEFORE;
	w.runq_ns = 7;
	assert_int_equal(profile__add(p, &w), 0);
	w = ended_wait(p, 2, START + 2 * S, S / 4, 0);
	assert_int_equal(profile__add(p, &w), 0);
	w = ended_wait(p, 4, START, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	text = json_of(p);
	assert_non_null(strstr(text, "\"duration_ns\":1000000000,\"weight_ns\":0,"));
	assert_non_null(strstr(text, "\"duration_ns\":4000000000,\"weight_ns\":3000000000,"));
	assert_non_null(strstr(text, "\"duration_ns\":7000000003,\"weight_ns\":6000000003,"));
	assert_non_null(strstr(text, ",\"recording_start_ts_ns\":1000000000000}"));

	assert_int_equal(profile__new(true, &back), 0);
	assert_int_equal(read_json(text, back), 0);
	assert_int_equal(back->window_start_ns, START);
	assert_int_equal(back->total_ns, p->total_ns);
	assert_int_equal(back->total_count, p->total_count);
	assert_int_equal(back->total_runq_ns, p->total_runq_ns);
	assert_int_equal(back->estimated.ns, p->estimated.ns);
	assert_true(back->estimated.variance == p->estimated.variance);
	again = json_of(back);
	assert_string_equal(again, text);
	free(again);
	free(text);
	profile__free(back);
	profile__free(p);
}

/*
 * Recordings older than the window: read as they were (whole waits). A
 * weight_ns below what the window leaves of the wait is refused.
 */
static void older_and_forged_recordings(void **state)
{
	static const char older[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":4000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\"}\n";
	static const char below_window[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":2000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\",\"recording_start_ts_ns\":2000}\n";
	static const char clipped_without_window[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":3000,\"cpu\":0,\"open\":\"both\"}\n"
	    "{\"type\":\"stats\"}\n";
	static const char clipped_not_before[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000,\"pid\":1,\"tid\":1,\"comm\":\"a\","
	    "\"state\":\"interruptible\",\"wait\":\"pipe\",\"duration_ns\":4000,"
	    "\"weight_ns\":3000,\"cpu\":0}\n"
	    "{\"type\":\"stats\",\"recording_start_ts_ns\":2000}\n";
	struct profile *p;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(older, p), 0);
	assert_int_equal(p->total_ns, 4000);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(below_window, p), -EINVAL);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(clipped_without_window, p), -EINVAL);
	profile__free(p);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(read_json(clipped_not_before, p), -EINVAL);
	profile__free(p);
}

/*
 * What a wait waited on, and its holder, read back as written; the text
 * report's table names it from the recording as from the live profile.
 */
static void objects_round_trip(void **state)
{
	static const char text[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":5000000,\"pid\":7,\"tid\":8,\"comm\":\"w_orders\","
	    "\"state\":\"interruptible\",\"wait\":\"lock:mutex\",\"duration_ns\":3000000,"
	    "\"weight_ns\":3000000,\"cpu\":0,\"object\":{\"kind\":\"mutex\",\"name\":"
	    "\"orders_lock\",\"addr\":\"0x55d0c0de1040\",\"holder\":{\"pid\":7,\"tid\":9,"
	    "\"comm\":\"h_orders\"}},\"kernel_stack\":[],\"user_stack\":[],\"runq_ns\":0}\n"
	    "{\"type\":\"offcpu\",\"ts_ns\":6000000,\"pid\":7,\"tid\":8,\"comm\":\"w_orders\","
	    "\"state\":\"interruptible\",\"wait\":\"sleep\",\"duration_ns\":1000000,"
	    "\"weight_ns\":1000000,\"cpu\":0,\"object\":{\"kind\":\"timer\",\"name\":"
	    "\"timer 1 ms\"},\"kernel_stack\":[],\"user_stack\":[],\"runq_ns\":0}\n"
	    "{\"type\":\"stats\"}\n";
	struct profile *p;
	char *again;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	assert_int_equal(read_json(text, p), 0);
	assert_int_equal(p->nr_waits, 2);
	assert_non_null(p->waits[0].object);
	assert_string_equal(p->waits[0].object->kind, "mutex");
	assert_string_equal(p->waits[0].object->name, "orders_lock");
	assert_int_equal(p->waits[0].object->addr, 0x55d0c0de1040ull);
	assert_int_equal(p->waits[0].object->holder_tid, 9);
	assert_string_equal(p->waits[0].object->holder_comm, "h_orders");
	assert_null(p->waits[1].object->holder_comm);
	assert_int_equal(p->waits[1].object->addr, 0);
	/* The waits' lines as they were; the stats record names every counter. */
	again = json_of(p);
	assert_memory_equal(again, text, strstr(text, "{\"type\":\"stats\"") - text);
	free(again);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recording_round_trip),
		cmocka_unit_test(samples_round_trip),
		cmocka_unit_test(objects_round_trip),
		cmocka_unit_test(recording_errors),
		cmocka_unit_test(recording_read_errors),
		cmocka_unit_test(pprof_of_recording_is_the_live_one),
		cmocka_unit_test(hostile_names_read_back_the_same),
		cmocka_unit_test(json_and_its_report_count_the_window),
		cmocka_unit_test(older_and_forged_recordings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
