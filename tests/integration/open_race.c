// SPDX-License-Identifier: GPL-2.0
/*
 * The open-wait race's stress workload (test_open_race.py): threads that
 * block for a hundred microseconds or so at a time, so that an iterator
 * visiting them often finds one waking while it reads its stacks.
 *
 *   race-sleep   nanosleep in a loop;
 *   race-futex   in pairs, each waiting on a futex for the other, which
 *                sleeps a little (nanosleep) before it hands the turn back.
 *
 * Usage: open_race SLEEPERS PAIRS SLEEP_US. Prints "ready" once every
 * thread runs; runs until killed.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct pair {
	_Atomic int turn; /* 0 or 1: whose turn it is */
};

struct futex_arg {
	struct pair *pair;
	int me;
};

static struct timespec nap;
static _Atomic int started;

static __attribute__((noinline)) void sleep_loop(void)
{
	for (;;)
		nanosleep(&nap, NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "race-sleep");
	atomic_fetch_add(&started, 1);
	sleep_loop();
	return NULL;
}

static __attribute__((noinline)) void futex_loop(struct pair *p, int me)
{
	for (;;) {
		int turn;

		while ((turn = atomic_load(&p->turn)) != me)
			syscall(SYS_futex, &p->turn, FUTEX_WAIT_PRIVATE, turn, NULL, NULL, 0);
		nanosleep(&nap, NULL);
		atomic_store(&p->turn, !me);
		syscall(SYS_futex, &p->turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *futex_thread(void *arg)
{
	struct futex_arg *a = arg;

	prctl(PR_SET_NAME, "race-futex");
	atomic_fetch_add(&started, 1);
	futex_loop(a->pair, a->me);
	return NULL;
}

int main(int argc, char **argv)
{
	int sleepers, pairs, i;
	pthread_t tid;

	if (argc != 4) {
		fprintf(stderr, "usage: open_race SLEEPERS PAIRS SLEEP_US\n");
		return 2;
	}
	sleepers = atoi(argv[1]);
	pairs = atoi(argv[2]);
	nap.tv_nsec = atol(argv[3]) * 1000;
	for (i = 0; i < sleepers; i++)
		if (pthread_create(&tid, NULL, sleeper, NULL))
			return 1;
	for (i = 0; i < 2 * pairs; i++) {
		struct futex_arg *a = malloc(sizeof(*a));
		static struct pair *p;

		if (!a)
			return 1;
		if (i % 2 == 0 && !(p = calloc(1, sizeof(*p))))
			return 1;
		a->pair = p;
		a->me = i % 2;
		if (pthread_create(&tid, NULL, futex_thread, a))
			return 1;
	}
	while (atomic_load(&started) < sleepers + 2 * pairs)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
