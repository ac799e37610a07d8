// SPDX-License-Identifier: GPL-2.0
/*
 * Built with frame pointers and no unwind tables at all (no .eh_frame
 * entry, no .debug_frame): the unwinder can only follow its frame chain.
 */
#include <time.h>

#include "unwind_libs.h"

__attribute__((noipa)) static int nocfi_inner(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	return ms + 1;
}

__attribute__((noipa)) int nocfi_sleep(int ms)
{
	return nocfi_inner(ms) + 1;
}
