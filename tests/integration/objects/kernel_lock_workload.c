// SPDX-License-Identifier: GPL-2.0
// Threads that wait on kernel locks held by a thread of known name, for the
// kernel-lock tests of tests/integration/test_objects.py. Prints "TID NAME"
// for each thread, then "ready", and runs for argv[1] seconds.
//
// - i_rwsem: h_inode writes to a memfd (a tmpfs inode, in
//   shmem_inode_cache) from a page userfaultfd keeps missing, so it sleeps
//   HOLD_MS in the copy holding the inode's i_rwsem for writing, while
//   w_inode1 and w_inode2 write to the same file: rwsem_down_write_slowpath,
//   the lock owned by h_inode, not on a CPU (no optimistic spinning).
// - mmap_lock: h_mmap maps and populates 64 MiB and unmaps it, again;
//   w_mmap maps and unmaps a page meanwhile, waiting for the mm's lock.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOLD_MS 20
#define PAGE 4096
#define POPULATE_BYTES (64 << 20)

static volatile int stop;
/* Apart: a writer stopped in its fault needs the server until it is joined. */
static volatile int stop_server;
static int file_fd, uffd;
static char *missing_page;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&print_lock);
	printf("%ld %s\n", (long)syscall(SYS_gettid), name);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

/* Answers each fault on missing_page HOLD_MS late: its writer sleeps that long. */
static void *fault_server(void *arg)
{
	static char zero[PAGE];
	struct uffd_msg msg;
	struct pollfd p = { .fd = uffd, .events = POLLIN };

	name_self((const char *)arg);
	while (!stop_server) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		sleep_ms(HOLD_MS);
		struct uffdio_copy copy = {
			.dst = (unsigned long)missing_page,
			.src = (unsigned long)zero,
			.len = PAGE,
		};
		if (ioctl(uffd, UFFDIO_COPY, &copy) && errno != EEXIST)
			die("UFFDIO_COPY");
	}
	return NULL;
}

/* Holds the inode's lock HOLD_MS at a time, asleep in its copy from missing_page. */
static void *inode_holder(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		if (madvise(missing_page, PAGE, MADV_DONTNEED))
			die("madvise");
		if (pwrite(file_fd, missing_page, PAGE, 0) != PAGE)
			die("pwrite");
		sleep_ms(1);
	}
	return NULL;
}

static void *inode_writer(void *arg)
{
	char buf[PAGE];

	memset(buf, 'w', sizeof(buf));
	name_self((const char *)arg);
	while (!stop) {
		if (pwrite(file_fd, buf, sizeof(buf), PAGE) != sizeof(buf))
			die("pwrite");
		sleep_ms(1);
	}
	return NULL;
}

static void *mmap_holder(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		void *p = mmap(NULL, POPULATE_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, POPULATE_BYTES);
	}
	return NULL;
}

static void *mmap_waiter(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		void *p =
		    mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, PAGE);
		sleep_ms(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		void *(*fn)(void *);
		const char *name;
	} threads[] = {
		{ fault_server, "uffd" },     { inode_holder, "h_inode" },
		{ inode_writer, "w_inode1" }, { inode_writer, "w_inode2" },
		{ mmap_holder, "h_mmap" },    { mmap_waiter, "w_mmap" },
	};
	pthread_t tids[sizeof(threads) / sizeof(threads[0])];
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	size_t i;

	file_fd = memfd_create("kernel_lock_workload", 0);
	if (file_fd < 0 || ftruncate(file_fd, 2 * PAGE))
		die("memfd_create");
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd");
	struct uffdio_api api = { .api = UFFD_API };
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	missing_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (missing_page == MAP_FAILED)
		die("mmap");
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)missing_page, .len = PAGE },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	name_self("main");
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
		if (pthread_create(&tids[i], NULL, threads[i].fn, (void *)threads[i].name))
			die("pthread_create");
	sleep_ms(50);
	printf("ready\n");
	fflush(stdout);
	sleep_ms((long)(seconds * 1000));
	stop = 1;
	/* The fault server (threads[0]) last. */
	for (i = 1; i < sizeof(threads) / sizeof(threads[0]); i++)
		pthread_join(tids[i], NULL);
	stop_server = 1;
	pthread_join(tids[0], NULL);
	return 0;
}
