// SPDX-License-Identifier: GPL-2.0
/*
 * Built without frame pointers and without .eh_frame, with -g: its CFI is
 * in .debug_frame, which the build moves to a separate debug file found
 * by .gnu_debuglink.
 */
#include <time.h>

#include "unwind_libs.h"

__attribute__((noipa)) static int debugframe_inner(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	return ms + 1;
}

__attribute__((noipa)) int debugframe_sleep(int ms)
{
	return debugframe_inner(ms) + 1;
}
