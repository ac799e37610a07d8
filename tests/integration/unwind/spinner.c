// SPDX-License-Identifier: GPL-2.0
/*
 * Preempted anywhere: a thread "spinner" calls, for ever, a chain of
 * static -O2 functions (no frame pointers) whose leaf saves and restores
 * callee-saved registers, while two "hog" threads on its CPU take turns
 * with it, so the scheduler preempts it at every instruction of that code,
 * epilogues included (after a pop, GCC's CFI still says where the popped
 * register was saved, below the stack pointer). Prints "ready" once the
 * threads run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CHAIN(name, callee)                                                                        \
	__attribute__((noipa)) static long name(long x)                                            \
	{                                                                                          \
		return callee(x) + 1;                                                              \
	}

static volatile long sink;

/* Keeps rbx, rbp, r12 busy across a call, so its prologue pushes them and its epilogue pops. */
__attribute__((noipa)) static long mix(long x)
{
	long a = x * 3, b = x ^ 5, c = x + 7;

	sink = a;
	sink = x;
	return a + b + c + sink;
}

__attribute__((noipa)) static long spin_leaf(long x)
{
	long a = x * 3, b = x ^ 5, c = x + 7;

	a += mix(b);
	b += mix(c);
	return a + b + c;
}
CHAIN(spin_c, spin_leaf)
CHAIN(spin_b, spin_c)
CHAIN(spin_a, spin_b)

static void pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *spinner(void *arg)
{
	long i;

	(void)arg;
	prctl(PR_SET_NAME, "spinner");
	pin_to_cpu0();
	for (i = 0;; i++)
		sink = spin_a(i);
	return NULL;
}

static void *hog(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "hog");
	pin_to_cpu0();
	for (;;)
		sink++;
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i;

	if (pthread_create(&t, NULL, spinner, NULL))
		return 1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, hog, NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
