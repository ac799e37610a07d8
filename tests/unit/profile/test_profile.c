// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregate profile: its entries and totals, exited processes' and
 * wakers' entries merged, weights and estimates, on-CPU samples apart, and
 * the strings a sweep keeps. A profile is of its window: a wait begun
 * before it adds only its time inside (profile__share) to the sums; the
 * whole wait stays in duration_ns. json's weight_ns and its report are
 * test_recording.c's, serve's counters test_metrics.c's.
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
#include "output/output.h"
#include "profile/profile.h"
#include "trace/recording.h"

#include "../profile_fixtures.h"
#include "../window_fixtures.h"

static void aggregation(void **state)
{
	struct profile *p = fixture_profile(false);
	struct profile_entry **entries;
	struct frame f[1];
	size_t nr;

	(void)state;
	assert_int_equal(p->total_count, 3);
	assert_int_equal(p->total_ns, 100000000);
	assert_int_equal(p->nr_waits, 0);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(nr, 2);
	/* Equal totals: by pid, then tid. */
	assert_int_equal(entries[0]->key.tid, 101);
	assert_int_equal(entries[0]->total_ns, 50000000);
	assert_int_equal(entries[0]->count, 2);
	assert_int_equal(entries[1]->key.tid, 102);
	assert_int_equal(entries[1]->total_ns, 50000000);
	assert_int_equal(entries[1]->count, 1);
	free(entries);
	/* The same frames give the same stack. */
	f[0] = kframe(p, 0xffffffff81000010ULL, "do_nanosleep");
	assert_ptr_equal(profile__intern_stack(p, f, 1), profile__intern_stack(p, f, 1));
	profile__free(p);
}
/*
 * offcpu serve's sweep keeps what a profile holds (its stacks' frames with
 * their inline frames, labels, entries, waits, thread accounts) and frees
 * the rest: the json written after it is the json written before, and under
 * ASan nothing it writes was freed.
 */
static void strings_held_survive_a_sweep(void **state)
{
	struct profile *p = fixture_profile(true);
	unsigned long strings, bytes, freed, freed_bytes, kept;
	struct thread_account a = { .pid = 100, .tid = 103 };
	struct label items[1];
	struct frame f[2];
	struct wait w = { 0 };
	char *before, *after;
	int err;

	(void)state;
	f[0] = uframe(p, 0x1400, "inlined_caller");
	f[0].system_name = strpool__intern(p->strings, "_Z14inlined_callerv");
	f[0].build_id = strpool__intern(p->strings, "0123abcd");
	f[0].file = strpool__intern(p->strings, "app.c");
	f[0].line = 12;
	f[0].inlined = inline_pool__intern(p->inlines, strpool__intern(p->strings, "helper"),
					   strpool__intern(p->strings, "helper.h"), 3, NULL);
	memset(&f[1], 0, sizeof(f[1]));
	f[1].addr = 0x7f0000001000;
	f[1].kind = strpool__intern(p->strings, "python");
	f[1].sym = strpool__intern(p->strings, "inner");
	f[1].file = strpool__intern(p->strings, "app.py");
	f[1].line = 27;
	items[0].name = "query";
	items[0].value = "SELECT 1";
	w.pid = 200;
	w.tid = 200;
	w.comm = strpool__intern(p->strings, "py");
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.cgroup = strpool__intern(p->strings, "/system.slice/py.service");
	w.waker.context = OFFCPU_WAKER_TASK;
	w.waker.comm = strpool__intern(p->strings, "waker");
	w.user_stack = profile__intern_stack(p, f, 2);
	w.labels = profile__intern_labels(p, items, 1, &err);
	assert_int_equal(err, 0);
	w.duration_ns = 1000;
	w.end_ts_ns = 4000;
	assert_int_equal(profile__add(p, &w), 0);
	a.comm = strpool__intern(p->strings, "exited");
	assert_int_equal(profile__add_thread(p, &a), 0);
	strpool__stats(p->strings, &kept, &bytes);
	strpool__intern(p->strings, "sh -c a title no one holds");
	strpool__intern(p->strings, "/tmp/perf-1.map");
	assert_non_null(inline_pool__intern(p->inlines, strpool__intern(p->strings, "gone"),
					    w.cgroup, 1, NULL));
	before = render(output_json__write, p);
	profile__mark_strings(p, p->strings, p->inlines);
	assert_int_equal(inline_pool__sweep(p->inlines), 1);
	strpool__sweep(p->strings, &freed, &freed_bytes);
	assert_int_equal(freed, 3);
	strpool__stats(p->strings, &strings, &bytes);
	assert_int_equal(strings, kept);
	after = render(output_json__write, p);
	assert_string_equal(before, after);
	assert_non_null(strstr(after, "helper.h"));
	assert_non_null(strstr(after, "SELECT 1"));
	free(before);
	free(after);
	profile__free(p);
}
static bool even_pids_alive(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid % 2 == 0;
}
/*
 * A profile whose odd pids have exited and whose entries merge from 8 on,
 * and a wait of comm in wait_class with the one kernel frame sym.
 */
static struct profile *merging_profile(const char *comm, const char *wait_class, const char *sym,
				       struct wait *w)
{
	struct profile *p;
	struct frame f;

	assert_int_equal(profile__new(false, &p), 0);
	p->process_alive = even_pids_alive;
	p->compact_at = 8;
	f = kframe(p, 0xffffffff81000010ULL, sym);
	*w = a_wait(p, comm, wait_class);
	w->kernel_stack = profile__intern_stack(p, &f, 1);
	return p;
}
/*
 * On-CPU samples are summed apart from the waits, by the same keys: no
 * off-CPU total moves, a sample before the window counts nowhere, and
 * exited processes' samples merge as their waits do.
 */
static void samples_are_summed_apart(void **state)
{
	struct wait w;
	struct profile *p = merging_profile("spin", "sleep", "do_nanosleep", &w);
	struct profile_entry **entries;
	struct wait s;
	size_t nr, i, exited = 0;
	uint32_t pid;

	(void)state;
	p->window_start_ns = 1000;
	w.pid = w.tid = 2;
	w.duration_ns = 500;
	w.end_ts_ns = 2000;
	assert_int_equal(profile__add(p, &w), 0);
	s = w;
	s.wait_class = NULL;
	s.state = OFFCPU_STATE_RUNNING;
	s.duration_ns = 10101010;
	s.end_ts_ns = 3000;
	assert_int_equal(profile__add_sample(p, &s), 0);
	assert_int_equal(profile__add_sample(p, &s), 0);
	s.end_ts_ns = 999;
	assert_int_equal(profile__add_sample(p, &s), 0);
	assert_int_equal(p->total_count, 1);
	assert_int_equal(p->total_ns, 500);
	assert_int_equal(p->oncpu.count, 2);
	assert_int_equal(p->oncpu.total_ns, 2 * 10101010);
	assert_int_equal(profile__sorted_samples(p, &entries, &nr), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(entries[0]->count, 2);
	assert_int_equal(entries[0]->total_ns, 2 * 10101010);
	assert_null(entries[0]->key.wait_class);
	free(entries);
	s.end_ts_ns = 3000;
	for (pid = 3; pid <= 60; pid++) {
		s.pid = s.tid = pid;
		assert_int_equal(profile__add_sample(p, &s), 0);
	}
	assert_int_equal(profile__sorted_samples(p, &entries, &nr), 0);
	for (i = 0; i < nr; i++)
		if (entries[i]->key.pid == PROFILE_EXITED_ID)
			exited += entries[i]->count;
	assert_true(exited >= 20);
	assert_true(nr <= 60 - exited);
	free(entries);
	assert_int_equal(p->oncpu.count, 60);
	assert_int_equal(p->total_count, 1);
	profile__free(p);
}
/* Past the mark, exited processes' entries merge; their time stays. */
static void exited_processes_merge(void **state)
{
	struct wait w;
	struct profile *p = merging_profile("short", "sleep", "do_nanosleep", &w);
	struct profile_entry **entries;
	size_t nr, i, exited = 0, total = 0;
	char *text;
	uint32_t pid;

	(void)state;
	for (pid = 1; pid <= 100; pid++) {
		w.pid = w.tid = pid;
		w.duration_ns = 1000;
		assert_int_equal(profile__add(p, &w), 0);
	}
	assert_int_equal(p->total_count, 100);
	assert_int_equal(p->total_ns, 100000);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	/*
	 * Live processes stay apart; exited ones merge each time the entries
	 * reach the mark, which then moves to twice what is left.
	 */
	for (i = 0; i < nr; i++) {
		if (entries[i]->key.pid == PROFILE_EXITED_ID)
			exited += entries[i]->count;
		else
			total += entries[i]->count;
	}
	assert_int_equal(exited + total, 100);
	assert_true(exited >= 25);
	assert_true(nr <= 100 - exited + 1);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "  short                     (exited)"));
	free(text);
	free(entries);
	profile__free(p);
}
/*
 * The waker ids are in an entry's key: a live shell's wait for each child
 * it ran, woken by that child's exit, was an entry per child for the run.
 * Past the mark, the exited wakers fold; the wakee stays itself.
 */
static void exited_wakers_merge(void **state)
{
	struct wait w;
	struct profile *p = merging_profile("sh", "child", "do_wait", &w);
	struct profile_entry **entries;
	size_t nr, i, folded = 0;
	uint32_t child;

	(void)state;
	w.pid = w.tid = 2; /* alive */
	w.waker.context = OFFCPU_WAKER_TASK;
	w.waker.comm = strpool__intern(p->strings, "child");
	for (child = 1; child <= 199; child += 2) {
		w.waker.pid = w.waker.tid = child; /* odd: exited */
		w.duration_ns = 1000;
		assert_int_equal(profile__add(p, &w), 0);
	}
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	for (i = 0; i < nr; i++) {
		assert_int_equal(entries[i]->key.pid, 2);
		if (entries[i]->key.waker.tid == PROFILE_EXITED_ID)
			folded += entries[i]->count;
	}
	assert_true(folded >= 25);
	assert_true(nr <= 100 - folded + 1);
	free(entries);
	profile__free(p);
}
/*
 * --short sample: waits kept by chance weigh more than their duration;
 * every total is by weight, the estimated part and its variance beside it.
 */
static void weights_and_estimates(void **state)
{
	struct profile *p = fixture_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct thread_account a = { .pid = 100,
				    .tid = 101,
				    .tracked_ns = 1000,
				    .exit_ns = 11000,
				    .run_ns = 2000,
				    .startup_ns = 500,
				    .recorded_ns = 5000,
				    .dropped_ns = 1500,
				    .unseen_ns = 0 };
	struct profile_entry **entries;
	struct wait w = p->waits[0];
	char *text, *again;
	size_t nr;

	(void)state;
	/* Two short waits --short sample kept at -m 1ms: 100 us and 400 us, 1 ms each. */
	w.end_ts_ns = 4000;
	w.duration_ns = 100000;
	w.weight_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);
	w.end_ts_ns = 5000;
	w.duration_ns = 400000;
	assert_int_equal(profile__add(p, &w), 0);
	assert_int_equal(p->total_ns, 102000000);
	assert_int_equal(p->total_count, 5);
	assert_int_equal(p->estimated.ns, 2000000);
	assert_int_equal(p->estimated.kept, 2);
	/* sum of w (w - d): 1e6 * 9e5 + 1e6 * 6e5 */
	assert_true(p->estimated.variance == 1.5e12);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(entries[0]->key.tid, 101);
	assert_int_equal(entries[0]->total_ns, 52000000);
	/* 2 exact waits, and 1e6/1e5 + 1e6/4e5 = 12.5 estimated */
	assert_true(profile__estimated_count(entries[0]) == 14.5);
	free(entries);

	text = render(output_folded__write, p);
	assert_non_null(strstr(text, " 52000000\n"));
	free(text);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "offcpu: 5 waits, 102.000 ms off CPU in total (2.000 ms "
				     "estimated, ±61.2%)\n"));
	assert_non_null(strstr(text, "estimated ±error"));
	free(text);

	/* weight_ns on every wait, and back; a thread's account too. */
	p->start_time_ns = 1700000000123456789ULL;
	p->duration_ns = 5000000000ULL;
	assert_int_equal(profile__add_thread(p, &a), 0);
	assert_int_equal(p->counters[OFFCPU_CNT_UNACCOUNTED_NS], 1000);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "Thread coverage"));
	assert_non_null(strstr(text, "  90.00% "));
	free(text);
	text = render(output_json__write, p);
	assert_non_null(strstr(text, "\"duration_ns\":30000000,\"weight_ns\":30000000,"));
	assert_non_null(strstr(text, "\"duration_ns\":100000,\"weight_ns\":1000000,"));
	assert_non_null(strstr(text, "{\"type\":\"thread\",\"pid\":100,\"tid\":101,"));
	back = read_back(text, &all, true);
	assert_int_equal(back->total_ns, 102000000);
	assert_int_equal(back->estimated.ns, 2000000);
	assert_int_equal(back->nr_threads, 1);
	assert_int_equal(back->threads[0].dropped_ns, 1500);
	assert_int_equal(back->counters[OFFCPU_CNT_UNACCOUNTED_NS], 1000);
	again = render(output_json__write, back);
	assert_string_equal(again, text);
	free(again);
	profile__free(back);
	free(text);
	profile__free(p);
}

static void share_is_the_part_inside(void **state)
{
	struct profile *p;
	struct wait_share s;
	struct wait w;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	/* Asleep 1 s before a 3 s window, still asleep at its end: 3 s. */
	w = ended_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.runq_ns = 10000;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 3 * S);
	assert_int_equal(s.weight_ns, 3 * S);
	assert_int_equal(s.runq_ns, 10000);
	/* No window: all of it. */
	profile__share(&w, 0, &s);
	assert_int_equal(s.inside_ns, 4 * S);
	assert_int_equal(s.weight_ns, 4 * S);
	/* Begun inside: whole. */
	w = ended_wait(p, 1, START + 3 * S, 2 * S, 0);
	profile__share(&w, START, &s);
	assert_int_equal(s.weight_ns, 2 * S);
	/* Sampled 1 in 10: ten times the part inside, its run queue alike. */
	w = ended_wait(p, 1, START + 3 * S, 4 * S, 40 * S);
	w.runq_ns = 1000;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 3 * S);
	assert_int_equal(s.weight_ns, 30 * S);
	assert_int_equal(s.runq_ns, 10000);
	/* A run queue longer than the part inside is cut to it. */
	w = ended_wait(p, 1, START + 5, 4 * S, 0);
	w.runq_ns = 100;
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 5);
	assert_int_equal(s.runq_ns, 5);
	/* Ended before the window, or as it began: nothing of it inside. */
	w = ended_wait(p, 1, START, 4 * S, 0);
	profile__share(&w, START, &s);
	assert_int_equal(s.inside_ns, 0);
	assert_int_equal(s.weight_ns, 0);
	profile__free(p);
}

static void sums_count_the_window_and_keep_so_far(void **state)
{
	struct profile_entry **entries;
	struct profile *p;
	struct wait w;
	size_t nr;

	(void)state;
	assert_int_equal(profile__new(true, &p), 0);
	p->window_start_ns = START;
	w = ended_wait(p, 1, START + 3 * S, 4 * S, 0);
	w.open = OFFCPU_WAIT_OPEN_BEFORE | OFFCPU_WAIT_OPEN_AFTER;
	assert_int_equal(profile__add(p, &w), 0);
	w = ended_wait(p, 2, START + 2 * S, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	/* Ended as the window began: counted and listed, with none of its time. */
	w = ended_wait(p, 3, START, S, 0);
	assert_int_equal(profile__add(p, &w), 0);
	assert_int_equal(p->total_ns, 4 * S);
	assert_int_equal(p->total_count, 3);
	assert_int_equal(p->nr_waits, 3);
	/* Clipped is not estimated: an exact wait stays exact. */
	assert_int_equal(p->estimated.ns, 0);
	assert_int_equal(p->estimated.kept, 0);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(entries[0]->key.tid, 1);
	assert_int_equal(entries[0]->total_ns, 3 * S);
	assert_int_equal(entries[0]->duration_ns, 4 * S);
	assert_int_equal(entries[1]->duration_ns, S);
	free(entries);
	profile__free(p);
}

static void estimate_of_a_sampled_wait_is_of_its_part_inside(void **state)
{
	struct profile *p;
	struct wait w;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	p->window_start_ns = START;
	w = ended_wait(p, 1, START + 3 * S, 4 * S, 40 * S);
	assert_int_equal(profile__add(p, &w), 0);
	/* Kept with p = 1/10: weight 30 s standing for 3 s, variance w (w - d) of those. */
	assert_int_equal(p->total_ns, 30 * S);
	assert_int_equal(p->estimated.ns, 30 * S);
	assert_int_equal(p->estimated.kept, 1);
	assert_true(p->estimated.variance == 30.0 * S * (30.0 * S - 3.0 * S));
	assert_true(p->estimated.count == 10.0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aggregation),
		cmocka_unit_test(exited_processes_merge),
		cmocka_unit_test(exited_wakers_merge),
		cmocka_unit_test(weights_and_estimates),
		cmocka_unit_test(strings_held_survive_a_sweep),
		cmocka_unit_test(share_is_the_part_inside),
		cmocka_unit_test(sums_count_the_window_and_keep_so_far),
		cmocka_unit_test(estimate_of_a_sampled_wait_is_of_its_part_inside),
		cmocka_unit_test(samples_are_summed_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
