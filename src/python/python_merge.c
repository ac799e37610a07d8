// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "python/python_merge.h"

static bool is_eval(const struct frame *f)
{
	return !f->kind && f->sym && !strcmp(f->sym, PYTHON_EVAL_FUNCTION);
}

/* The next group of Python frames, from *next: one C call's. */
static size_t put_group(const struct frame *python, size_t nr_python, uint64_t c_call_ends,
			size_t *next, struct frame *out, size_t n, size_t max)
{
	while (*next < nr_python && n < max) {
		size_t i = (*next)++;

		out[n++] = python[i];
		if (i < 64 && (c_call_ends >> i) & 1)
			break;
	}
	return n;
}

size_t python_merge(const struct frame *native, size_t nr_native, const struct frame *python,
		    size_t nr_python, uint64_t c_call_ends, struct frame *out, size_t max)
{
	size_t i, n = 0, next = 0;

	for (i = 0; i < nr_native && n < max; i++) {
		if (is_eval(&native[i]) && next < nr_python)
			n = put_group(python, nr_python, c_call_ends, &next, out, n, max);
		else
			out[n++] = native[i];
	}
	while (next < nr_python && n < max)
		n = put_group(python, nr_python, c_call_ends, &next, out, n, max);
	return n;
}
