// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

/* A filesystem without O_TMPFILE (NFS, vfat...): offcpu falls back to a named file. */
static int refuse(int flags)
{
	if ((flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return 1;
	}
	return 0;
}

#define WRAP(name)                                                                                 \
	int name(int dir, const char *path, int flags, ...)                                        \
	{                                                                                          \
		static int (*next)(int, const char *, int, ...);                                   \
		va_list ap;                                                                        \
		int mode;                                                                          \
                                                                                                   \
		va_start(ap, flags);                                                               \
		mode = va_arg(ap, int);                                                            \
		va_end(ap);                                                                        \
		if (refuse(flags))                                                                 \
			return -1;                                                                 \
		if (!next)                                                                         \
			next = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name);      \
		return next(dir, path, flags, mode);                                               \
	}
WRAP(openat)
WRAP(openat64)
