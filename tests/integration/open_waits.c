// SPDX-License-Identifier: GPL-2.0
/*
 * Threads whose waits span a recording's start or stop. Each blocks in
 * read() on a pipe from a function called by main (or by a thread's
 * function), says on stdout when it blocked and when it woke
 * (CLOCK_MONOTONIC, offcpu's clock), and is woken by a writer after
 * WAKE_MS, never (0: killed by the test), or when the test sends SIGUSR1
 * (-1: once the tracer it starts has attached, however long that took).
 *
 *   open_waits read WAKE_MS        main blocks in read(), then sleeps a minute
 *   open_waits thread WAKE_MS      a thread "ow_reader" blocks, main spins
 *                                  in "ow_spinner" (running: never listed)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long wake_ms;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static sigset_t usr1;

static void *writer(void *arg)
{
	struct timespec ts = { wake_ms / 1000, (wake_ms % 1000) * 1000000L };
	int sig;

	(void)arg;
	if (wake_ms < 0)
		sigwait(&usr1, &sig);
	else
		nanosleep(&ts, NULL);
	if (write(fds[1], "x", 1) != 1)
		exit(1);
	return NULL;
}

__attribute__((noinline)) static void block_in_read(void)
{
	char c;

	printf("blocked %d %llu\n", gettid(), (unsigned long long)now_ns());
	fflush(stdout);
	if (read(fds[0], &c, 1) != 1)
		exit(1);
	printf("woke %d %llu\n", gettid(), (unsigned long long)now_ns());
	fflush(stdout);
}

static void *reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "ow_reader");
	block_in_read();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, r;
	volatile uint64_t spins = 0;

	if (argc != 3 || pipe(fds))
		return 2;
	wake_ms = atol(argv[2]);
	/* Blocked in every thread, so that the writer's sigwait() is the one to take it. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (wake_ms != 0 && pthread_create(&w, NULL, writer, NULL))
		return 1;
	if (!strcmp(argv[1], "read")) {
		block_in_read();
		/* Alive, so that its files can still be read to unwind the wait (killed by the test). */
		sleep(60);
		return 0;
	}
	if (pthread_create(&r, NULL, reader, NULL))
		return 1;
	prctl(PR_SET_NAME, "ow_spinner");
	for (;;)
		spins++;
}
