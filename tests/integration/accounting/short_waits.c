// SPDX-License-Identifier: GPL-2.0
/*
 * Many short waits and a few long ones, for the accounting tests
 * (tests/integration/test_accounting.py).
 *
 *   short_waits pingpong N_SHORT N_LONG SEED
 *       the main thread (comm "sw_main") makes N_SHORT waits of 20-200 us,
 *       uniform: it writes a delay to a peer thread ("sw_peer") over a pipe
 *       and reads the reply, which the peer sends after sleeping that long;
 *       then N_LONG sleeps of 20 ms. The peer's own waits are short too.
 *   short_waits sleeps N US
 *       N sleeps of US microseconds (comm "sw_sleep"), timer slack 1 ns.
 *
 * Each prints "tid NAME TID" per thread, so the tests know who is who.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int to_peer[2], to_main[2];

static void nap_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void say_tid(const char *name)
{
	printf("tid %s %d\n", name, gettid());
	fflush(stdout);
}

static void *peer(void *arg)
{
	uint32_t delay_us;

	(void)arg;
	prctl(PR_SET_NAME, "sw_peer");
	prctl(PR_SET_TIMERSLACK, 1UL);
	say_tid("sw_peer");
	while (read(to_peer[0], &delay_us, sizeof(delay_us)) == sizeof(delay_us) && delay_us) {
		nap_ns((long)delay_us * 1000);
		if (write(to_main[1], &delay_us, sizeof(delay_us)) != sizeof(delay_us))
			break;
	}
	return NULL;
}

static int pingpong(long n_short, long n_long, unsigned int seed)
{
	uint32_t delay_us, stop = 0;
	pthread_t t;
	long i;

	prctl(PR_SET_NAME, "sw_main");
	prctl(PR_SET_TIMERSLACK, 1UL);
	say_tid("sw_main");
	if (pipe(to_peer) || pipe(to_main) || pthread_create(&t, NULL, peer, NULL))
		return 1;
	srandom(seed);
	for (i = 0; i < n_short; i++) {
		delay_us = 20 + (uint32_t)(random() % 181);
		if (write(to_peer[1], &delay_us, sizeof(delay_us)) != sizeof(delay_us) ||
		    read(to_main[0], &delay_us, sizeof(delay_us)) != sizeof(delay_us))
			return 1;
	}
	if (write(to_peer[1], &stop, sizeof(stop)) != sizeof(stop))
		return 1;
	pthread_join(t, NULL);
	for (i = 0; i < n_long; i++)
		nap_ns(20 * 1000000L);
	return 0;
}

static int sleeps(long n, long us)
{
	long i;

	prctl(PR_SET_NAME, "sw_sleep");
	prctl(PR_SET_TIMERSLACK, 1UL);
	say_tid("sw_sleep");
	for (i = 0; i < n; i++)
		nap_ns(us * 1000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "pingpong"))
		return pingpong(atol(argv[2]), atol(argv[3]), (unsigned int)atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "sleeps"))
		return sleeps(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: short_waits pingpong N_SHORT N_LONG SEED | sleeps N US\n");
	return 2;
}
