// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that wait on file descriptors, each in a thread of its own name,
 * for the wait-object tests (tests/integration/test_objects.py): a pipe
 * read, a FIFO read (its path in a temporary directory has a space and an
 * ESC), a TCP recv over loopback, a unix socket recv, an eventfd read,
 * epoll_wait over two sockets, poll on one pipe, and flock on a file two
 * threads take turns holding. The feeder wakes each every FEED_MS.
 * At the end, all but the exit's waits end 300 ms before the files go.
 *
 * Prints "TID NAME" for each thread and the truth, "WHAT VALUE" (paths in
 * hex: they hold bytes a line cannot), then "ready", and runs for argv[1]
 * seconds. All fds stay open until the exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define FEED_MS 20

static int pipe_fds[2], poll_pipe[2], fifo_r, fifo_w, tcp_client, tcp_served, unix_client,
    unix_served, event_fd, epoll_fd, pair_a[2], pair_b[2];
static char dir[64], fifo_path[128], unix_path[100], flock_path[128];
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
/* The end: the feeder and the flock pair stop, so only the exit ends a wait after. */
static volatile int stopping;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void named(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&print_lock);
	printf("%ld %s\n", (long)syscall(SYS_gettid), name);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static void print_hex(const char *what, const char *s)
{
	printf("%s ", what);
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
	printf("\n");
}

static unsigned long inode_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat");
	return (unsigned long)st.st_ino;
}

static void *reader(void *arg)
{
	const char *name = arg;
	int fd = !strcmp(name, "w_pipe")   ? pipe_fds[0]
		 : !strcmp(name, "w_fifo") ? fifo_r
		 : !strcmp(name, "w_tcp")  ? tcp_served
		 : !strcmp(name, "w_unix") ? unix_served
					   : event_fd;
	char buf[64];

	named(name);
	for (;;) {
		if (!strcmp(name, "w_tcp") || !strcmp(name, "w_unix")) {
			if (recv(fd, buf, sizeof(buf), 0) < 0)
				die("recv");
		} else if (read(fd, buf, sizeof(buf)) < 0) {
			die("read");
		}
	}
	return NULL;
}

static void *epoller(void *arg)
{
	struct epoll_event ev;
	char buf[64];

	named(arg);
	for (;;) {
		if (epoll_wait(epoll_fd, &ev, 1, -1) == 1 && read(ev.data.fd, buf, sizeof(buf)) < 0)
			die("read");
	}
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd p = { .fd = poll_pipe[0], .events = POLLIN };
	char buf[64];

	named(arg);
	for (;;) {
		if (poll(&p, 1, -1) == 1 && read(poll_pipe[0], buf, sizeof(buf)) < 0)
			die("read");
	}
	return NULL;
}

/* Two threads, each its own open file description, take turns holding the lock. */
static void *flocker(void *arg)
{
	int fd = open(flock_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open");
	named(arg);
	while (!stopping) {
		if (flock(fd, LOCK_EX))
			die("flock");
		sleep_ms(FEED_MS);
		flock(fd, LOCK_UN);
		sleep_ms(1);
	}
	return NULL;
}

static void *feeder(void *arg)
{
	int fds[] = { pipe_fds[1], fifo_w, poll_pipe[1], pair_a[1], pair_b[1] };
	uint64_t one = 1;
	unsigned i;

	named(arg);
	while (!stopping) {
		sleep_ms(FEED_MS);
		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (write(fds[i], "x", 1) != 1)
				die("write");
		if (send(tcp_client, "x", 1, 0) != 1 || send(unix_client, "x", 1, 0) != 1)
			die("send");
		if (write(event_fd, &one, sizeof(one)) != sizeof(one))
			die("write eventfd");
	}
	return NULL;
}

static void make_tcp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in local, peer;
	socklen_t len = sizeof(a);
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(listener, 1) || getsockname(listener, (struct sockaddr *)&a, &len))
		die("tcp listen");
	tcp_client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (tcp_client < 0 || connect(tcp_client, (struct sockaddr *)&a, sizeof(a)))
		die("tcp connect");
	tcp_served = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	len = sizeof(local);
	if (tcp_served < 0 || getsockname(tcp_served, (struct sockaddr *)&local, &len))
		die("tcp accept");
	len = sizeof(peer);
	if (getpeername(tcp_served, (struct sockaddr *)&peer, &len))
		die("getpeername");
	printf("tcp 127.0.0.1:%u 127.0.0.1:%u\n", ntohs(local.sin_port), ntohs(peer.sin_port));
	close(listener);
}

static void make_unix(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", unix_path);
	if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof(a)) || listen(listener, 1))
		die("unix listen");
	unix_client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (unix_client < 0 || connect(unix_client, (struct sockaddr *)&a, sizeof(a)))
		die("unix connect");
	unix_served = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (unix_served < 0)
		die("unix accept");
	printf("unix_inode %lu\n", inode_of(unix_served));
	print_hex("unix_path", unix_path);
}

static void make_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair_a) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair_b))
		die("epoll");
	ev.data.fd = pair_a[0];
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pair_a[0], &ev))
		die("epoll_ctl");
	ev.data.fd = pair_b[0];
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, pair_b[0], &ev))
		die("epoll_ctl");
}

int main(int argc, char **argv)
{
	static char *readers[] = { "w_pipe", "w_fifo", "w_tcp", "w_unix", "w_eventfd" };
	int seconds = argc > 1 ? atoi(argv[1]) : 2, fd;
	pthread_t t;
	unsigned i;

	snprintf(dir, sizeof(dir), "/tmp/fd_workload.XXXXXX");
	if (!mkdtemp(dir))
		die("mkdtemp");
	/* A path a terminal would act on: the outputs must escape it. */
	snprintf(fifo_path, sizeof(fifo_path), "%s/a fifo \x1b[31mred", dir);
	snprintf(unix_path, sizeof(unix_path), "%s/sock \x1b]0;x", dir);
	snprintf(flock_path, sizeof(flock_path), "%s/locked file", dir);
	if (mkfifo(fifo_path, 0600))
		die("mkfifo");
	/* Read-write: the reader's open does not wait for a writer, nor reads an end. */
	fifo_r = open(fifo_path, O_RDWR | O_CLOEXEC);
	fifo_w = open(fifo_path, O_WRONLY | O_CLOEXEC);
	fd = open(flock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fifo_r < 0 || fifo_w < 0 || fd < 0)
		die("open");
	close(fd);
	if (pipe2(pipe_fds, O_CLOEXEC) || pipe2(poll_pipe, O_CLOEXEC))
		die("pipe");
	event_fd = eventfd(0, EFD_CLOEXEC);
	if (event_fd < 0)
		die("eventfd");
	printf("pipe %lu\n", inode_of(pipe_fds[0]));
	printf("poll_pipe %lu\n", inode_of(poll_pipe[0]));
	print_hex("fifo", fifo_path);
	print_hex("flock", flock_path);
	make_tcp();
	make_unix();
	make_epoll();
	fflush(stdout);
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		pthread_create(&t, NULL, reader, readers[i]);
	pthread_create(&t, NULL, epoller, "w_epoll");
	pthread_create(&t, NULL, poller, "w_poll");
	pthread_create(&t, NULL, flocker, "w_flock");
	pthread_create(&t, NULL, flocker, "h_flock");
	pthread_create(&t, NULL, feeder, "feeder");
	sleep_ms(100);
	pthread_mutex_lock(&print_lock);
	printf("%ld main\nready\n", (long)getpid());
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	sleep(seconds);
	/*
	 * offcpu names a wait once it is over, from /proc: the waits that
	 * end now are named while the files are still there.
	 */
	stopping = 1;
	sleep_ms(300);
	unlink(fifo_path);
	unlink(unix_path);
	unlink(flock_path);
	rmdir(dir);
	return 0;
}
