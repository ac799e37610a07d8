// SPDX-License-Identifier: GPL-2.0
/* The rules parser and classification with user rules. */
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
#include "classify/rules.h"
#include "lib/array.h"
#include "offcpu.h"

static int parse_text(const char *text, struct rule_set *set, unsigned int *line, const char **why)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = rules__parse(f, set, line, why);
	fclose(f);
	return err;
}

static void parse_good_file(void **state)
{
	struct rule_set set = { 0 };
	unsigned int line = 0;
	const char *why = NULL;

	(void)state;
	assert_int_equal(parse_text("# comment\n"
				    "\n"
				    "user ProcSleep lock:pg-heavyweight   # trailing comment\n"
				    "kernel do_nanosleep\tsleep\n"
				    "user WaitLatch CheckpointerMain sleep:pg-idle\n",
				    &set, &line, &why),
			 0);
	assert_int_equal(set.nr, 3);
	assert_int_equal(set.rules[0].scope, RULE_USER);
	assert_string_equal(set.rules[0].globs[0], "ProcSleep");
	assert_string_equal(set.rules[0].wait_class, "lock:pg-heavyweight");
	assert_int_equal(set.rules[1].scope, RULE_KERNEL);
	assert_string_equal(set.rules[1].wait_class, "sleep");
	assert_int_equal(set.rules[2].nr_globs, 2);
	/* A second file appends. */
	assert_int_equal(parse_text("kernel x* other\n", &set, &line, &why), 0);
	assert_int_equal(set.nr, 4);
	rules__free(&set);
}

static void parse_errors_name_their_line(void **state)
{
	static const struct {
		const char *text;
		unsigned int line;
	} bad[] = {
		{ "user ProcSleep\n", 1 },
		{ "# ok\nuser ProcSleep lock\nstack ProcSleep lock\n", 3 },
		{ "\n\nuser ProcSleep locks\n", 3 },
		{ "kernel f waiting:x\n", 1 },
		{ "kernel f lock:\n", 1 },
		{ "kernel f lock:a b\n", 1 },
		{ "kernel f lock:bad/detail\n", 1 },
		{ "user a b c d e f g h i j k l m n o p q lock\n", 1 },
	};
	struct rule_set set = { 0 };
	size_t i;

	(void)state;
	assert_int_equal(
	    parse_text("kernel f lock\n", &set, &(unsigned int){ 0 }, &(const char *){ NULL }), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		unsigned int line = 0;
		const char *why = NULL;

		assert_int_equal(parse_text(bad[i].text, &set, &line, &why), -EINVAL);
		assert_int_equal(line, bad[i].line);
		assert_non_null(why);
		/* Nothing of a bad file is kept. */
		assert_int_equal(set.nr, 1);
	}
	rules__free(&set);
}

static void classes_and_globs(void **state)
{
	(void)state;
	assert_true(rules__valid_class("io"));
	assert_true(rules__valid_class("io:pg-wal"));
	assert_true(rules__valid_class("pagefault"));
	assert_true(rules__valid_class("idle"));
	assert_false(rules__valid_class("disk"));
	assert_false(rules__valid_class("io:"));
	assert_false(rules__valid_class(""));
	assert_true(rules__symbol_matches("schedule", "schedule"));
	assert_false(rules__symbol_matches("schedule", "schedule_timeout"));
	assert_true(rules__symbol_matches("schedule", "schedule.cold"));
	assert_true(rules__symbol_matches("futex_wait*", "futex_wait_queue"));
	assert_true(rules__symbol_matches("futex_wait*", "futex_wait"));
	assert_true(rules__symbol_matches("*_nanosleep", "hrtimer_nanosleep"));
	assert_true(rules__symbol_matches("LWLock[AW]*", "LWLockAcquire"));
	assert_false(rules__symbol_matches("futex_wait*", "futex_wake"));
}

static struct frame frames[2][16];

/* Leaf first, as recorded. */
static size_t fill(int side, const char *const *names, size_t nr)
{
	size_t i;

	memset(frames[side], 0, sizeof(frames[side]));
	for (i = 0; i < nr; i++)
		frames[side][i].sym = names[i];
	return nr;
}

#define FRAMES(side, ...)                                                                          \
	fill(side, (const char *const[]){ __VA_ARGS__ },                                           \
	     sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static const char *classify_recorded(const struct rule_set *rules, unsigned int state,
				     size_t nr_kernel, size_t nr_user)
{
	return classify__wait(rules, state, frames[0], nr_kernel, frames[1], nr_user);
}

/* One good line, then the read fails as a disk would. */
static ssize_t failing_read(void *cookie, char *buf, size_t size)
{
	static const char line[] = "kernel do_nanosleep sleep\n";
	int *calls = cookie;

	if ((*calls)++ == 0 && size >= sizeof(line) - 1) {
		memcpy(buf, line, sizeof(line) - 1);
		return (ssize_t)(sizeof(line) - 1);
	}
	errno = EIO;
	return -1;
}

/* A file that cannot be read to its end is an error with its cause, not a shorter file. */
static void read_errors_are_not_end_of_file(void **state)
{
	static const cookie_io_functions_t failing = { .read = failing_read };
	struct rule_set set = { 0 };
	unsigned int line = 0;
	const char *why = NULL;
	int calls = 0;
	FILE *f = fopen("/", "r");

	(void)state;
	/* A directory opens; its first read fails. */
	assert_non_null(f);
	assert_int_equal(rules__parse(f, &set, &line, &why), -EISDIR);
	assert_non_null(why);
	fclose(f);
	assert_int_equal(set.nr, 0);

	f = fopencookie(&calls, "r", failing);
	assert_non_null(f);
	assert_int_equal(rules__parse(f, &set, &line, &why), -EIO);
	fclose(f);
	/* The line read before the failure is not kept either. */
	assert_int_equal(set.nr, 0);
	rules__free(&set);
}

/* Stacks recorded from PostgreSQL 15 under pgbench on this kernel (6.18). */
static void postgres_pack(void **state)
{
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE, D = OFFCPU_STATE_UNINTERRUPTIBLE;
	struct rule_set set = { 0 };
	unsigned int line = 0;
	const char *why = NULL;
	char path[512];
	size_t k, u;
	FILE *f = fopen("rules/postgres.rules", "r");

	(void)state;
	assert_non_null(f);
	assert_int_equal(rules__parse(f, &set, &line, &why), 0);
	fclose(f);
	assert_true(set.nr > 20);

	k = FRAMES(0, "do_epoll_wait", "__x64_sys_epoll_wait", "do_syscall_64");
	u = FRAMES(1, "epoll_wait", "WaitLatch", "ProcSleep", NULL, "LockAcquireExtended",
		   "XactLockTableWait", "heap_update", "PostgresMain");
	assert_string_equal(classify_recorded(&set, S, k, u), "lock:pg-heavyweight");
	/* Without the pack the kernel only sees an epoll wait. */
	assert_string_equal(classify_recorded(NULL, S, k, u), "poll:epoll");

	u = FRAMES(1, "epoll_wait", "WaitLatch", "BackgroundWriterMain", "AuxiliaryProcessMain",
		   NULL, "PostmasterMain", "main");
	assert_string_equal(classify_recorded(&set, S, k, u), "sleep:pg-idle");
	u = FRAMES(1, "epoll_wait", "WaitLatch", "WalWriterMain", "AuxiliaryProcessMain");
	assert_string_equal(classify_recorded(&set, S, k, u), "sleep:pg-idle");
	u = FRAMES(1, "epoll_wait", "secure_read", NULL, "pq_getbyte", "PostgresMain");
	assert_string_equal(classify_recorded(&set, S, k, u), "net:pg-client");

	k = FRAMES(0, "file_write_and_wait_range", "ext4_sync_file", "do_fsync");
	u = FRAMES(1, "fdatasync", NULL, "XLogFlush", NULL, "CommitTransactionCommand",
		   "PostgresMain");
	assert_string_equal(classify_recorded(&set, D, k, u), "io:pg-wal");
	assert_string_equal(classify_recorded(NULL, D, k, u), "io:fsync");

	/* A WAL flush inside the checkpointer is I/O, not its idle sleep. */
	u = FRAMES(1, "fdatasync", "XLogFlush", "CreateCheckPoint", "CheckpointerMain");
	assert_string_equal(classify_recorded(&set, D, k, u), "io:pg-wal");

	k = FRAMES(0, "futex_do_wait", "__futex_wait", "futex_wait", "do_futex");
	u = FRAMES(1, "do_futex_wait.constprop.0", "__new_sem_wait_slow64.constprop.0",
		   "PGSemaphoreLock", "LWLockAcquire", "XLogInsertRecord");
	assert_string_equal(classify_recorded(&set, S, k, u), "lock:pg-lwlock");

	/* A preemption stays a wait for a CPU, whatever the user frames say. */
	assert_string_equal(classify_recorded(&set, OFFCPU_STATE_PREEMPTED, k, u), "cpu");
	rules__free(&set);

	/* The pack is found by name beside the binary or by path. */
	f = rules__open("rules/postgres.rules", path, sizeof(path));
	assert_non_null(f);
	fclose(f);
	assert_null(rules__open("no-such-pack-name", path, sizeof(path)));
}

static void user_rules_before_builtin(void **state)
{
	struct rule_set set = { 0 };
	unsigned int line;
	const char *why;
	size_t k, u;

	(void)state;
	assert_int_equal(parse_text("user backoff_* lock:backoff\n"
				    "kernel do_nanosleep sleep:custom\n",
				    &set, &line, &why),
			 0);
	k = FRAMES(0, "do_nanosleep", "hrtimer_nanosleep");
	u = FRAMES(1, "clock_nanosleep", "backoff_retry", "main");
	assert_string_equal(classify_recorded(&set, OFFCPU_STATE_INTERRUPTIBLE, k, u),
			    "lock:backoff");
	u = FRAMES(1, "clock_nanosleep", "main");
	assert_string_equal(classify_recorded(&set, OFFCPU_STATE_INTERRUPTIBLE, k, u),
			    "sleep:custom");
	rules__free(&set);
}

static void futex_refined_by_user_frames(void **state)
{
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE;
	size_t k, u;

	(void)state;
	k = FRAMES(0, "futex_do_wait", "__futex_wait", "futex_wait", "do_futex");
	u = FRAMES(1, "__futex_abstimed_wait_common", "__pthread_cond_wait", "worker_loop");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:condvar");
	u = FRAMES(1, "__futex_abstimed_wait_common", "___pthread_cond_timedwait", "worker_loop");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:condvar");
	u = FRAMES(1, "__lll_lock_wait", "___pthread_mutex_lock", "update_counter");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:mutex");
	u = FRAMES(1, "__futex_abstimed_wait_common", "__pthread_clockjoin_ex", "main");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:thread-join");
	u = FRAMES(1, "syscall", "park_timeout");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:futex");
	/* Not a futex wait: user frames do not turn a sleep into a lock. */
	k = FRAMES(0, "do_nanosleep", "hrtimer_nanosleep");
	u = FRAMES(1, "clock_nanosleep", "__pthread_cond_wait");
	assert_string_equal(classify_recorded(NULL, S, k, u), "sleep");
}

/*
 * Recorded on Debian 12's 6.1 PREEMPT_RT kernel: FUTEX_WAIT waiting for the
 * hash bucket's spinlock_t, an rt_mutex there (prev_state TASK_RTLOCK_WAIT,
 * uninterruptible). The futex call around it does not make it lock:futex.
 */
static void rt_spinlock_waits(void **state)
{
	const unsigned int S = OFFCPU_STATE_UNINTERRUPTIBLE;
	size_t k, u;

	(void)state;
	k = FRAMES(0, "schedule_rtlock", "rtlock_slowlock_locked", "rt_spin_lock", "futex_q_lock",
		   "futex_wait_setup", "futex_wait", "do_futex", "__x64_sys_futex");
	u = FRAMES(1, "syscall", "hammer", "start_thread");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:rt-spin");
	/* Without its leaf schedule_rtlock, the slow path below it still says it. */
	k = FRAMES(0, "rtlock_slowlock_locked", "rt_spin_lock", "futex_q_lock", "futex_wait");
	assert_string_equal(classify_recorded(NULL, S, k, u), "lock:rt-spin");
}

/* Recorded on 6.18: a CPU hog's switch on its way to user space, and a yield. */
static void yield_or_preempted(void **state)
{
	size_t k;

	(void)state;
	k = FRAMES(0, "exit_to_user_mode_loop", "do_syscall_64", "entry_SYSCALL_64_after_hwframe");
	assert_int_equal(classify__state(OFFCPU_STATE_RUNNING, frames[0], k),
			 OFFCPU_STATE_PREEMPTED);
	k = FRAMES(0, "irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt");
	assert_int_equal(classify__state(OFFCPU_STATE_RUNNING, frames[0], k),
			 OFFCPU_STATE_PREEMPTED);
	k = FRAMES(0, "do_sched_yield", "__x64_sys_sched_yield", "do_syscall_64");
	assert_int_equal(classify__state(OFFCPU_STATE_RUNNING, frames[0], k), OFFCPU_STATE_RUNNING);
	/* Other states are what sched_switch said. */
	assert_int_equal(classify__state(OFFCPU_STATE_INTERRUPTIBLE, frames[0], k),
			 OFFCPU_STATE_INTERRUPTIBLE);
}

/*
 * A syscall's entry point has the architecture in its name (the Makefile
 * builds x86, arm64, powerpc and s390): the rules that name one must match
 * them all. The inner function that would say the same (do_sched_yield,
 * ksys_sync_file_range) is often inlined into it, so it is left out here.
 */
static void syscall_wrappers_of_every_arch(void **state)
{
	static const char *const entries[] = {
		"__x64_sys_%s",	  "__ia32_sys_%s", "__arm64_sys_%s",
		"__s390x_sys_%s", "__s390_sys_%s", "sys_%s",
	};
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE, D = OFFCPU_STATE_UNINTERRUPTIBLE;
	char pause[64], sync[64], sync2[64], yield[64];
	size_t i, k;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(entries); i++) {
		snprintf(pause, sizeof(pause), entries[i], "pause");
		snprintf(sync, sizeof(sync), entries[i], "sync_file_range");
		/* powerpc (and 32-bit arm) have sync_file_range2 instead. */
		snprintf(sync2, sizeof(sync2), entries[i], "sync_file_range2");
		snprintf(yield, sizeof(yield), entries[i], "sched_yield");

		k = FRAMES(0, "schedule", pause, "invoke_syscall", "el0_svc_common");
		if (strcmp(classify_recorded(NULL, S, k, 0), "signal"))
			fail_msg("%s: %s", pause, classify_recorded(NULL, S, k, 0));
		k = FRAMES(0, "io_schedule", "folio_wait_bit_common", "folio_wait_writeback",
			   "__filemap_fdatawait_range", "file_fdatawait_range", sync,
			   "do_syscall_64");
		if (strcmp(classify_recorded(NULL, D, k, 0), "io:fsync"))
			fail_msg("%s: %s", sync, classify_recorded(NULL, D, k, 0));
		frames[0][5].sym = sync2;
		if (strcmp(classify_recorded(NULL, D, k, 0), "io:fsync"))
			fail_msg("%s: %s", sync2, classify_recorded(NULL, D, k, 0));
		k = FRAMES(0, "schedule", yield, "system_call_exception",
			   "system_call_vectored_common");
		if (classify__state(OFFCPU_STATE_RUNNING, frames[0], k) != OFFCPU_STATE_RUNNING)
			fail_msg("%s: not a yield", yield);
	}
	/* A name that only starts like a syscall's is not it. */
	k = FRAMES(0, "schedule", "__x64_sys_pause_other", "do_syscall_64");
	assert_string_equal(classify_recorded(NULL, S, k, 0), "other");
}

/*
 * With the kernel leaf's __sched frames found again, a kernel thread's loop
 * sleeps below schedule_timeout (kcompactd, rcu_gp_fqs_loop, as recorded
 * here): still its idle loop. A wait under a helper that is no loop stays
 * what it is.
 */
static void idle_loops_below_the_schedulers_sleeps(void **state)
{
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE, D = OFFCPU_STATE_IDLE;
	size_t k;

	(void)state;
	k = FRAMES(0, "schedule_timeout", "rcu_gp_fqs_loop", "rcu_gp_kthread", "kthread");
	assert_string_equal(classify_recorded(NULL, D, k, 0), "idle");
	k = FRAMES(0, "schedule_timeout", "kcompactd", "kthread", "ret_from_fork");
	assert_string_equal(classify_recorded(NULL, S, k, 0), "idle");
	k = FRAMES(0, "schedule_timeout", "wait_for_completion", "synchronize_rcu_normal");
	assert_string_equal(classify_recorded(NULL, D, k, 0), "other");
	k = FRAMES(0, "do_nanosleep", "hrtimer_nanosleep", "__x64_sys_nanosleep");
	assert_string_equal(classify_recorded(NULL, S, k, 0), "sleep");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idle_loops_below_the_schedulers_sleeps),
		cmocka_unit_test(parse_good_file),
		cmocka_unit_test(parse_errors_name_their_line),
		cmocka_unit_test(read_errors_are_not_end_of_file),
		cmocka_unit_test(classes_and_globs),
		cmocka_unit_test(postgres_pack),
		cmocka_unit_test(user_rules_before_builtin),
		cmocka_unit_test(futex_refined_by_user_frames),
		cmocka_unit_test(rt_spinlock_waits),
		cmocka_unit_test(yield_or_preempted),
		cmocka_unit_test(syscall_wrappers_of_every_arch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
