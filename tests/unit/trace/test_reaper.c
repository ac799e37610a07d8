// SPDX-License-Identifier: GPL-2.0
/*
 * The reaper's verdicts on real processes whose exit record was lost: a
 * live one is kept, one gone (reaped by its parent, or a zombie) is freed
 * at its second look, one whose PID another process took (clone3's set_tid
 * puts it there: root) at once.
 */
#include <errno.h>
#include <linux/sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace/reaper.h"

static pid_t child_that_sleeps(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	return pid;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* One look at now_ns, of pids[0..nr); the pids to free, sorted out into *out (nr). */
static size_t look(struct reaper *r, uint64_t now_ns, const pid_t *pids, size_t nr, uint32_t *out)
{
	uint32_t *gone;
	size_t nr_gone, held, i;

	assert_true(reaper__look_due(r, now_ns));
	for (i = 0; i < nr; i++)
		reaper__look_at(r, (uint32_t)pids[i]);
	assert_int_equal(reaper__end_look(r, &gone, &nr_gone, &held), 0);
	assert_int_equal(held, nr);
	for (i = 0; i < nr_gone; i++)
		out[i] = gone[i];
	free(gone);
	return nr_gone;
}

static void due_once_an_interval(void **state)
{
	struct reaper *r;

	(void)state;
	assert_int_equal(reaper__new(&r), 0);
	assert_false(reaper__look_due(r, 1000));
	assert_false(reaper__look_due(r, 1000 + REAPER_INTERVAL_NS - 1));
	assert_true(reaper__look_due(r, 1000 + REAPER_INTERVAL_NS));
	assert_false(reaper__look_due(r, 1000 + REAPER_INTERVAL_NS + 1));
	assert_true(reaper__look_due(r, 1000 + 3 * REAPER_INTERVAL_NS));
	reaper__free(r);
}

static void live_kept_gone_freed_at_the_second_look(void **state)
{
	pid_t pids[3] = { getpid(), child_that_sleeps(), child_that_sleeps() };
	uint64_t now = 0;
	struct reaper *r;
	uint32_t out[3];
	int round;

	(void)state;
	assert_int_equal(reaper__new(&r), 0);
	assert_false(reaper__look_due(r, now));
	reaper__hold(r, (uint32_t)pids[1]);
	for (round = 0; round < 3; round++)
		assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 3, out), 0);
	/* Reaped by its parent: no /proc/PID. A zombie: there, but exited. */
	end(pids[1]);
	kill(pids[2], SIGKILL);
	usleep(100 * 1000);
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 3, out), 0);
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 3, out), 2);
	assert_true((out[0] == (uint32_t)pids[1] && out[1] == (uint32_t)pids[2]) ||
		    (out[1] == (uint32_t)pids[1] && out[0] == (uint32_t)pids[2]));
	waitpid(pids[2], NULL, 0);
	/* Freed, they are not looked at again; the live one stays. */
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 1, out), 0);
	reaper__free(r);
}

/* Another look that does not say pid: it is no longer held, and forgotten. */
static void not_held_forgotten(void **state)
{
	pid_t pids[2] = { getpid(), child_that_sleeps() };
	struct reaper *r;
	uint32_t out[2];

	(void)state;
	assert_int_equal(reaper__new(&r), 0);
	assert_false(reaper__look_due(r, 0));
	assert_int_equal(look(r, REAPER_INTERVAL_NS, pids, 2, out), 0);
	end(pids[1]);
	assert_int_equal(look(r, 2 * REAPER_INTERVAL_NS, pids, 2, out), 0);
	/* Its exit record came between the looks. */
	reaper__forget(r, (uint32_t)pids[1]);
	assert_int_equal(look(r, 3 * REAPER_INTERVAL_NS, pids, 2, out), 0);
	assert_int_equal(look(r, 4 * REAPER_INTERVAL_NS, pids, 1, out), 0);
	reaper__free(r);
}

/* A child at pid, by clone3's set_tid; 0 when it is taken (another process got it). */
static pid_t child_at(pid_t pid)
{
	struct clone_args args = { 0 };
	long got;

	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)&pid;
	args.set_tid_size = 1;
	got = syscall(SYS_clone3, &args, sizeof(args));
	if (got == 0) {
		pause();
		_exit(0);
	}
	if (got < 0 && errno == EEXIST)
		return 0;
	assert_int_equal(got, pid);
	return pid;
}

static void reused_pid_freed_at_once(void **state)
{
	pid_t pids[1], again = 0;
	uint64_t now = 0;
	struct reaper *r;
	uint32_t out[1];
	int tries;

	(void)state;
	assert_int_equal(reaper__new(&r), 0);
	assert_false(reaper__look_due(r, now));
	for (tries = 0; tries < 10 && !again; tries++) {
		pids[0] = child_that_sleeps();
		reaper__hold(r, (uint32_t)pids[0]);
		/* Start times are in clock ticks (10 ms): the next starts in another. */
		usleep(50 * 1000);
		end(pids[0]);
		again = child_at(pids[0]);
		if (!again)
			reaper__forget(r, (uint32_t)pids[0]);
	}
	assert_true(again);
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 1, out), 1);
	assert_int_equal(out[0], (uint32_t)pids[0]);
	/* Who runs there now is held anew from its first wait, and kept. */
	reaper__hold(r, (uint32_t)pids[0]);
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 1, out), 0);
	assert_int_equal(look(r, now += REAPER_INTERVAL_NS, pids, 1, out), 0);
	end(again);
	reaper__free(r);
}

/* Held when already gone (its record read after it exited): what runs there later is another. */
static void gone_when_held_then_taken(void **state)
{
	pid_t pids[1], again = 0;
	struct reaper *r;
	uint32_t out[1];
	int tries;

	(void)state;
	assert_int_equal(reaper__new(&r), 0);
	assert_false(reaper__look_due(r, 0));
	for (tries = 0; tries < 10 && !again; tries++) {
		pids[0] = child_that_sleeps();
		end(pids[0]);
		reaper__hold(r, (uint32_t)pids[0]);
		again = child_at(pids[0]);
		if (!again)
			reaper__forget(r, (uint32_t)pids[0]);
	}
	assert_true(again);
	assert_int_equal(look(r, REAPER_INTERVAL_NS, pids, 1, out), 1);
	end(again);
	reaper__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(due_once_an_interval),
		cmocka_unit_test(live_kept_gone_freed_at_the_second_look),
		cmocka_unit_test(not_held_forgotten),
		cmocka_unit_test(reused_pid_freed_at_once),
		cmocka_unit_test(gone_when_held_then_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
