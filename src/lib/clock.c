// SPDX-License-Identifier: GPL-2.0
#include <time.h>

#include "lib/clock.h"

uint64_t clock__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
