// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>

#include "lib/log.h"

static bool verbose;

void log__set_verbose(bool on)
{
	verbose = on;
}

bool log__is_verbose(void)
{
	return verbose;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "offcpu: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log__error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log__warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log__info(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}
