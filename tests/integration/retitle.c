// SPDX-License-Identifier: GPL-2.0
/*
 * retitle PHASES WAITS PADDING: PHASES times, writes "retitled phase P" over
 * its argv strings and prints "P NS" (CLOCK_MONOTONIC), then sleeps WAITS
 * times 20 ms (test_offcpu.py's process title test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* As a server retitles itself: its argv strings written over in place. */
int main(int argc, char **argv)
{
	char *area = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
	int phases = atoi(argv[1]), waits = atoi(argv[2]), p, i;
	struct timespec nap = { 0, 20 * 1000 * 1000 }, now;

	for (p = 0; p < phases; p++) {
		memset(area, 0, end - area);
		snprintf(area, end - area, "retitled phase %d", p);
		clock_gettime(CLOCK_MONOTONIC, &now);
		printf("%d %lld\n", p, now.tv_sec * 1000000000LL + now.tv_nsec);
		fflush(stdout);
		for (i = 0; i < waits; i++)
			nanosleep(&nap, NULL);
	}
	return 0;
}
