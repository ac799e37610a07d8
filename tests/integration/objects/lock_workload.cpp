// SPDX-License-Identifier: GPL-2.0
// Threads that wait on user-space locks of every kind glibc makes, each
// held by a thread of known name and TID, for the wait-object tests
// (tests/integration/test_objects.py). Pairs take turns: while one holds the
// lock (asleep in nanosleep for HOLD_MS), the other waits on it. Prints
// "TID NAME" for each thread, then "ready", and runs for argv[1] seconds.
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mutex>

#define HOLD_MS 20

static pthread_mutex_t orders_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t queue_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
static sem_t slots;
static std::mutex cxx_lock;
static pthread_mutex_t robust_lock;
static pthread_mutex_t pi_lock;
static pthread_mutex_t timed_lock = PTHREAD_MUTEX_INITIALIZER;

struct account {
	char name[40];
	pthread_mutex_t lock;
};

static struct account *heap_account;
static volatile int stop;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;

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
	started++;
	pthread_mutex_unlock(&print_lock);
}

/* Holds m for HOLD_MS, lets go for a moment, again: both threads of a pair run it. */
static void *take_turns(void *arg)
{
	pthread_mutex_t *m = (pthread_mutex_t *)((void **)arg)[0];

	name_self((const char *)((void **)arg)[1]);
	while (!stop) {
		pthread_mutex_lock(m);
		sleep_ms(HOLD_MS);
		pthread_mutex_unlock(m);
		sleep_ms(1);
	}
	return NULL;
}

static void *cxx_turns(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		cxx_lock.lock();
		sleep_ms(HOLD_MS);
		cxx_lock.unlock();
		sleep_ms(1);
	}
	return NULL;
}

static void *table_writer(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		pthread_rwlock_wrlock(&table_lock);
		sleep_ms(HOLD_MS);
		pthread_rwlock_unlock(&table_lock);
		sleep_ms(1);
	}
	return NULL;
}

static void *table_reader(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		pthread_rwlock_rdlock(&table_lock);
		pthread_rwlock_unlock(&table_lock);
		sleep_ms(1);
	}
	return NULL;
}

static void *queue_waiter(void *arg)
{
	name_self((const char *)arg);
	pthread_mutex_lock(&queue_mutex);
	while (!stop)
		pthread_cond_wait(&queue_cv, &queue_mutex);
	pthread_mutex_unlock(&queue_mutex);
	return NULL;
}

static void *slot_waiter(void *arg)
{
	name_self((const char *)arg);
	while (!stop)
		sem_wait(&slots);
	return NULL;
}

/* Signals the condvar and posts the semaphore every HOLD_MS. */
static void *signaller(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		sleep_ms(HOLD_MS);
		pthread_mutex_lock(&queue_mutex);
		pthread_cond_signal(&queue_cv);
		pthread_mutex_unlock(&queue_mutex);
		sem_post(&slots);
	}
	pthread_cond_broadcast(&queue_cv);
	sem_post(&slots);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* A timed lock whose wait SIGUSR1 interrupts: it comes back as restart_syscall. */
static void *timed_waiter(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		struct timespec deadline;

		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 5;
		if (!pthread_mutex_timedlock(&timed_lock, &deadline))
			pthread_mutex_unlock(&timed_lock);
		sleep_ms(1);
	}
	return NULL;
}

static void *timed_holder(void *arg)
{
	name_self((const char *)arg);
	while (!stop) {
		pthread_mutex_lock(&timed_lock);
		sleep_ms(4 * HOLD_MS);
		pthread_mutex_unlock(&timed_lock);
		sleep_ms(1);
	}
	return NULL;
}

static void init_locks(void)
{
	pthread_mutexattr_t attr;

	sem_init(&slots, 0, 0);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&pi_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	heap_account = (struct account *)calloc(1, sizeof(*heap_account));
	strcpy(heap_account->name, "savings");
	pthread_mutex_init(&heap_account->lock, NULL);
}

int main(int argc, char **argv)
{
	static void *pairs[][2] = {
		{ &orders_lock, (void *)"h_orders" }, { &orders_lock, (void *)"w_orders" },
		{ NULL, (void *)"h_heap" },	      { NULL, (void *)"w_heap" },
		{ &robust_lock, (void *)"h_robust" }, { &robust_lock, (void *)"w_robust" },
		{ &pi_lock, (void *)"h_pi" },	      { &pi_lock, (void *)"w_pi" },
	};
	static const struct {
		void *(*fn)(void *);
		const char *name;
	} others[] = {
		{ cxx_turns, "h_cxx" },	       { cxx_turns, "w_cxx" },
		{ table_writer, "h_table" },   { table_reader, "w_table_r" },
		{ table_writer, "w_table_w" }, { queue_waiter, "w_queue" },
		{ slot_waiter, "w_slots" },    { signaller, "signaller" },
		{ timed_holder, "h_timed" },   { timed_waiter, "w_timed" },
	};
	size_t nr_pairs = sizeof(pairs) / sizeof(pairs[0]);
	size_t nr_others = sizeof(others) / sizeof(others[0]);
	pthread_t threads[32], timed = 0;
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	struct timespec end, now;
	size_t i, n = 0;
	pid_t child;

	init_locks();
	pairs[2][0] = pairs[3][0] = &heap_account->lock;
	signal(SIGUSR1, on_usr1);
	for (i = 0; i < nr_pairs; i++)
		pthread_create(&threads[n++], NULL, take_turns, pairs[i]);
	for (i = 0; i < nr_others; i++) {
		pthread_create(&threads[n], NULL, others[i].fn, (void *)others[i].name);
		if (others[i].fn == timed_waiter)
			timed = threads[n];
		n++;
	}
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < (int)n)
		sleep_ms(1);
	printf("%ld main\n", (long)getpid());
	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	for (;;) {
		/* A child the main thread waits for, then the timed waiter interrupted. */
		child = fork();
		if (child == 0) {
			sleep_ms(3 * HOLD_MS);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		pthread_kill(timed, SIGUSR1);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
	}
	/* Threads still block on their locks: gone with the process. */
	stop = 1;
	_exit(0);
}
