// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads with known wakers for tests/integration/test_wakers.py. Each
 * prints "tid NAME TID" for its threads, and its own clock's truth as
 * "truth NAME NS" lines, on stdout, once it is done:
 *
 *   condvar ROUNDS DELAY_MS   "waiter" waits on a condition variable that
 *                             "peer" signals DELAY_MS after it saw the
 *                             waiter waiting (truth: the peer's clock, and
 *                             "waiting": since the waiter said it waits)
 *   pinned ROUNDS SLEEP_MS    "sleeper" (nice 19) sleeps SLEEP_MS beside
 *                             CPU hogs "hog" and "hog2", all pinned to CPU 0
 *   contexts ROUNDS MS        "napper" sleeps on a timer; "reader" reads a
 *                             pipe "writer" writes every MS; the main
 *                             thread waits for a child that exits after MS
 *   chain ROUNDS WORK_MS      "chain-c" works WORK_MS and posts to
 *                             "chain-b", which posts to "chain-a"
 *   convoy ROUNDS             "convoy-x" and "convoy-y" wake each other
 *   loopback ROUNDS MS        "server" works MS, then sends a byte over a
 *                             loopback TCP connection that "client" reads
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rounds;
static int delay_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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

/*
 * Kept, and printed by main once the threads are done: a thread printing
 * while the others run would wait for stdio's lock or the pipe's, and be
 * woken by whoever held it, an edge of the wait-for graph of its own.
 */
#define MAX_LINES 4096

static char lines[MAX_LINES][64];
static int nr_lines;

static void keep_line(const char *fmt, const char *name, unsigned long long value)
{
	int i = __atomic_fetch_add(&nr_lines, 1, __ATOMIC_RELAXED);

	if (i < MAX_LINES)
		snprintf(lines[i], sizeof(lines[i]), fmt, name, value);
}

static void print_lines(void)
{
	int i;

	for (i = 0; i < nr_lines && i < MAX_LINES; i++)
		puts(lines[i]);
}

static void name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	keep_line("tid %s %llu", name, (unsigned long long)gettid());
}

static void truth(const char *name, uint64_t ns)
{
	keep_line("truth %s %llu", name, (unsigned long long)ns);
}

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

/* condvar */
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int waiting, signalled;
/* The waiter's clock as it said it waits: the peer sees that up to a poll later. */
static uint64_t waiting_since;

static void *waiter(void *arg)
{
	int i;

	(void)arg;
	name_self("waiter");
	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		waiting = 1;
		waiting_since = now_ns();
		while (!signalled)
			pthread_cond_wait(&cond, &lock);
		signalled = 0;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *peer(void *arg)
{
	uint64_t start;
	int i;

	(void)arg;
	name_self("peer");
	for (i = 0; i < rounds; i++) {
		/* The waiter holds the lock until pthread_cond_wait releases it. */
		for (;;) {
			pthread_mutex_lock(&lock);
			if (waiting)
				break;
			pthread_mutex_unlock(&lock);
			usleep(200);
		}
		waiting = 0;
		start = now_ns();
		pthread_mutex_unlock(&lock);
		sleep_ms(delay_ms);
		pthread_mutex_lock(&lock);
		signalled = 1;
		truth("peer", now_ns() - start);
		truth("waiting", now_ns() - waiting_since);
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* pinned */
static volatile int stop_hog;

static void *sleeper(void *arg)
{
	int i;

	(void)arg;
	pin_to_cpu0();
	/*
	 * Niced, its wakeups do not preempt the hog (EEVDF gives it a late
	 * deadline): it waits for the hog's slice, every time, not only when
	 * its lag happens to say so.
	 */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	name_self("sleeper");
	for (i = 0; i < rounds; i++)
		sleep_ms(delay_ms);
	stop_hog = 1;
	return NULL;
}

static void *hog(void *arg)
{
	(void)arg;
	pin_to_cpu0();
	name_self(arg ? "hog2" : "hog");
	while (!stop_hog)
		;
	return NULL;
}

/* contexts */
static int pipe_fds[2];

static void *napper(void *arg)
{
	int i;

	(void)arg;
	name_self("napper");
	for (i = 0; i < rounds; i++)
		sleep_ms(delay_ms);
	return NULL;
}

static void *reader(void *arg)
{
	char c;
	int i;

	(void)arg;
	name_self("reader");
	for (i = 0; i < rounds; i++) {
		if (read(pipe_fds[0], &c, 1) != 1)
			exit(1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	int i;

	(void)arg;
	name_self("writer");
	for (i = 0; i < rounds; i++) {
		/* Busy, not asleep: the reader's wakeup is then the write's alone. */
		uint64_t until = now_ns() + (uint64_t)delay_ms * 1000000ULL;

		while (now_ns() < until)
			;
		if (write(pipe_fds[1], "x", 1) != 1)
			exit(1);
	}
	return NULL;
}

static void wait_children(void)
{
	int i;

	for (i = 0; i < rounds; i++) {
		pid_t child = fork();

		if (child == 0) {
			uint64_t until = now_ns() + (uint64_t)delay_ms * 1000000ULL;

			while (now_ns() < until)
				;
			_exit(0);
		}
		keep_line("%s %llu", "child", (unsigned long long)child);
		waitpid(child, NULL, 0);
	}
}

/* loopback: the listening socket, bound before the threads start */
static int listen_fd;

static void *server(void *arg)
{
	int fd, i;

	(void)arg;
	name_self("server");
	fd = accept(listen_fd, NULL, NULL);
	if (fd < 0)
		exit(1);
	for (i = 0; i < rounds; i++) {
		/* Busy, not asleep: the client's wakeup is then the send's alone. */
		uint64_t until = now_ns() + (uint64_t)delay_ms * 1000000ULL;

		while (now_ns() < until)
			;
		if (send(fd, "x", 1, 0) != 1)
			exit(1);
	}
	close(fd);
	return NULL;
}

static void *client(void *arg)
{
	struct sockaddr_in addr;
	socklen_t len = sizeof(addr);
	int fd, i;
	char c;

	(void)arg;
	name_self("client");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || getsockname(listen_fd, (struct sockaddr *)&addr, &len) ||
	    connect(fd, (struct sockaddr *)&addr, len))
		exit(1);
	for (i = 0; i < rounds; i++) {
		if (recv(fd, &c, 1, MSG_WAITALL) != 1)
			exit(1);
	}
	close(fd);
	return NULL;
}

static int listen_loopback(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(listen_fd, 1))
		return -1;
	return 0;
}

/* chain and convoy: semaphores, whose post never blocks the poster */
static sem_t to_a, to_b, to_x, to_y;

static void *chain_c(void *arg)
{
	int i;

	(void)arg;
	name_self("chain-c");
	for (i = 0; i < rounds; i++) {
		uint64_t until = now_ns() + (uint64_t)delay_ms * 1000000ULL;

		while (now_ns() < until)
			;
		sem_post(&to_b);
	}
	return NULL;
}

static void *chain_b(void *arg)
{
	int i;

	(void)arg;
	name_self("chain-b");
	for (i = 0; i < rounds; i++) {
		while (sem_wait(&to_b))
			;
		sem_post(&to_a);
	}
	return NULL;
}

static void *chain_a(void *arg)
{
	int i;

	(void)arg;
	name_self("chain-a");
	for (i = 0; i < rounds; i++) {
		while (sem_wait(&to_a))
			;
	}
	return NULL;
}

static void *convoy_x(void *arg)
{
	int i;

	(void)arg;
	name_self("convoy-x");
	for (i = 0; i < rounds; i++) {
		sem_post(&to_y);
		while (sem_wait(&to_x))
			;
	}
	return NULL;
}

static void *convoy_y(void *arg)
{
	int i;

	(void)arg;
	name_self("convoy-y");
	for (i = 0; i < rounds; i++) {
		while (sem_wait(&to_y))
			;
		sem_post(&to_x);
	}
	return NULL;
}

static int run_threads(void *(**fns)(void *), int n)
{
	pthread_t threads[4];
	int i;

	/* A function given twice gets a non-NULL argument the second time. */
	for (i = 0; i < n; i++) {
		if (pthread_create(&threads[i], NULL, fns[i],
				   i && fns[i] == fns[i - 1] ? (void *)1 : NULL))
			return 1;
	}
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	print_lines();
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 3)
		goto usage;
	rounds = atoi(argv[2]);
	delay_ms = argc > 3 ? atoi(argv[3]) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "condvar") && argc == 4) {
		void *(*fns[])(void *) = { waiter, peer };

		return run_threads(fns, 2);
	}
	if (!strcmp(argv[1], "pinned") && argc == 4) {
		void *(*fns[])(void *) = { hog, hog, sleeper };

		return run_threads(fns, 3);
	}
	if (!strcmp(argv[1], "contexts") && argc == 4) {
		void *(*fns[])(void *) = { napper, reader, writer };

		if (pipe(pipe_fds))
			return 1;
		keep_line("tid %s %llu", "main", (unsigned long long)gettid());
		wait_children();
		return run_threads(fns, 3);
	}
	if (!strcmp(argv[1], "chain") && argc == 4) {
		void *(*fns[])(void *) = { chain_a, chain_b, chain_c };

		sem_init(&to_a, 0, 0);
		sem_init(&to_b, 0, 0);
		return run_threads(fns, 3);
	}
	if (!strcmp(argv[1], "loopback") && argc == 4) {
		void *(*fns[])(void *) = { server, client };

		if (listen_loopback())
			return 1;
		return run_threads(fns, 2);
	}
	if (!strcmp(argv[1], "convoy") && argc == 3) {
		void *(*fns[])(void *) = { convoy_x, convoy_y };

		sem_init(&to_x, 0, 0);
		sem_init(&to_y, 0, 0);
		err = run_threads(fns, 2);
		return err;
	}
usage:
	fprintf(stderr, "usage: wake_workload condvar|pinned|contexts|chain|loopback ROUNDS MS | convoy "
			"ROUNDS\n");
	return 2;
}
