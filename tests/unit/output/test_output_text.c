// SPDX-License-Identifier: GPL-2.0
/*
 * The text report of the fixture profile: its tables, --group-by; hostile
 * names, folded's too. Its top stacks, on stacks as deep as a recording can
 * make them; --top.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/inline_pool.h"
#include "offcpu.h"
#include "output/frame_names.h"
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

/* The buffer is the caller's: gcc 12 takes a returned one for a dangling local. */
static void report_top(const struct profile *p, uint32_t top, char **text, size_t *size)
{
	struct output_opts opts = { .group_by = GROUP_BY_TID, .top = top };
	FILE *out = open_memstream(text, size);

	assert_non_null(out);
	assert_int_equal(output_format__write(output_format__by_name("text"), out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
}

static void report(const struct profile *p, char **text, size_t *size)
{
	report_top(p, 0, text, size);
}

/*
 * Every user frame of the deepest stack with the deepest inline chain the
 * folded lines keep: far more names than the two stacks' frames, which
 * the report once took for the bound and so cut off the kernel leaf.
 */
static void deepest_stack_keeps_its_leaf(void **state)
{
	static struct frame user[OFFCPU_MAX_STACK_DEPTH], kernel[OFFCPU_MAX_STACK_DEPTH];
	struct profile *p;
	struct wait w = { 0 };
	static const char heading[] =
	    "  #1 deep;[interruptible];[sleep]  5.000 ms, 100.0%, 1 wait\n";
	char name[64], *text, *at;
	size_t i, k, size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	for (i = 0; i < OFFCPU_MAX_STACK_DEPTH; i++) {
		const struct frame_inline *in = NULL;

		memset(&user[i], 0, sizeof(user[i]));
		snprintf(name, sizeof(name), "caller_%zu", i);
		user[i].sym = strpool__intern(p->strings, i ? name : "user_leaf");
		user[i].addr = 0x1000 + i;
		for (k = 0; k < FRAME_NAMES_MAX_INLINES; k++) {
			snprintf(name, sizeof(name), "inlined_%zu_%zu", i, k);
			in = inline_pool__intern(p->inlines, strpool__intern(p->strings, name),
						 NULL, 0, in);
			assert_non_null(in);
		}
		user[i].inlined = in;
		memset(&kernel[i], 0, sizeof(kernel[i]));
		snprintf(name, sizeof(name), "kernel_%zu", i);
		kernel[i].sym = strpool__intern(p->strings, i ? name : "kernel_leaf");
		kernel[i].addr = 0xffffffff81000000ULL + i;
		kernel[i].kernel = true;
	}
	w.pid = w.tid = 42;
	w.comm = strpool__intern(p->strings, "deep");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.kernel_stack = profile__intern_stack(p, kernel, OFFCPU_MAX_STACK_DEPTH);
	w.user_stack = profile__intern_stack(p, user, OFFCPU_MAX_STACK_DEPTH);
	w.duration_ns = 5000000;
	assert_int_equal(profile__add(p, &w), 0);

	report(p, &text, &size);
	at = strstr(text, heading);
	assert_non_null(at);
	at += strlen(heading);
	/*
	 * Leaf first: the kernel leaf, the rest of the kernel stack, then user
	 * frames, each side under its own heading, no "_[k]" on the names.
	 */
	assert_true(!strncmp(at, "    kernel:\n      kernel_leaf\n      kernel_1\n",
			     strlen("    kernel:\n      kernel_leaf\n      kernel_1\n")));
	assert_null(strstr(at, "_[k]"));
	/* The user leaf's innermost inlined function is the first user name. */
	assert_non_null(strstr(at, "      kernel_126\n    user:\n      inlined_0_31\n"));
	assert_non_null(strstr(at, "      inlined_0_0\n      user_leaf\n      inlined_1_31\n"));
	/* And the root end: the outermost caller last. */
	assert_non_null(strstr(at, "      inlined_126_0\n      caller_126\n\nHealth counters\n"));
	free(text);
	profile__free(p);
}

/* 30 threads, one stack each, in 3 wait classes and 2 states; the first nr_open still waiting. */
static struct profile *many_threads_open(uint32_t nr_open)
{
	static const char *const classes[] = { "sleep", "io", "lock:futex" };
	struct frame kernel = { .addr = 0xffffffff81000000ULL, .kernel = true };
	struct profile *p;
	char name[32];
	uint32_t i;

	assert_int_equal(profile__new(false, &p), 0);
	for (i = 0; i < 30; i++) {
		struct wait w = { 0 };

		snprintf(name, sizeof(name), "kernel_%u", i);
		kernel.sym = strpool__intern(p->strings, name);
		snprintf(name, sizeof(name), "thread_%u", i);
		w.pid = w.tid = 100 + i;
		w.comm = strpool__intern(p->strings, name);
		w.state = i % 2 ? OFFCPU_STATE_INTERRUPTIBLE : OFFCPU_STATE_UNINTERRUPTIBLE;
		w.wait_class = strpool__intern(p->strings, classes[i % 3]);
		w.kernel_stack = profile__intern_stack(p, &kernel, 1);
		w.duration_ns = 1000000 + i;
		w.open = i < nr_open ? OFFCPU_WAIT_OPEN_AFTER : 0;
		assert_int_equal(profile__add(p, &w), 0);
	}
	return p;
}

static struct profile *many_threads(void)
{
	return many_threads_open(0);
}

static size_t count(const char *text, const char *needle)
{
	size_t n = 0;

	for (; (text = strstr(text, needle)); text++)
		n++;
	return n;
}

/* Rows of the threads named thread_N (a health counter's name starts "thread_" too). */
static size_t thread_rows(const char *text)
{
	size_t n = 0;

	for (; (text = strstr(text, "  thread_")); text++)
		n += text[9] >= '0' && text[9] <= '9';
	return n;
}

/* Without --top: 20 threads and 10 stacks, every state and class; with it, N of each. */
static void top_cuts_every_table(void **state)
{
	struct profile *p = many_threads();
	char *text;
	size_t size;

	(void)state;
	report(p, &text, &size);
	assert_non_null(strstr(text, "\nBy thread state\n"));
	assert_non_null(strstr(text, "\nBy wait class\n"));
	assert_non_null(strstr(text, "\nBy thread (top 20)\n"));
	assert_int_equal(thread_rows(text), 20);
	assert_non_null(strstr(text, "  ... 10 more\n"));
	assert_int_equal(count(text, "  #"), 10);
	free(text);

	report_top(p, 2, &text, &size);
	assert_non_null(strstr(text, "\nBy thread state (top 2)\n"));
	assert_non_null(strstr(text, "\nBy wait class (top 2)\n  wait class"));
	assert_non_null(strstr(text, "\nBy thread (top 2)\n"));
	assert_int_equal(thread_rows(text), 2);
	assert_non_null(strstr(text, "  ... 1 more\n"));
	assert_non_null(strstr(text, "  ... 28 more\n"));
	assert_int_equal(count(text, "  #"), 2);
	free(text);
	profile__free(p);
}

/*
 * Kernel threads idling are left out of every table and the top stacks,
 * the shares are of the rest, and one line says how much and how to see
 * them; with -k (show_idle) they are shown like any wait.
 */
static void idle_is_hidden_and_said_so(void **state)
{
	struct frame kernel = { .addr = 0xffffffff81000000ULL, .kernel = true };
	struct output_opts opts = { .group_by = GROUP_BY_TID };
	struct wait w = { 0 };
	struct profile *p;
	char *text = NULL;
	size_t size;
	FILE *out;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	kernel.sym = strpool__intern(p->strings, "worker_thread");
	w.pid = w.tid = 7;
	w.comm = strpool__intern(p->strings, "kworker/0:1");
	w.state = OFFCPU_STATE_IDLE;
	w.wait_class = strpool__intern(p->strings, "idle");
	w.kernel_stack = profile__intern_stack(p, &kernel, 1);
	w.duration_ns = 3000000;
	assert_int_equal(profile__add(p, &w), 0);
	kernel.sym = strpool__intern(p->strings, "do_nanosleep");
	w.pid = w.tid = 8;
	w.comm = strpool__intern(p->strings, "app");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.kernel_stack = profile__intern_stack(p, &kernel, 1);
	w.duration_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);

	report(p, &text, &size);
	assert_non_null(strstr(text, "offcpu: 2 waits, 4.000 ms off CPU in total\n"
				     "hidden: 3.000 ms (75.0%) in 1 wait of kernel threads idling "
				     "(wait class idle); -k or -c/-p/-t shows them\n"));
	assert_null(strstr(text, "kworker"));
	assert_null(strstr(text, "worker_thread"));
	assert_null(strstr(text, "  idle "));
	assert_non_null(
	    strstr(text, "  sleep                                    1.000 ms  100.0%"));
	assert_non_null(
	    strstr(text, "  #1 app;[interruptible];[sleep]  1.000 ms, 100.0%, 1 wait\n"));
	free(text);

	text = NULL;
	opts.show_idle = true;
	out = open_memstream(&text, &size);
	assert_non_null(out);
	assert_int_equal(output_format__write(output_format__by_name("text"), out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	assert_null(strstr(text, "hidden:"));
	assert_non_null(strstr(text, "  #1 kworker/0:1;[idle];[idle]  3.000 ms, 75.0%"));
	assert_non_null(strstr(text, "    kernel:\n      worker_thread\n"));
	free(text);
	profile__free(p);
}

/*
 * The summary first: the tables come before the waits still open at the
 * stop, which --top cuts as the stacks, saying how many more there are and
 * what shows them. When every wait is still open (a snapshot), their list
 * is the stacks: each is printed once.
 */
static void still_waiting_after_the_summary_and_cut(void **state)
{
	struct profile *p = many_threads_open(12);
	const char *tables, *still, *stacks;
	char *text;
	size_t size;

	(void)state;
	report(p, &text, &size);
	tables = strstr(text, "\nBy wait class\n");
	still = strstr(text, "\nStill waiting (longest first)\n");
	stacks = strstr(text, "\nTop stacks (leaf first)\n");
	assert_true(tables && still && stacks && tables < still && still < stacks);
	assert_non_null(strstr(still, "  #10 tid "));
	assert_null(strstr(still, "  #11 tid "));
	assert_non_null(strstr(still, "\n  ... 2 more still waiting; --top 12 shows them\n"));
	free(text);
	report_top(p, 12, &text, &size);
	assert_non_null(strstr(text, "  #12 tid "));
	assert_null(strstr(text, "more still waiting"));
	free(text);
	profile__free(p);

	p = many_threads_open(30);
	report_top(p, 30, &text, &size);
	assert_non_null(strstr(text, "\nStill waiting (longest first)\n"));
	assert_null(strstr(text, "Top stacks"));
	assert_int_equal(count(text, "      kernel_7\n"), 1);
	free(text);
	profile__free(p);
}

/* Counters that counted something one a line, as --stats aligns them; the rest in one line. */
static void zero_counters_in_one_line(void **state)
{
	struct profile *p = many_threads();
	char *text;
	size_t size;

	(void)state;
	p->counters[OFFCPU_CNT_SWITCHES] = 42;
	p->counters[OFFCPU_CNT_SYMBOL_MISS] = 3;
	report(p, &text, &size);
	assert_non_null(strstr(text, "\nHealth counters\n"
				     "  switches                   42\n"
				     "  symbol_misses              3\n"
				     "  other counters: 0\n"));
	free(text);
	profile__free(p);
}

/*
 * The fixture's two threads of app with on-CPU samples of 1 ms (-F 1000):
 * 101 sleeps 50 ms, is preempted 5 ms (run queue) and waits 12.5 ms for
 * I/O, 2.5 ms of it in the run queue, and is sampled 9 times; 102 waits
 * 50 ms on a futex and is sampled 5 times: 3 in 101's stack, 2 in the
 * kernel alone.
 */
static struct profile *sampled_profile(void)
{
	struct profile *p = fixture_profile(false);
	struct frame user[2], kernel[1];
	struct wait w = { 0 }, s = { 0 };
	int i;

	user[0] = uframe(p, 0x1400, "compute");
	user[1] = uframe(p, 0x1300, "main");
	kernel[0] = kframe(p, 0xffffffff81000200ULL, "clear_page_erms");
	w.pid = 100;
	w.tid = 101;
	w.comm = strpool__intern(p->strings, "app");
	w.state = OFFCPU_STATE_PREEMPTED;
	w.wait_class = strpool__intern(p->strings, "cpu");
	w.duration_ns = w.runq_ns = 5000000;
	assert_int_equal(profile__add(p, &w), 0);
	w.state = OFFCPU_STATE_UNINTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "io");
	w.duration_ns = 12500000;
	w.runq_ns = 2500000;
	assert_int_equal(profile__add(p, &w), 0);

	s.pid = 100;
	s.comm = w.comm;
	s.state = OFFCPU_STATE_RUNNING;
	s.duration_ns = 1000000;
	s.user_stack = profile__intern_stack(p, user, 2);
	for (i = 0; i < 12; i++) {
		s.tid = i < 9 ? 101 : 102;
		s.title = i < 9 ? NULL : strpool__intern(p->strings, "app --worker");
		s.end_ts_ns = 5000 + (uint64_t)i;
		assert_int_equal(profile__add_sample(p, &s), 0);
	}
	s.user_stack = NULL;
	s.kernel_stack = profile__intern_stack(p, kernel, 1);
	for (i = 0; i < 2; i++)
		assert_int_equal(profile__add_sample(p, &s), 0);
	p->oncpu.period_ns = 1000000;
	return p;
}

/* One account of a thread that exited under -- COMMAND, its run time exact. */
static void add_account(struct profile *p, uint32_t tid, uint64_t run_ns)
{
	struct thread_account a = { .pid = 100, .tid = tid, .run_ns = run_ns };

	a.comm = strpool__intern(p->strings, "app");
	assert_int_equal(profile__add_thread(p, &a), 0);
}

/*
 * Under -F the report opens with where each thread's time went: on CPU
 * (n samples of 1 ms: n ms, ± sqrt(n) ms), run queue, blocked and their
 * sum, the heaviest first; then the waits' tables as before.
 */
static void wall_time_by_thread(void **state)
{
	struct profile *p = sampled_profile();
	const char *where, *accounted;
	char *text;
	size_t size;

	(void)state;
	report(p, &text, &size);
	assert_non_null(strstr(text,
			       "offcpu: 5 waits, 117.500 ms off CPU in total\n"
			       "blocked 110.000 ms, run queue 7.500 ms (6.4%: runnable, waiting "
			       "for a CPU after the wakeup)\n"
			       "on CPU 14.000 ms sampled (±3.742 ms): 14 samples, one every "
			       "1.000 ms of CPU time\n"));
	where = strstr(text, "\nWhere the time went, by thread (top 20; on CPU sampled, ± one "
			     "standard deviation)\n"
			     "  comm                  pid      tid       on CPU           ±"
			     "    run queue      blocked        total  blocked in\n"
			     "  app                   100      101     9.000 ms   ±3.000 ms"
			     "     7.500 ms    60.000 ms    76.500 ms  sleep 83.3%, io 16.7%\n"
			     "  app                   100      102     5.000 ms   ±2.236 ms"
			     "     0.000 us    50.000 ms    55.000 ms  lock:futex 100.0%\n"
			     "\nOff-CPU time accounted\n");
	assert_non_null(where);
	/* Without accounts of the threads (no -- COMMAND), no run time. */
	assert_null(strstr(text, "run time"));
	/* The waits' totals are what they are without the samples. */
	accounted = strstr(text, "  recorded               117.500 ms in 5 waits\n");
	assert_true(accounted && where < accounted);
	assert_non_null(
	    strstr(text, "\n  app                   100      101      67.500 ms   57.4%"));
	free(text);

	report_top(p, 1, &text, &size);
	assert_non_null(strstr(text, "\nWhere the time went, by thread (top 1; "));
	assert_non_null(strstr(text, "sleep 83.3%, io 16.7%\n  ... 1 more\n"));
	free(text);
	profile__free(p);
}

/*
 * The samples summed by command name and stacks, after the waits' stacks:
 * 101's and 102's in compute are one stack. Each with its ± and its share
 * of the on-CPU time, its frames leaf first as the waits' are.
 */
static void top_oncpu_stacks(void **state)
{
	struct profile *p = sampled_profile();
	const char *waits, *samples;
	char *text;
	size_t size;

	(void)state;
	report(p, &text, &size);
	waits = strstr(text, "\nTop stacks (leaf first)\n");
	samples = strstr(text, "\nTop on-CPU stacks (leaf first)\n"
			       "  #1 app;[on-cpu]  12.000 ms ±3.464 ms, 85.7%, 12 samples\n"
			       "    user:\n      compute\n      main\n"
			       "  #2 app;[on-cpu]  2.000 ms ±1.414 ms, 14.3%, 2 samples\n"
			       "    kernel:\n      clear_page_erms\n"
			       "\nHealth counters\n");
	assert_true(waits && samples && waits < samples);
	/* The waits' stacks hold no sample. */
	assert_null(strstr(waits, "[running]"));
	free(text);
	report_top(p, 1, &text, &size);
	assert_non_null(strstr(text, "12 samples\n    user:\n      compute\n      main\n"
				     "  ... 1 more\n"));
	free(text);
	profile__free(p);
}

/*
 * Under -- COMMAND each exited thread's exact run time stands beside its
 * sampled time; a row with a thread not accounted for has none. A
 * process's is the sum of its threads'.
 */
static void run_time_beside_the_samples(void **state)
{
	struct profile *p = sampled_profile();
	const char *accounted, *worker;
	char *text;

	(void)state;
	add_account(p, 101, 8500000);
	text = render(output_text__write, p);
	assert_non_null(strstr(text,
			       "  comm                  pid      tid       on CPU           ±"
			       "     run time    run queue      blocked        total  "
			       "blocked in\n"
			       "  app                   100      101     9.000 ms   ±3.000 ms"
			       "     8.500 ms     7.500 ms    60.000 ms    76.500 ms  sleep "
			       "83.3%, io 16.7%\n"
			       "  app                   100      102     5.000 ms   ±2.236 ms"
			       "            -     0.000 us    50.000 ms    55.000 ms  "
			       "lock:futex 100.0%\n"
			       "  run time: on CPU exactly, from offcpu's own switches, of the "
			       "threads that exited (Thread coverage below)\n"));
	free(text);
	/*
	 * By process: one row whatever its threads called themselves, named
	 * as its heaviest wait (a tie: the first thread's), its run time
	 * known once each of its threads is accounted for.
	 */
	text = render_by(output_text__write, p, GROUP_BY_PID);
	assert_non_null(strstr(text, "  app                            100    14.000 ms   ±3.742 ms"
				     "            -     7.500 ms   110.000 ms   131.500 ms  "
				     "lock:futex 45.5%, sleep 45.5%, ...\n"));
	free(text);
	add_account(p, 102, 4900000);
	text = render_by(output_text__write, p, GROUP_BY_PID);
	assert_non_null(strstr(text, "\nWhere the time went, by process (top 20; "));
	assert_non_null(strstr(text, "  process                        pid       on CPU           ±"
				     "     run time    run queue"));
	assert_non_null(strstr(text, "  app                            100    14.000 ms   ±3.742 ms"
				     "    13.400 ms     7.500 ms   110.000 ms   131.500 ms  "));
	/* The waits' own table is by title still. */
	accounted = strstr(text, "\nOff-CPU time accounted\n");
	worker = strstr(text, "\n  app --worker                   100 ");
	assert_true(accounted && worker && accounted < worker);
	free(text);
	profile__free(p);
}

/* Without samples, nothing of them: the report is as it was before -F. */
static void no_samples_no_wall_time(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_text__write, p);

	(void)state;
	assert_null(strstr(text, "on CPU"));
	assert_null(strstr(text, "Where the time went"));
	assert_null(strstr(text, "on-cpu"));
	free(text);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_report),
		cmocka_unit_test(text_group_by),
		cmocka_unit_test(hostile_names_in_text_and_folded),
		cmocka_unit_test(deepest_stack_keeps_its_leaf),
		cmocka_unit_test(top_cuts_every_table),
		cmocka_unit_test(idle_is_hidden_and_said_so),
		cmocka_unit_test(still_waiting_after_the_summary_and_cut),
		cmocka_unit_test(zero_counters_in_one_line),
		cmocka_unit_test(wall_time_by_thread),
		cmocka_unit_test(top_oncpu_stacks),
		cmocka_unit_test(run_time_beside_the_samples),
		cmocka_unit_test(no_samples_no_wall_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
