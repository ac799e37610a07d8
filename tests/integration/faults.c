// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD library that makes offcpu's calls fail on demand: the Nth
 * calloc (OFFCPU_TEST_FAIL_CALLOC=N) and capset (OFFCPU_TEST_FAIL_CAPSET=1),
 * for test_offcpu.py's out-of-memory and missing-capability tests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>

extern void *__libc_calloc(size_t n, size_t size);

/*
 * Counted from main on: the libraries' constructors run before (GnuTLS's,
 * for libmicrohttpd, fails calloc 1 with its own message), and what they
 * do is not offcpu's to report.
 */
static int in_main;

typedef int (*main_fn)(int, char **, char **);

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	int (*next)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
	    dlsym(RTLD_NEXT, "__libc_start_main");

	in_main = 1;
	return next(main, argc, argv, init, fini, rtld_fini, stack_end);
}

void *calloc(size_t n, size_t size)
{
	static long calls, fail_at = -1;

	if (!in_main)
		return __libc_calloc(n, size);
	if (fail_at < 0) {
		const char *at = getenv("OFFCPU_TEST_FAIL_CALLOC");

		fail_at = at ? atol(at) : 0;
	}
	if (++calls == fail_at) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

long syscall(long nr, ...)
{
	static long (*next)(long, ...);
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_capset && getenv("OFFCPU_TEST_FAIL_CAPSET")) {
		errno = EPERM;
		return -1;
	}
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
