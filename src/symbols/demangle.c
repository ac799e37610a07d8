// SPDX-License-Identifier: GPL-2.0
#include <libiberty/demangle.h>
#include <stdlib.h>

#include "symbols/demangle.h"

char *demangle__symbol(const char *raw)
{
	/* Everything else is a C name, or not one libiberty knows: leave it. */
	if (raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return NULL;
	return cplus_demangle(raw, DMGL_PARAMS | DMGL_ANSI);
}
