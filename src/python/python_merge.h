/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hybrid stacks. A native stack says _PyEval_EvalFrameDefault
 * where CPython runs Python code; each such frame is replaced by the Python
 * frames that C call was running, in order.
 */
#ifndef OFFCPU_PYTHON_MERGE_H
#define OFFCPU_PYTHON_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/frame.h"

/* The C function that runs Python frames, in every version 3.9 to 3.13. */
#define PYTHON_EVAL_FUNCTION "_PyEval_EvalFrameDefault"

/*
 * native (leaf first) with each PYTHON_EVAL_FUNCTION frame replaced by the
 * next group of python's frames (leaf first); bit i of c_call_ends ends a
 * group after python frame i (python_record's). Groups left over when the
 * native frames run out (a native stack cut short) go at the root end;
 * evaluator frames left over stay. At most max frames into out; returns
 * how many.
 */
size_t python_merge(const struct frame *native, size_t nr_native, const struct frame *python,
		    size_t nr_python, uint64_t c_call_ends, struct frame *out, size_t max);

#endif
