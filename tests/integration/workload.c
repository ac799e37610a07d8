// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with known waits, for the integration tests. Every thread
 * blocks only inside the calls it times itself with CLOCK_MONOTONIC, so its
 * measured total is what offcpu must report for it.
 *
 *   workload truth FILE        the threads below; writes "name tid count total_ns"
 *   workload sleep NAME N MS   sets its comm to NAME, sleeps N x MS ms
 *
 * Threads of "truth": a sleeper (N x 20 ms), a waiter on a contended mutex,
 * a reader of an empty pipe, a parent waiting for a child process, a
 * migrator that blocks on one CPU and is woken on the other, and a thread
 * that blocks in one call chain and runs another right after waking (its
 * waits must carry the first chain).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 10
#define WAIT_MS 20

struct truth {
	const char *name;
	pid_t tid;
	int count;
	uint64_t total_ns;
};

enum { SLEEPER, MUTEX_WAITER, PIPE_READER, CHILD_WAITER, MIGRATOR, CHAIN, NR_THREADS };

static struct truth truths[NR_THREADS] = {
	[SLEEPER] = { .name = "sleeper" },	   [MUTEX_WAITER] = { .name = "mutex_waiter" },
	[PIPE_READER] = { .name = "pipe_reader" }, [CHILD_WAITER] = { .name = "child_waiter" },
	[MIGRATOR] = { .name = "migrator" },	   [CHAIN] = { .name = "chain" },
};

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static atomic_int mutex_round_held = -1;
static atomic_int mutex_round_done = -1;
static int pipe_fds[2];
static int migrate_fds[2];
static atomic_int migrator_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void start_truth(struct truth *t, const char *comm)
{
	t->tid = (pid_t)syscall(SYS_gettid);
	prctl(PR_SET_NAME, comm);
}

static void record(struct truth *t, uint64_t start)
{
	t->total_ns += now_ns() - start;
	t->count++;
}

__attribute__((noinline)) static void sleep_once(struct truth *t)
{
	uint64_t start = now_ns();

	sleep_ms(WAIT_MS);
	record(t, start);
}

__attribute__((noinline)) static void *sleeper_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[SLEEPER], "wl_sleeper");
	for (i = 0; i < ROUNDS; i++)
		sleep_once(&truths[SLEEPER]);
	return NULL;
}

__attribute__((noinline)) static void lock_contended(struct truth *t)
{
	uint64_t start = now_ns();

	pthread_mutex_lock(&contended);
	record(t, start);
	pthread_mutex_unlock(&contended);
}

__attribute__((noinline)) static void *mutex_waiter_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[MUTEX_WAITER], "wl_mutex");
	for (i = 0; i < ROUNDS; i++) {
		/* Spin, not block: only the lock itself may wait. */
		while (atomic_load(&mutex_round_held) != i)
			;
		lock_contended(&truths[MUTEX_WAITER]);
		atomic_store(&mutex_round_done, i);
	}
	return NULL;
}

static void *mutex_holder_thread(void *arg)
{
	int i;

	(void)arg;
	prctl(PR_SET_NAME, "wl_holder");
	for (i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&contended);
		atomic_store(&mutex_round_held, i);
		sleep_ms(WAIT_MS);
		pthread_mutex_unlock(&contended);
		while (atomic_load(&mutex_round_done) != i)
			sched_yield();
	}
	return NULL;
}

__attribute__((noinline)) static void read_byte(struct truth *t, int fd)
{
	uint64_t start = now_ns();
	char byte;

	if (read(fd, &byte, 1) != 1)
		abort();
	record(t, start);
}

__attribute__((noinline)) static void *pipe_reader_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[PIPE_READER], "wl_pipe");
	for (i = 0; i < ROUNDS; i++)
		read_byte(&truths[PIPE_READER], pipe_fds[0]);
	return NULL;
}

static void *pipe_writer_thread(void *arg)
{
	int i;

	(void)arg;
	prctl(PR_SET_NAME, "wl_writer");
	for (i = 0; i < ROUNDS; i++) {
		sleep_ms(WAIT_MS);
		if (write(pipe_fds[1], "x", 1) != 1)
			abort();
	}
	return NULL;
}

__attribute__((noinline)) static void wait_child(struct truth *t, pid_t child)
{
	uint64_t start = now_ns();

	if (waitpid(child, NULL, 0) != child)
		abort();
	record(t, start);
}

__attribute__((noinline)) static void *child_waiter_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[CHILD_WAITER], "wl_child");
	for (i = 0; i < ROUNDS / 2; i++) {
		pid_t child = fork();

		if (child < 0)
			abort();
		if (child == 0) {
			prctl(PR_SET_NAME, "wl_kid");
			sleep_ms(WAIT_MS);
			_exit(0);
		}
		wait_child(&truths[CHILD_WAITER], child);
	}
	return NULL;
}

static void pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(tid, sizeof(set), &set))
		abort();
}

__attribute__((noinline)) static void *migrator_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[MIGRATOR], "wl_migrator");
	pin(truths[MIGRATOR].tid, 0);
	atomic_store(&migrator_tid, truths[MIGRATOR].tid);
	for (i = 0; i < ROUNDS; i++)
		read_byte(&truths[MIGRATOR], migrate_fds[0]);
	return NULL;
}

/* Moves the blocked migrator to the other CPU, then wakes it there. */
static void *migration_driver_thread(void *arg)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i;
	pid_t tid;

	(void)arg;
	prctl(PR_SET_NAME, "wl_driver");
	while (!(tid = atomic_load(&migrator_tid)))
		sched_yield();
	for (i = 0; i < ROUNDS; i++) {
		sleep_ms(WAIT_MS);
		pin(tid, ncpu > 1 ? (i + 1) % 2 : 0);
		if (write(migrate_fds[1], "x", 1) != 1)
			abort();
	}
	return NULL;
}

__attribute__((noinline)) static void chain_a_inner(void)
{
	sleep_once(&truths[CHAIN]);
}

__attribute__((noinline)) static void chain_a_outer(void)
{
	chain_a_inner();
}

/* Runs (and makes system calls) right after the wake-up, without blocking. */
__attribute__((noinline)) static void chain_b_inner(void)
{
	uint64_t until = now_ns() + 2000000;

	while (now_ns() < until)
		syscall(SYS_getppid);
}

__attribute__((noinline)) static void chain_b_outer(void)
{
	chain_b_inner();
}

__attribute__((noinline)) static void *chain_thread(void *arg)
{
	int i;

	(void)arg;
	start_truth(&truths[CHAIN], "wl_chain");
	for (i = 0; i < ROUNDS; i++) {
		chain_a_outer();
		chain_b_outer();
	}
	return NULL;
}

static int run_truth(const char *path)
{
	void *(*threads[])(
	    void *) = { sleeper_thread,	    mutex_waiter_thread,     mutex_holder_thread,
			pipe_reader_thread, pipe_writer_thread,	     child_waiter_thread,
			migrator_thread,    migration_driver_thread, chain_thread };
	pthread_t ids[sizeof(threads) / sizeof(threads[0])];
	size_t i;
	FILE *out;

	if (pipe(pipe_fds) || pipe(migrate_fds))
		return 1;
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		if (pthread_create(&ids[i], NULL, threads[i], NULL))
			return 1;
	}
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
		pthread_join(ids[i], NULL);
	out = fopen(path, "w");
	if (!out)
		return 1;
	for (i = 0; i < NR_THREADS; i++)
		fprintf(out, "%s %d %d %llu\n", truths[i].name, truths[i].tid, truths[i].count,
			(unsigned long long)truths[i].total_ns);
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "truth"))
		return run_truth(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "sleep")) {
		int n = atoi(argv[3]), ms = atoi(argv[4]), i;

		prctl(PR_SET_NAME, argv[2]);
		for (i = 0; i < n; i++)
			sleep_ms(ms);
		return 0;
	}
	fprintf(stderr, "usage: workload truth FILE | workload sleep NAME N MS\n");
	return 2;
}
