// SPDX-License-Identifier: GPL-2.0
/*
 * Threads whose CPU time is known, for test_oncpu.py: one computes in
 * compute_burst() about 60% of the time and sleeps the rest; two more,
 * pinned to one CPU, both compute in spin_pinned() all the time, so each
 * gets about half of it and waits in the run queue for the rest. Each
 * prints, as it ends, one line: "thread TID FUNCTION CPU_NS WALL_NS", its
 * CLOCK_THREAD_CPUTIME_ID and its CLOCK_MONOTONIC life from its first
 * instruction to its last.
 *
 * Usage: oncpu_workload SECONDS CPU
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double seconds;
static int pinned_cpu;
static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spins until the monotonic clock passes end_ns: all of it on CPU, in this function. */
__attribute__((noinline)) static void compute_burst(uint64_t end_ns)
{
	uint64_t x = sink;

	while (clock_ns(CLOCK_MONOTONIC) < end_ns) {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	sink = x;
}

__attribute__((noinline)) static void spin_pinned(uint64_t end_ns)
{
	uint64_t x = sink;

	while (clock_ns(CLOCK_MONOTONIC) < end_ns) {
		for (int i = 0; i < 2000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
	}
	sink = x;
}

static void report(const char *function, uint64_t start_ns)
{
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC) - start_ns;

	printf("thread %ld %s %llu %llu\n", (long)syscall(SYS_gettid), function,
	       (unsigned long long)cpu, (unsigned long long)wall);
	fflush(stdout);
}

static void *mixed(void *arg)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	uint64_t end = start + (uint64_t)(seconds * 1e9), now;
	struct timespec rest = { 0, 4000000 };

	(void)arg;
	while ((now = clock_ns(CLOCK_MONOTONIC)) < end) {
		compute_burst(now + 6000000);
		nanosleep(&rest, NULL);
	}
	report("compute_burst", start);
	return NULL;
}

static void *pinned(void *arg)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	cpu_set_t set;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(pinned_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	spin_pinned(start + (uint64_t)(seconds * 1e9));
	report("spin_pinned", start);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[3];
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SECONDS CPU\n", argv[0]);
		return 2;
	}
	seconds = atof(argv[1]);
	pinned_cpu = atoi(argv[2]);
	pthread_create(&threads[0], NULL, mixed, NULL);
	pthread_create(&threads[1], NULL, pinned, NULL);
	pthread_create(&threads[2], NULL, pinned, NULL);
	for (i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
