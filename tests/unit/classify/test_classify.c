// SPDX-License-Identifier: GPL-2.0
/* Wait classes of kernel stacks as recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify/classify.h"
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
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classification),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
