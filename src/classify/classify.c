// SPDX-License-Identifier: GPL-2.0
#include <linux/types.h>
#include <string.h>

#include "classify/classify.h"
#include "classify/goroutine.h"
#include "lib/array.h"
#include "offcpu.h"

struct builtin_rule {
	const char *pattern; /* a glob over function names */
	const char *wait_class;
};

/*
 * Kernel functions (globs), tried in order against every frame of the
 * stack; the first rule with a matching frame wins, so the specific rules
 * come before the generic ones (fsync before block I/O, futex before poll).
 * Old and new kernel names are both listed where a function was renamed.
 *
 * A syscall's entry point is named by architecture: __x64_sys_NAME (and
 * __ia32_sys_NAME for 32-bit tasks) on x86, __arm64_sys_NAME on arm64,
 * __s390x_sys_NAME (__s390_sys_NAME) on s390, sys_NAME on powerpc and
 * where there is no wrapper. "*sys_NAME" names them all, with no #ifdef
 * for the architecture this was built on: a recording made on one machine
 * may be reported on another.
 */
static const struct builtin_rule kernel_rules[] = {
	/*
	 * PREEMPT_RT makes spinlock_t and rwlock_t rt_mutexes whose waiters
	 * sleep in TASK_RTLOCK_WAIT (shown uninterruptible, as /proc shows it),
	 * inside whatever call took the lock (futex_q_lock under futex_wait):
	 * first, before the rules of any call. Since 5.15 (PREEMPT_RT's locking
	 * merge).
	 */
	{ "schedule_rtlock", "lock:rt-spin" },
	{ "rtlock_slowlock*", "lock:rt-spin" },
	/* fsync and friends wait on block I/O underneath: they come first. */
	{ "do_fsync", "io:fsync" },
	{ "vfs_fsync_range", "io:fsync" },
	{ "*sys_sync_file_range*", "io:fsync" }, /* powerpc: sync_file_range2 */
	{ "ksys_sync", "io:fsync" },
	{ "jbd2_log_wait_commit", "io:fsync" },
	{ "jbd2_*", "io:journal" },
	/* Locks. */
	{ "futex_wait_queue_me", "lock:futex" },
	{ "futex_wait_queue", "lock:futex" },
	{ "futex_wait*", "lock:futex" },
	{ "__futex_wait", "lock:futex" },
	{ "futex_lock_pi*", "lock:futex" },
	{ "__mutex_lock*", "lock:mutex" },
	{ "mutex_lock*", "lock:mutex" },
	{ "rt_mutex_slowlock*", "lock:mutex" },
	{ "rwsem_down_read_slowpath", "lock:rwsem" },
	{ "rwsem_down_write_slowpath", "lock:rwsem" },
	{ "__down_common", "lock:semaphore" },
	{ "locks_lock_inode_wait", "lock:file" },
	{ "flock_lock_inode_wait", "lock:file" },
	{ "posix_lock_inode_wait", "lock:file" },
	{ "fcntl_setlk*", "lock:file" },
	{ "__do_sys_flock", "lock:file" },
	/* Child processes, signals, sleeps. */
	/*
	 * A vfork parent waits in D until the child execs or exits;
	 * wait_for_vfork_done() is inlined into kernel_clone on 6.18, so
	 * the system call's entry names it there.
	 */
	{ "wait_for_vfork_done", "child:vfork" },
	{ "*sys_vfork", "child:vfork" },
	{ "do_wait", "child" },
	{ "kernel_wait4", "child" },
	{ "kernel_waitid", "child" },
	{ "do_signal_stop", "signal" },
	{ "ptrace_stop", "signal" },
	{ "sigsuspend", "signal" },
	{ "do_sigtimedwait", "signal" },
	{ "*sys_pause", "signal" },
	{ "do_nanosleep", "sleep" },
	{ "hrtimer_nanosleep", "sleep" },
	{ "msleep*", "sleep" },
	{ "usleep_range*", "sleep" },
	/* Pipes before the generic poll rules: a pipe read may poll. */
	{ "pipe_read", "pipe" },
	{ "pipe_write", "pipe" },
	{ "anon_pipe_read", "pipe" }, /* 6.14+ */
	{ "anon_pipe_write", "pipe" },
	{ "pipe_wait*", "pipe" },
	/* Network. */
	{ "sk_wait_data", "net:recv" },
	{ "tcp_recvmsg*", "net:recv" },
	{ "udp_recvmsg", "net:recv" },
	{ "__skb_wait_for_more_packets", "net:recv" },
	{ "__skb_recv_datagram", "net:recv" },
	{ "unix_stream_read_generic", "net:unix" },
	{ "unix_dgram_recvmsg", "net:unix" },
	{ "unix_wait_for_peer", "net:unix" },
	{ "inet_csk_accept", "net:accept" },
	{ "unix_accept", "net:accept" },
	{ "sk_stream_wait_memory", "net:send" },
	{ "sock_alloc_send_pskb", "net:send" },
	{ "inet_wait_for_connect", "net:connect" },
	/* Pollers. */
	{ "ep_poll", "poll:epoll" },
	{ "do_epoll_wait", "poll:epoll" },
	{ "do_select", "poll:select" },
	{ "core_sys_select", "poll:select" },
	{ "do_sys_poll", "poll" },
	{ "do_poll*", "poll" },
	{ "io_cqring_wait", "poll:io_uring" },
	/* Page faults that wait (on I/O or otherwise). */
	{ "handle_mm_fault", "pagefault" },
	{ "do_user_addr_fault", "pagefault" },
	{ "exc_page_fault", "pagefault" },
	/* Block and page-cache I/O. */
	{ "filemap_read", "io:read" },
	{ "filemap_fault", "io:read" },
	{ "ext4_file_write_iter", "io:write" },
	{ "io_schedule*", "io" },
	{ "folio_wait_bit*", "io" },
	{ "wait_on_page_bit*", "io" },
	{ "__wait_on_buffer", "io" },
	{ "bit_wait_io", "io" },
	{ "submit_bio_wait", "io" },
	{ "blk_mq_*", "io" },
	{ "__blkdev_direct_IO*", "io" },
};

/*
 * A futex wait is the kernel half of every user-space lock, condition
 * variable and join: the user frames say which. Tried after the kernel
 * rules have said lock:futex.
 */
static const struct builtin_rule futex_user_rules[] = {
	/* glibc's own names carry one to three leading underscores. */
	{ "*pthread_cond_*wait*", "lock:condvar" },
	{ "*pthread_rwlock_*", "lock:rwlock" },
	{ "*pthread_mutex_*lock*", "lock:mutex" },
	{ "__lll_lock_wait*", "lock:mutex" },
	{ "sem_*wait", "lock:semaphore" },
	{ "__new_sem_wait*", "lock:semaphore" },
	{ "pthread_join", "lock:thread-join" },
	{ "__pthread_clockjoin_ex", "lock:thread-join" },
	{ "pthread_barrier_wait", "lock:barrier" },
};

/*
 * The loops of kernel threads that wait for work: a wait whose leaf frame
 * (the scheduler's own frames are not recorded) is the loop itself has no
 * work in hand. A worker blocked inside process_one_work() has another
 * leaf and keeps the class of what it waits on. Recorded on 6.18: the
 * first eight, 60-85% of an idle machine's off-CPU time.
 */
static const char *const idle_loops[] = {
	"worker_thread",  /* kworker/N: workqueue workers with no work */
	"kcompactd",	  /* memory compaction */
	"kdamond_fn",	  /* DAMON */
	"rcu_gp_kthread", /* RCU grace periods and their waits */
	"rcu_gp_fqs_loop",
	"rcu_tasks_*",
	"smpboot_thread_fn", /* ksoftirqd, migration, cpuhp, watchdog */
	"rescuer_thread",
	"kthreadd",
	"kthread",	  /* created, not yet started */
	"kthread_parkme", /* parked while its CPU is offline */
	"kthread_worker_fn",
	"rcu_*kthread", /* rcu_nocb_*, rcu_cpu_kthread, rcu_boost */
	"kswapd",
	"kswapd_try_to_sleep",
	"khugepaged*",
	"oom_reaper",
	"kauditd_thread",
	"kjournald2", /* jbd2/DEV: journal commits wait here between them */
	"ext4_lazyinit_thread",
	"irq_thread", /* threaded interrupt handlers */
	"watchdog",   /* khungtaskd */
	"devtmpfs_work_loop",
	"scsi_error_handler",
	"ksm_scan_thread",
	"hwrng_fillfn",
};

/*
 * The scheduler's own ways to sleep, which a kernel thread's loop calls
 * (kcompactd and rcu_gp_fqs_loop sleep in schedule_timeout). They are
 * __sched: since the kernel leaf keeps them the loop is
 * the first frame after them.
 */
static const char *const sleep_helpers[] = {
	"schedule_timeout*", "schedule_hrtimeout*", "schedule_preempt_disabled",
	"io_schedule*",	     "__cond_resched",	    "preempt_schedule*",
};

static bool is_sleep_helper(const char *sym)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sleep_helpers); i++) {
		if (rules__symbol_matches(sleep_helpers[i], sym))
			return true;
	}
	return false;
}

static bool is_idle_loop(const struct frame *kernel, size_t nr_kernel)
{
	size_t i, leaf = 0;

	while (leaf < nr_kernel && kernel[leaf].sym && is_sleep_helper(kernel[leaf].sym))
		leaf++;
	if (leaf == nr_kernel || !kernel[leaf].sym)
		return false;
	for (i = 0; i < ARRAY_SIZE(idle_loops); i++) {
		if (rules__symbol_matches(idle_loops[i], kernel[leaf].sym))
			return true;
	}
	return false;
}

static const char *first_match(const struct builtin_rule *rules, size_t nr_rules,
			       const struct frame *frames, size_t nr)
{
	size_t r;

	for (r = 0; r < nr_rules; r++) {
		if (rules__frames_match(rules[r].pattern, frames, nr))
			return rules[r].wait_class;
	}
	return NULL;
}

static const struct builtin_rule yield_rules[] = {
	{ "do_sched_yield", "running" },
	{ "*sys_sched_yield", "running" },
	{ "yield", "running" },
	{ "yield_to", "running" },
};

unsigned int classify__state(unsigned int state, const struct frame *kernel, size_t nr_kernel)
{
	if (state != OFFCPU_STATE_RUNNING)
		return state;
	if (first_match(yield_rules, ARRAY_SIZE(yield_rules), kernel, nr_kernel))
		return OFFCPU_STATE_RUNNING;
	return OFFCPU_STATE_PREEMPTED;
}

const char *classify__from_labels(const struct rule_set *user_rules, unsigned int state,
				  const struct labels *labels)
{
	size_t r;

	if (!labels || state == OFFCPU_STATE_PREEMPTED || state == OFFCPU_STATE_RUNNING)
		return NULL;
	for (r = 0; user_rules && r < user_rules->nr; r++) {
		const struct wait_rule *rule = &user_rules->rules[r];

		if (rule->scope == RULE_LABEL &&
		    rules__label_matches(rule, profile__label(labels, rule->label)))
			return rule->wait_class;
	}
	return NULL;
}

const char *classify__wait(const struct rule_set *user_rules, unsigned int state,
			   const struct frame *kernel, size_t nr_kernel, const struct frame *user,
			   size_t nr_user)
{
	return classify__wait_parked(user_rules, state, kernel, nr_kernel, user, nr_user, NULL);
}

const char *classify__wait_parked(const struct rule_set *user_rules, unsigned int state,
				  const struct frame *kernel, size_t nr_kernel,
				  const struct frame *user, size_t nr_user, const char *parked)
{
	const char *found;
	size_t r;

	if (state == OFFCPU_STATE_PREEMPTED || state == OFFCPU_STATE_RUNNING)
		return "cpu";
	for (r = 0; user_rules && r < user_rules->nr; r++) {
		if (rules__match(&user_rules->rules[r], kernel, nr_kernel, user, nr_user))
			return user_rules->rules[r].wait_class;
	}
	/* Go's scheduler waits, for the goroutine that parked or its own. */
	if (parked)
		return parked;
	found = goroutine__m_class(user, nr_user);
	if (found)
		return found;
	if (is_idle_loop(kernel, nr_kernel))
		return "idle";
	found = first_match(kernel_rules, ARRAY_SIZE(kernel_rules), kernel, nr_kernel);
	if (found && !strcmp(found, "lock:futex"))
		return first_match(futex_user_rules, ARRAY_SIZE(futex_user_rules), user, nr_user)
			   ?: found;
	if (found)
		return found;
	if (state == OFFCPU_STATE_STOPPED || state == OFFCPU_STATE_TRACED)
		return "signal";
	return "other";
}
