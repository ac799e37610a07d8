// SPDX-License-Identifier: GPL-2.0
// A library for the debug-link tests, built without a build ID and
// stripped, with a .gnu_debuglink to its debug file (see the Makefile):
// hostile_lib_wait() sleeps in hostile_lib_hidden(), a static function
// only the debug file's .symtab names.
#include <time.h>

/* The system call made here, so the leaf frame is in this library. */
static inline long raw_nanosleep(const struct timespec *ts)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(35L), "D"(ts), "S"(0L)
			 : "rcx", "r11", "memory");
	return ret;
}

static __attribute__((noinline)) void hostile_lib_hidden(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	raw_nanosleep(&ts);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void hostile_lib_wait(int ms)
{
	hostile_lib_hidden(ms);
	__asm__ volatile("" ::: "memory");
}
