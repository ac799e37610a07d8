// SPDX-License-Identifier: GPL-2.0
/* What latemain dlopens long after its exec, and waits in (test_short_process_miss_is_counted). */
#include <sys/syscall.h>

/* poll(NULL, 0, 30) by its own system call: the thread stops in this library. */
int latelib_wait(void)
{
	register long timeout asm("rdx") = 30;
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"((long)SYS_poll), "D"(0L), "S"(0L), "r"(timeout)
		     : "rcx", "r11", "memory");
	return (int)ret + 1;
}
