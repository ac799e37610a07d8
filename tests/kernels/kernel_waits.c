// SPDX-License-Identifier: GPL-2.0
/*
 * Waits the kernel matrix needs beyond tests/integration/workload.c, built
 * static to run alone in the guest's initramfs.
 *
 *   kernel_waits vfork N MS       vforks N times; each child sleeps MS ms
 *                                 then exits: the parent waits
 *                                 uninterruptible (TASK_KILLABLE) in vfork
 *   kernel_waits rtlock N S       N threads calling FUTEX_WAIT with a value
 *                                 the futex never holds, for S seconds: each
 *                                 call takes the futex hash bucket's
 *                                 spinlock and returns EAGAIN, so the
 *                                 threads only ever wait for that lock,
 *                                 which sleeps on PREEMPT_RT
 *   kernel_waits pingpong N       two processes pass a byte back and forth
 *                                 over two pipes N times: two context
 *                                 switches a round, as perf bench sched pipe
 *   kernel_waits spin MS          computes in spin_until() for MS ms of
 *                                 its own CPU time: what -F samples on CPU
 *   kernel_waits ttywrite DEV N   writes N bytes to the serial port DEV,
 *                                 raw: past the 4 KiB the port buffers, the
 *                                 writer waits for its transmit interrupt,
 *                                 whose handler wakes it (in the handler's
 *                                 own thread on PREEMPT_RT)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Its own function: nothing of the caller's frame lives across vfork(). */
__attribute__((noinline)) static int vfork_once(int ms)
{
	pid_t child = vfork();

	if (child == 0) {
		usleep((useconds_t)ms * 1000);
		_exit(0);
	}
	return child > 0 && waitpid(child, NULL, 0) == child ? 0 : 1;
}

static int run_vfork(int n, int ms)
{
	int i;

	prctl(PR_SET_NAME, "kw_vfork");
	for (i = 0; i < n; i++) {
		if (vfork_once(ms))
			return 1;
	}
	return 0;
}

static int futex_word;
static volatile sig_atomic_t rtlock_stop;

static void on_alarm(int sig)
{
	(void)sig;
	rtlock_stop = 1;
}

static void *hammer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "kw_rtlock");
	while (!rtlock_stop)
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static int run_rtlock(int n, int seconds)
{
	pthread_t *ids = calloc((size_t)n, sizeof(*ids));
	int i, started = 0;

	if (!ids)
		return 1;
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)seconds);
	for (i = 0; i < n; i++)
		started += !pthread_create(&ids[i], NULL, hammer, NULL);
	for (i = 0; i < started; i++)
		pthread_join(ids[i], NULL);
	free(ids);
	return started == n ? 0 : 1;
}

static int run_pingpong(int n)
{
	int there[2], back[2], i, status;
	pid_t child;
	char c = 0;

	if (pipe(there) || pipe(back))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	prctl(PR_SET_NAME, "kw_pingpong");
	for (i = 0; i < n; i++) {
		if (child == 0 ? read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1
			       : write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			_exit(1);
	}
	if (child == 0)
		_exit(0);
	return waitpid(child, &status, 0) == child && WIFEXITED(status) && !WEXITSTATUS(status) ? 0
												  : 1;
}

static int run_ttywrite(const char *dev, long n)
{
	static char chunk[4096];
	struct termios raw;
	ssize_t done;
	int fd;

	prctl(PR_SET_NAME, "kw_tty");
	fd = open(dev, O_WRONLY | O_NOCTTY);
	if (fd < 0 || tcgetattr(fd, &raw))
		return 1;
	cfmakeraw(&raw);
	cfsetospeed(&raw, B115200);
	if (tcsetattr(fd, TCSANOW, &raw))
		return 1;
	memset(chunk, 'x', sizeof(chunk));
	while (n > 0) {
		done = write(fd, chunk, n < (long)sizeof(chunk) ? (size_t)n : sizeof(chunk));
		if (done <= 0)
			return 1;
		n -= done;
	}
	/* Until the port sent the last byte: its waits are all inside the run. */
	return tcdrain(fd) || close(fd) ? 1 : 0;
}

static long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Its own function, so that the samples have a name to find. */
__attribute__((noinline)) static void spin_until(long ms)
{
	volatile unsigned long n = 0;
	int i;

	/* Mostly in user space: the clock is a system call, read now and then. */
	while (cpu_ms() < ms) {
		for (i = 0; i < 1000000; i++)
			n++;
	}
}

static int run_spin(long ms)
{
	prctl(PR_SET_NAME, "kw_spin");
	spin_until(ms);
	printf("spin %ld\n", cpu_ms());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "vfork"))
		return run_vfork(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "rtlock"))
		return run_rtlock(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "pingpong"))
		return run_pingpong(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "ttywrite"))
		return run_ttywrite(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return run_spin(atol(argv[2]));
	fprintf(stderr, "usage: kernel_waits vfork N MS | kernel_waits rtlock N SECONDS | "
			"kernel_waits pingpong N | kernel_waits ttywrite DEV N | kernel_waits spin MS\n");
	return 2;
}
