// SPDX-License-Identifier: GPL-2.0
/*
 * Threads blocked forever under known chains of static functions, built
 * with plain -O2 (no frame pointers), for the unwinder's tests to capture
 * and compare with gdb: the main thread in nanosleep; threads in
 * pthread_mutex_lock, a read of an empty pipe, a library without any
 * unwind tables (frame pointers only), a library whose CFI is only in
 * .debug_frame of its separate debug file, a signal handler (the stack
 * goes on through the signal frame into the interrupted pthread_kill),
 * and a recursion deeper than a stack copy (DEEP_LEVELS frames of
 * DEEP_FRAME_BYTES each). With an argument MS, every wait ends after
 * MS milliseconds and begins again from the same call sites, so offcpu
 * sees them complete: a feeder thread writes the pipe and lets the mutex
 * go each period. Prints
 * "ready" once every thread is started; a test waits until each one is
 * blocked (/proc/PID/task/TID/syscall).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unwind_libs.h"

#define DEEP_LEVELS 48
#define DEEP_FRAME_BYTES 1024
#define FOREVER_MS (1000 * 1000 * 1000)

/* Each caller does something after its call, so no call becomes a jump. */
#define CHAIN(name, callee)                                                                        \
	__attribute__((noipa)) static int name(int x)                                              \
	{                                                                                          \
		return callee(x) + 1;                                                              \
	}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fds[2];
static int period_ms = FOREVER_MS;

__attribute__((noipa)) static int nap(int ms)
{
	struct timespec ts;

	if (ms > period_ms)
		ms = period_ms;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;

	for (;;)
		nanosleep(&ts, NULL);
	return 0;
}
CHAIN(sleep_c, nap)
CHAIN(sleep_b, sleep_c)
CHAIN(sleep_a, sleep_b)

__attribute__((noipa)) static int take_lock(int x)
{
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	return x + 1;
}
CHAIN(lock_c, take_lock)
CHAIN(lock_b, lock_c)
CHAIN(lock_a, lock_b)

__attribute__((noipa)) static int drain(int x)
{
	char c;

	return (int)read(pipe_fds[0], &c, 1) + x;
}
CHAIN(read_c, drain)
CHAIN(read_b, read_c)
CHAIN(read_a, read_b)

CHAIN(nocfi_c, nocfi_sleep)
CHAIN(nocfi_b, nocfi_c)
CHAIN(nocfi_a, nocfi_b)

CHAIN(debugframe_c, debugframe_sleep)
CHAIN(debugframe_b, debugframe_c)
CHAIN(debugframe_a, debugframe_b)

CHAIN(on_signal_c, nap)

static void on_signal(int sig)
{
	on_signal_c(sig + FOREVER_MS);
}

__attribute__((noipa)) static int raise_it(int x)
{
	return pthread_kill(pthread_self(), SIGUSR1) + x;
}
CHAIN(raise_c, raise_it)
CHAIN(raise_b, raise_c)
CHAIN(raise_a, raise_b)

/* volatile: the frame stays DEEP_FRAME_BYTES deep at -O2. */
__attribute__((noipa)) static int recurse(int depth)
{
	volatile char pad[DEEP_FRAME_BYTES];

	pad[0] = (char)depth;
	if (depth == 0)
		return nap(FOREVER_MS);
	return recurse(depth - 1) + pad[0];
}

struct waiter {
	const char *name;
	int (*chain)(int);
	int arg;
};

static const struct waiter waiters[] = {
	{ "mutex", lock_a, 0 },		  { "pipe", read_a, 0 },
	{ "nocfi", nocfi_a, FOREVER_MS }, { "debugframe", debugframe_a, FOREVER_MS },
	{ "signal", raise_a, 0 },	  { "deep", recurse, DEEP_LEVELS },
};

static void *run(void *arg)
{
	const struct waiter *w = arg;
	long sum = 0;

	pthread_setname_np(pthread_self(), w->name);
	for (;;)
		sum += w->chain(w->arg == FOREVER_MS ? period_ms : w->arg);
	return (void *)sum;
}

/* Each period: a byte for the pipe reader, the mutex let go for a moment. */
static void *feed(void *arg)
{
	struct timespec period = { period_ms / 1000, (period_ms % 1000) * 1000000L };
	struct timespec moment = { 0, 1000000L };

	pthread_setname_np(pthread_self(), "feeder");
	pthread_mutex_lock(&held);
	sem_post(arg);
	for (;;) {
		nanosleep(&period, NULL);
		if (write(pipe_fds[1], "x", 1) != 1)
			return NULL;
		pthread_mutex_unlock(&held);
		nanosleep(&moment, NULL);
		pthread_mutex_lock(&held);
	}
}

int main(int argc, char **argv)
{
	pthread_t threads[sizeof(waiters) / sizeof(waiters[0])], feeder;
	sem_t fed;
	size_t i;

	if (pipe(pipe_fds) || signal(SIGUSR1, on_signal) == SIG_ERR)
		return 1;
	if (argc > 1)
		period_ms = atoi(argv[1]);
	if (period_ms <= 0)
		return 1;
	/* Periodic, the feeder holds the mutex, to let it go each period. */
	if (argc > 1) {
		if (sem_init(&fed, 0, 0) || pthread_create(&feeder, NULL, feed, &fed))
			return 1;
		while (sem_wait(&fed))
			;
	} else {
		pthread_mutex_lock(&held);
	}
	for (i = 0; i < sizeof(waiters) / sizeof(waiters[0]); i++)
		if (pthread_create(&threads[i], NULL, run, (void *)&waiters[i]))
			return 1;
	printf("ready\n");
	fflush(stdout);
	return sleep_a(FOREVER_MS);
}
