// SPDX-License-Identifier: GPL-2.0
/*
 * A waker built as distributions build, -O2 without frame pointers, for
 * tests/integration/test_wakers.py: "feeder" works MS, then writes twice
 * a pipe's capacity from a known chain of calls (feeder, feed_a, feed_b,
 * feed_c, write), so one write wakes "drainer", blocked reading the pipe,
 * and then blocks itself on the full pipe until drainer has read it: the
 * waker's stack at the wakeup is the stack of its own wait. ROUNDS times.
 * Prints "tid NAME TID" for both threads once they are done.
 *
 *   waker_nofp ROUNDS MS          as above, then exits
 *   waker_nofp ROUNDS MS hang     waits for a line on stdin first; once
 *                                 drainer has read ROUNDS rounds, prints
 *                                 the tids and "done", and feeder, from
 *                                 the same calls, blocks writing the full
 *                                 pipe for good, for gdb to see
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIPE_BYTES (64 * 1024)

static int rounds, work_ms, hang;
static int pipe_fds[2];
static char buf[2 * PIPE_BYTES];
static unsigned long long feeder_tid, drainer_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Each caller does something after its call, so no call becomes a jump. */
__attribute__((noipa)) static int feed_c(int x)
{
	size_t done = 0;
	ssize_t n;

	while (done < sizeof(buf)) {
		n = write(pipe_fds[1], buf + done, sizeof(buf) - done);
		if (n <= 0)
			exit(1);
		done += (size_t)n;
	}
	return x + (int)(done & 1);
}

__attribute__((noipa)) static int feed_b(int x)
{
	return feed_c(x) + 1;
}

__attribute__((noipa)) static int feed_a(int x)
{
	return feed_b(x) + 1;
}

static void *feeder(void *arg)
{
	int i, sum = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "feeder");
	feeder_tid = (unsigned long long)gettid();
	for (i = 0; i < rounds + hang; i++) {
		/* Busy, not asleep: the drainer's wakeup is then the write's alone. */
		uint64_t until = now_ns() + (uint64_t)work_ms * 1000000ULL;

		while (now_ns() < until)
			;
		sum += feed_a(i);
	}
	return (void *)(intptr_t)sum;
}

static void *drainer(void *arg)
{
	static char in[PIPE_BYTES];
	size_t total = 0, want = (size_t)rounds * sizeof(buf);
	ssize_t n;

	(void)arg;
	pthread_setname_np(pthread_self(), "drainer");
	drainer_tid = (unsigned long long)gettid();
	while (total < want) {
		n = read(pipe_fds[0], in, sizeof(in));
		if (n <= 0)
			exit(1);
		total += (size_t)n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t f, d;

	char line[16];

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "hang"))) {
		fprintf(stderr, "usage: waker_nofp ROUNDS MS [hang]\n");
		return 2;
	}
	rounds = atoi(argv[1]);
	work_ms = atoi(argv[2]);
	hang = argc == 4;
	if (hang && !fgets(line, sizeof(line), stdin))
		return 1;
	memset(buf, 'x', sizeof(buf));
	if (pipe(pipe_fds) || fcntl(pipe_fds[1], F_SETPIPE_SZ, PIPE_BYTES) != PIPE_BYTES) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&d, NULL, drainer, NULL) || pthread_create(&f, NULL, feeder, NULL))
		return 1;
	if (hang) {
		/* The pipe stays open: the feeder's last write blocks, it does not fail. */
		pthread_join(d, NULL);
		printf("tid feeder %llu\ntid drainer %llu\ndone\n", feeder_tid, drainer_tid);
		fflush(stdout);
		pthread_join(f, NULL);
		return 1;
	}
	pthread_join(f, NULL);
	pthread_join(d, NULL);
	printf("tid feeder %llu\ntid drainer %llu\n", feeder_tid, drainer_tid);
	return 0;
}
