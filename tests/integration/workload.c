// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with known waits, for the integration tests. Every thread
 * blocks only inside the calls it times itself with CLOCK_MONOTONIC, so its
 * measured total is what offcpu must report for it.
 *
 *   workload truth FILE        the threads below; writes "name tid count total_ns"
 *   workload sleep NAME N MS   sets its comm to NAME, sleeps N x MS ms
 *   workload classes DIR       one thread per kind of wait, each named for the
 *                              class it should get (tests/unit/fixtures)
 *   workload jit N UID         sleeps N x 20 ms under JIT code named in a perf
 *                              map owned by UID (-1: its own)
 *   workload threads NAME N ROUNDS MS
 *                              N threads, each sleeping ROUNDS x MS ms
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
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
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
	uint64_t calls[ROUNDS][2]; /* CLOCK_MONOTONIC start and end of each call */
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

/*
 * Returns once thread tid of process pid is blocked in system call nr. A
 * peer that only slept before waking it could not tell: a thread kept off
 * the CPUs for longer than that sleep (a loaded machine) finds its lock
 * free or its byte there and never blocks, while the tests count on every
 * timed call blocking once. A running thread's file reads "running".
 */
static void wait_until_blocked(pid_t pid, pid_t tid, long nr)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (;;) {
		int fd = open(path, O_RDONLY);
		ssize_t n;

		if (fd < 0)
			abort();
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			abort();
		buf[n] = 0;
		if (buf[0] >= '0' && buf[0] <= '9' && strtol(buf, NULL, 10) == nr)
			return;
		sched_yield();
	}
}

/* The tid of a truth thread, once it has started. */
static pid_t truth_tid(struct truth *t)
{
	pid_t tid;

	while (!(tid = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE)))
		sched_yield();
	return tid;
}

static void start_truth(struct truth *t, const char *comm)
{
	prctl(PR_SET_NAME, comm);
	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

static void record(struct truth *t, uint64_t start)
{
	uint64_t end = now_ns();

	t->total_ns += end - start;
	if (t->count < ROUNDS) {
		t->calls[t->count][0] = start;
		t->calls[t->count][1] = end;
	}
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
		wait_until_blocked(getpid(), truth_tid(&truths[MUTEX_WAITER]), SYS_futex);
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
		wait_until_blocked(getpid(), truth_tid(&truths[PIPE_READER]), SYS_read);
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
			wait_until_blocked(getppid(), truths[CHILD_WAITER].tid, SYS_wait4);
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
		wait_until_blocked(getpid(), tid, SYS_read);
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

/*
 * "classes": each thread blocks once or twice in one kind of wait, about
 * WAIT_MS, and is named for the class offcpu should give it (a comm is 15
 * bytes: short names). The threads that need a peer get it from a helper.
 */
static const char *classes_dir;

/* Helpers do their own waiting under another name than the thread they serve. */
static void *peer_after(void *arg)
{
	int fd = *(int *)arg;

	prctl(PR_SET_NAME, "helper");
	sleep_ms(WAIT_MS);
	if (write(fd, "x", 1) != 1)
		abort();
	return NULL;
}

static void wake_later(pthread_t *t, int *fd)
{
	if (pthread_create(t, NULL, peer_after, fd))
		abort();
}

static void *cls_sleep(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "c_sleep");
	sleep_ms(WAIT_MS);
	return NULL;
}

static void *cls_pipe(void *arg)
{
	int fds[2];
	pthread_t t;
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "c_pipe");
	if (pipe(fds))
		abort();
	wake_later(&t, &fds[1]);
	if (read(fds[0], &c, 1) != 1)
		abort();
	pthread_join(t, NULL);
	return NULL;
}

static void *cls_unix(void *arg)
{
	int fds[2];
	pthread_t t;
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "c_net:unix");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		abort();
	wake_later(&t, &fds[1]);
	if (recv(fds[0], &c, 1, 0) != 1)
		abort();
	pthread_join(t, NULL);
	return NULL;
}

static int tcp_listener(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)addr, &len))
		abort();
	return fd;
}

static struct sockaddr_in accept_addr;

static void *connect_after(void *arg)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)arg;
	prctl(PR_SET_NAME, "helper");
	sleep_ms(WAIT_MS);
	if (fd < 0 || connect(fd, (struct sockaddr *)&accept_addr, sizeof(accept_addr)))
		abort();
	close(fd);
	return NULL;
}

static void *cls_accept(void *arg)
{
	int fd = tcp_listener(&accept_addr), conn;
	pthread_t t;

	(void)arg;
	prctl(PR_SET_NAME, "c_net:accept");
	if (pthread_create(&t, NULL, connect_after, NULL))
		abort();
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		abort();
	pthread_join(t, NULL);
	close(conn);
	close(fd);
	return NULL;
}

static void *cls_tcp_recv(void *arg)
{
	struct sockaddr_in addr;
	int listener = tcp_listener(&addr), client = socket(AF_INET, SOCK_STREAM, 0), server;
	pthread_t t;
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "c_net:recv");
	if (client < 0 || connect(client, (struct sockaddr *)&addr, sizeof(addr)))
		abort();
	server = accept(listener, NULL, NULL);
	if (server < 0)
		abort();
	wake_later(&t, &server);
	if (recv(client, &c, 1, 0) != 1)
		abort();
	pthread_join(t, NULL);
	close(client);
	close(server);
	close(listener);
	return NULL;
}

static void *cls_epoll(void *arg)
{
	struct epoll_event ev;
	int ep = epoll_create1(0);

	(void)arg;
	prctl(PR_SET_NAME, "c_poll:epoll");
	if (ep < 0 || epoll_wait(ep, &ev, 1, WAIT_MS) != 0)
		abort();
	close(ep);
	return NULL;
}

static void *cls_select(void *arg)
{
	struct timeval tv = { 0, WAIT_MS * 1000 };

	(void)arg;
	prctl(PR_SET_NAME, "c_poll:select");
	if (select(0, NULL, NULL, NULL, &tv) != 0)
		abort();
	return NULL;
}

static void *cls_poll(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "c_poll");
	if (poll(NULL, 0, WAIT_MS) != 0)
		abort();
	return NULL;
}

static void *cls_child(void *arg)
{
	pid_t child;

	(void)arg;
	prctl(PR_SET_NAME, "c_child");
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "helper");
		sleep_ms(WAIT_MS);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		abort();
	return NULL;
}

/* The parent of a vfork waits, uninterruptible, until its child exits. */
static void *cls_vfork(void *arg)
{
	pid_t child;

	(void)arg;
	prctl(PR_SET_NAME, "c_child:vfork");
	child = vfork();
	if (child == 0) {
		/* Sharing the parent's memory: a system call and _exit only. */
		struct timespec ts = { 0, WAIT_MS * 1000000L };

		prctl(PR_SET_NAME, "helper");
		nanosleep(&ts, NULL);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		abort();
	return NULL;
}

static void *cls_signal(void *arg)
{
	struct timespec ts = { 0, WAIT_MS * 1000000L };
	sigset_t set;

	(void)arg;
	prctl(PR_SET_NAME, "c_signal");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (sigtimedwait(&set, NULL, &ts) != -1)
		abort();
	return NULL;
}

static pthread_mutex_t class_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t class_cond = PTHREAD_COND_INITIALIZER;

static void *hold_mutex(void *arg)
{
	atomic_int *held = arg;

	prctl(PR_SET_NAME, "helper");
	pthread_mutex_lock(&class_mutex);
	atomic_store(held, 1);
	sleep_ms(WAIT_MS);
	pthread_mutex_unlock(&class_mutex);
	return NULL;
}

static void *cls_mutex(void *arg)
{
	atomic_int held = 0;
	pthread_t t;

	(void)arg;
	prctl(PR_SET_NAME, "c_lock:mutex");
	if (pthread_create(&t, NULL, hold_mutex, &held))
		abort();
	while (!atomic_load(&held))
		;
	pthread_mutex_lock(&class_mutex);
	pthread_mutex_unlock(&class_mutex);
	pthread_join(t, NULL);
	return NULL;
}

static void *cls_condvar(void *arg)
{
	struct timespec until;

	(void)arg;
	prctl(PR_SET_NAME, "c_futex_cond");
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&class_mutex);
	pthread_cond_timedwait(&class_cond, &class_mutex, &until);
	pthread_mutex_unlock(&class_mutex);
	return NULL;
}

static char *class_file(const char *name)
{
	char *path;

	if (asprintf(&path, "%s/%s", classes_dir, name) < 0)
		abort();
	return path;
}

static void *hold_flock(void *arg)
{
	atomic_int *held = arg;
	char *path = class_file("flock");
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	prctl(PR_SET_NAME, "helper");
	if (fd < 0 || flock(fd, LOCK_EX))
		abort();
	atomic_store(held, 1);
	sleep_ms(WAIT_MS);
	close(fd);
	free(path);
	return NULL;
}

static void *cls_flock(void *arg)
{
	atomic_int held = 0;
	char *path = class_file("flock");
	pthread_t t;
	int fd;

	(void)arg;
	prctl(PR_SET_NAME, "c_lock:file");
	if (pthread_create(&t, NULL, hold_flock, &held))
		abort();
	while (!atomic_load(&held))
		;
	fd = open(path, O_RDWR);
	if (fd < 0 || flock(fd, LOCK_EX))
		abort();
	close(fd);
	pthread_join(t, NULL);
	free(path);
	return NULL;
}

/* Writes 8 MiB and syncs it: the fsync waits for the disk. */
static void *cls_fsync(void *arg)
{
	char *path = class_file("fsync"), *buf = calloc(1, 1 << 20);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), i;

	(void)arg;
	prctl(PR_SET_NAME, "c_io:fsync");
	if (fd < 0 || !buf)
		abort();
	for (i = 0; i < 8; i++) {
		if (write(fd, buf, 1 << 20) != 1 << 20)
			abort();
	}
	if (fsync(fd))
		abort();
	close(fd);
	free(buf);
	free(path);
	return NULL;
}

/* Touches a file mapping whose pages were dropped from the page cache. */
static void *cls_pagefault(void *arg)
{
	char *path = class_file("fault"), *buf = calloc(1, 1 << 20), *map;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), i;
	volatile char sum = 0;

	(void)arg;
	if (fd < 0 || !buf)
		abort();
	for (i = 0; i < 8; i++) {
		memset(buf, i + 1, 1 << 20);
		if (write(fd, buf, 1 << 20) != 1 << 20)
			abort();
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		abort();
	/* Named only now: the writes and the fsync above are not faults. */
	prctl(PR_SET_NAME, "c_pagefault");
	map = mmap(NULL, 8 << 20, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		abort();
	for (i = 0; i < 8 << 20; i += 4096)
		sum += map[i];
	munmap(map, 8 << 20);
	close(fd);
	free(buf);
	free(path);
	return NULL;
}

static void *hold_fcntl_lock(void *arg)
{
	atomic_int *held = arg;
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *path = class_file("fcntl");
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	prctl(PR_SET_NAME, "helper");
	if (fd < 0 || fcntl(fd, F_SETLKW, &lock))
		abort();
	atomic_store(held, 1);
	sleep_ms(WAIT_MS);
	close(fd);
	free(path);
	return NULL;
}

/* POSIX record locks belong to the process: the holder must be another one. */
static void *cls_fcntl(void *arg)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	atomic_int *held =
	    mmap(NULL, sizeof(*held), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *path = class_file("fcntl");
	pid_t child;
	int fd;

	(void)arg;
	prctl(PR_SET_NAME, "c_lock:file");
	if (held == MAP_FAILED)
		abort();
	*held = 0;
	child = fork();
	if (child == 0) {
		hold_fcntl_lock(held);
		_exit(0);
	}
	while (!atomic_load(held))
		;
	fd = open(path, O_RDWR);
	if (fd < 0 || fcntl(fd, F_SETLKW, &lock))
		abort();
	close(fd);
	waitpid(child, NULL, 0);
	munmap(held, sizeof(*held));
	free(path);
	return NULL;
}

static void *drain_after(void *arg)
{
	int fd = *(int *)arg;
	char buf[65536];

	prctl(PR_SET_NAME, "helper");
	sleep_ms(WAIT_MS);
	/* Until the sender, done, closes its end. */
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	return NULL;
}

/* Fills a unix socket until the sender waits for buffer space. */
static void *cls_send(void *arg)
{
	int fds[2], size = 4096;
	char buf[8192] = { 0 };
	pthread_t t;

	(void)arg;
	prctl(PR_SET_NAME, "c_net:send");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) ||
	    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)))
		abort();
	while (send(fds[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	if (pthread_create(&t, NULL, drain_after, &fds[1]))
		abort();
	if (send(fds[0], buf, sizeof(buf), 0) <= 0)
		abort();
	close(fds[0]);
	pthread_join(t, NULL);
	close(fds[1]);
	return NULL;
}

static void on_usr2(int sig)
{
	(void)sig;
}

static void *signal_after(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	prctl(PR_SET_NAME, "helper");
	sleep_ms(WAIT_MS);
	pthread_kill(target, SIGUSR2);
	return NULL;
}

static void *cls_sigsuspend(void *arg)
{
	pthread_t self = pthread_self(), t;
	sigset_t block, wait;

	(void)arg;
	prctl(PR_SET_NAME, "c_signal");
	signal(SIGUSR2, on_usr2);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, &wait);
	sigdelset(&wait, SIGUSR2);
	if (pthread_create(&t, NULL, signal_after, &self))
		abort();
	sigsuspend(&wait);
	pthread_join(t, NULL);
	return NULL;
}

/* A child stopped by SIGSTOP waits in the stopped state until SIGCONT. */
static void *cls_stopped(void *arg)
{
	pid_t child;

	(void)arg;
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "c_signal");
		raise(SIGSTOP);
		_exit(0);
	}
	if (child < 0 || waitpid(child, NULL, WUNTRACED) != child)
		abort();
	sleep_ms(WAIT_MS);
	kill(child, SIGCONT);
	waitpid(child, NULL, 0);
	return NULL;
}

/* Reads a file whose pages were dropped from the page cache. */
static void *cls_cold_read(void *arg)
{
	char *path = class_file("cold"), *buf = calloc(1, 1 << 20);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), i;

	(void)arg;
	if (fd < 0 || !buf)
		abort();
	for (i = 0; i < 8; i++) {
		if (write(fd, buf, 1 << 20) != 1 << 20)
			abort();
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) || lseek(fd, 0, SEEK_SET))
		abort();
	prctl(PR_SET_NAME, "c_io:read");
	for (i = 0; i < 8; i++) {
		if (read(fd, buf, 1 << 20) != 1 << 20)
			abort();
	}
	close(fd);
	free(buf);
	free(path);
	return NULL;
}

typedef void *(*thread_fn)(void *);

static const thread_fn class_threads[] = {
	cls_sleep, cls_pipe,	cls_unix,	cls_accept,  cls_tcp_recv,
	cls_epoll, cls_select,	cls_poll,	cls_child,   cls_signal,
	cls_mutex, cls_condvar, cls_flock,	cls_fsync,   cls_pagefault,
	cls_fcntl, cls_send,	cls_sigsuspend, cls_stopped, cls_cold_read,
	cls_vfork,
};

static int run_classes(const char *dir)
{
	size_t i;

	classes_dir = dir;
	/* One at a time: each thread's waits are its own kind only. */
	for (i = 0; i < sizeof(class_threads) / sizeof(class_threads[0]); i++) {
		pthread_t id;

		if (pthread_create(&id, NULL, class_threads[i], NULL))
			return 1;
		pthread_join(id, NULL);
	}
	return 0;
}

/*
 * "jit": a stand-in for JIT code. A trampoline written into executable
 * anonymous memory (x86-64: push rbp; mov rbp,rsp; call rax; pop rbp; ret,
 * so frame pointers walk through it) calls jit_callee, which sleeps. The
 * trampoline is named in /tmp/perf-PID.map, owned by uid.
 */
__attribute__((noinline)) static void jit_callee(void)
{
	sleep_ms(WAIT_MS);
}

static int run_jit(int rounds, long owner)
{
	static const unsigned char prologue[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	static const unsigned char epilogue[] = { 0xff, 0xd0, 0x5d, 0xc3 };
	void (*callee)(void) = jit_callee;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *map;
	int i;

	prctl(PR_SET_NAME, "wl_jit");
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, prologue, sizeof(prologue));
	memcpy(code + sizeof(prologue), &callee, sizeof(callee));
	memcpy(code + sizeof(prologue) + sizeof(callee), epilogue, sizeof(epilogue));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_trampoline\n", (unsigned long)code,
		sizeof(prologue) + sizeof(callee) + sizeof(epilogue));
	fclose(map);
	if (owner >= 0 && chown(path, (uid_t)owner, (gid_t)owner))
		return 1;
	for (i = 0; i < rounds; i++)
		((void (*)(void))code)();
	unlink(path);
	return 0;
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
	/* "name tid count total_ns", then "call tid start_ns end_ns" per call. */
	for (i = 0; i < NR_THREADS; i++)
		fprintf(out, "%s %d %d %llu\n", truths[i].name, truths[i].tid, truths[i].count,
			(unsigned long long)truths[i].total_ns);
	for (i = 0; i < NR_THREADS; i++) {
		int c;

		for (c = 0; c < truths[i].count && c < ROUNDS; c++)
			fprintf(out, "call %d %llu %llu\n", truths[i].tid,
				(unsigned long long)truths[i].calls[c][0],
				(unsigned long long)truths[i].calls[c][1]);
	}
	return fclose(out) ? 1 : 0;
}

/* `threads NAME N ROUNDS MS`: N threads, each sleeping ROUNDS x MS ms. */
struct sleeper_args {
	int rounds;
	int ms;
};

static void *thread_sleeper(void *arg)
{
	const struct sleeper_args *a = arg;
	int i;

	for (i = 0; i < a->rounds; i++)
		sleep_ms(a->ms);
	return NULL;
}

static int run_threads(const char *name, int n, int rounds, int ms)
{
	struct sleeper_args args = { rounds, ms };
	pthread_t *ids = calloc((size_t)n, sizeof(*ids));
	pthread_attr_t attr;
	int i, started = 0;

	prctl(PR_SET_NAME, name);
	if (!ids || pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 64 << 10))
		return 1;
	for (i = 0; i < n; i++)
		started += !pthread_create(&ids[i], &attr, thread_sleeper, &args);
	for (i = 0; i < started; i++)
		pthread_join(ids[i], NULL);
	free(ids);
	return started == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "threads"))
		return run_threads(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "truth"))
		return run_truth(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "jit"))
		return run_jit(atoi(argv[2]), atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "classes"))
		return run_classes(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "sleep")) {
		int n = atoi(argv[3]), ms = atoi(argv[4]), i;

		prctl(PR_SET_NAME, argv[2]);
		for (i = 0; i < n; i++)
			sleep_ms(ms);
		return 0;
	}
	fprintf(stderr, "usage: workload truth FILE | workload sleep NAME N MS | "
			"workload threads NAME N ROUNDS MS | "
			"workload classes DIR | workload jit N OWNER_UID\n");
	return 2;
}
