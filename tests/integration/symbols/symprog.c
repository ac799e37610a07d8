// SPDX-License-Identifier: GPL-2.0
// The symbol tests' program, built PIE and not, stripped and not, with and
// without a separate debug file (see the Makefile):
//   symprog NAME N MS   sets its comm to NAME and sleeps N x MS ms in
//   main -> prog_wait (static) -> symlib_wait (libsymlib.so); prog_round
//   holds the round's number, for the tests of a rule pack's reads.
#include <stdlib.h>
#include <sys/prctl.h>

#include "symlib.h"

volatile int prog_round;

static __attribute__((noinline)) void prog_wait(int ms)
{
	symlib_wait(ms); /* PROG_WAIT_LINE */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n, ms, i;

	if (argc != 4)
		return 2;
	prctl(PR_SET_NAME, argv[1]);
	n = atoi(argv[2]);
	ms = atoi(argv[3]);
	for (i = 0; i < n; i++) {
		prog_round = i + 1;
		prog_wait(ms);
	}
	return 0;
}
