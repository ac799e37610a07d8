// SPDX-License-Identifier: GPL-2.0
/*
 * Wait classes of kernel stacks as recorded; and every recorded stack of
 * tests/unit/fixtures/recorded_stacks.tsv (real waits of known kinds, see
 * record_stacks.py) gets the class it was recorded as.
 */
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
#include "profile/frame.h"

static const char *classify_names(unsigned int state, const char *const *names, size_t nr)
{
	struct frame frames[16] = { 0 };
	size_t i;

	for (i = 0; i < nr; i++)
		frames[i].sym = names[i];
	return classify__wait(NULL, state, frames, nr, NULL, 0);
}
#define CLASSIFY(state, ...)                                                                       \
	classify_names(state, (const char *const[]){ __VA_ARGS__ },                                \
		       sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))
static void classification(void **state)
{
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE, D = OFFCPU_STATE_UNINTERRUPTIBLE;

	(void)state;
	/* Stacks as recorded on 6.18 (leaf first, scheduler frames removed). */
	assert_string_equal(CLASSIFY(S, "hrtimer_nanosleep", "common_nsleep_timens",
				     "__x64_sys_clock_nanosleep", "do_syscall_64"),
			    "sleep");
	assert_string_equal(CLASSIFY(S, "futex_do_wait", "__futex_wait", "futex_wait", "do_futex"),
			    "lock:futex");
	assert_string_equal(CLASSIFY(S, "futex_wait_queue_me", "futex_wait", "do_futex"),
			    "lock:futex");
	assert_string_equal(CLASSIFY(S, "anon_pipe_read", "vfs_read", "ksys_read"), "pipe");
	assert_string_equal(CLASSIFY(S, "pipe_wait", "pipe_read", "vfs_read"), "pipe");
	assert_string_equal(CLASSIFY(S, "do_wait", "kernel_wait4", "do_syscall_64"), "child");
	assert_string_equal(CLASSIFY(S, "do_epoll_wait", "__x64_sys_epoll_wait"), "poll:epoll");
	assert_string_equal(CLASSIFY(S, "schedule_hrtimeout_range", "do_select", "core_sys_select"),
			    "poll:select");
	assert_string_equal(CLASSIFY(S, "sk_wait_data", "tcp_recvmsg_locked", "tcp_recvmsg"),
			    "net:recv");
	assert_string_equal(CLASSIFY(S, "unix_stream_read_generic", "unix_stream_recvmsg"),
			    "net:unix");
	/* fsync waits on block I/O: the specific rule wins. */
	assert_string_equal(CLASSIFY(D, "io_schedule", "folio_wait_bit_common",
				     "file_write_and_wait_range", "ext4_sync_file",
				     "vfs_fsync_range", "do_fsync"),
			    "io:fsync");
	assert_string_equal(CLASSIFY(D, "io_schedule", "folio_wait_bit_common", "filemap_read"),
			    "io:read");
	assert_string_equal(CLASSIFY(D, "__mutex_lock.constprop.0", "do_truncate"), "lock:mutex");
	assert_string_equal(CLASSIFY(D, "rwsem_down_write_slowpath", "down_write"), "lock:rwsem");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_PREEMPTED, "do_nanosleep"), "cpu");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_RUNNING, "do_sched_yield"), "cpu");
	/* A kernel thread's loop waiting for work; inside a work item, the wait is the item's. */
	assert_string_equal(CLASSIFY(OFFCPU_STATE_IDLE, "worker_thread", "kthread"), "idle");
	assert_string_equal(
	    CLASSIFY(D, "synchronize_rcu_normal", "process_one_work", "worker_thread", "kthread"),
	    "other");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_STOPPED, "get_signal"), "signal");
	assert_string_equal(classify__wait(NULL, S, NULL, 0, NULL, 0), "other");
}

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
		cmocka_unit_test(classification),
		cmocka_unit_test(recorded_stacks_get_their_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
