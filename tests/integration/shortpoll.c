// SPDX-License-Identifier: GPL-2.0
#include <poll.h>

/* Lives ~100 ms: a wait in libc's poll, then gone before offcpu reads its records. */
int main(void)
{
	return poll(0, 0, 100);
}
