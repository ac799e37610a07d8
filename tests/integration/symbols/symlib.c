// SPDX-License-Identifier: GPL-2.0
// A shared library for the symbol tests: symlib_wait() sleeps through an
// inlined helper, so DWARF has an inline frame inside a library.
//
// libc's clock_nanosleep keeps no frame pointer, so a frame-pointer unwind
// skips its caller: symlib_block() is that sacrificial caller, and the
// inlined call to it in symlib_wait() is on the stack to be named.
#include <errno.h>
#include <time.h>

#include "symlib.h"

static __attribute__((noinline)) void symlib_block(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static inline __attribute__((always_inline)) void symlib_nap(int ms)
{
	symlib_block(ms); /* SYMLIB_NAP_LINE */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void symlib_wait(int ms)
{
	symlib_nap(ms); /* SYMLIB_WAIT_LINE */
	__asm__ volatile("" ::: "memory"); /* keeps the call above from being a tail call */
}
