// SPDX-License-Identifier: GPL-2.0
/* Hybrid stacks: each evaluator frame of the native stack replaced by its Python frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "python/python.h"
#include "python/python_merge.h"

static struct frame native(const char *sym)
{
	return (struct frame){ .sym = sym, .module = "/usr/bin/python3.11" };
}

static struct frame python(const char *sym)
{
	return (struct frame){ .sym = sym, .kind = PYTHON_FRAME_KIND, .file = "app.py" };
}

static void assert_names(const struct frame *f, size_t n, const char *const *want, size_t nr)
{
	size_t i;

	assert_int_equal(n, nr);
	for (i = 0; i < n; i++)
		assert_string_equal(f[i].sym, want[i]);
}

/*
 * Two evaluator calls (3.11: the inner one runs inner and middle, the
 * outer one outer and <module>): each replaced by its group, in order.
 */
static void merge_replaces_each_evaluator_frame_by_its_python_frames(void **state)
{
	const struct frame stack[] = {
		native("clock_nanosleep"),    native("time_sleep"),
		native(PYTHON_EVAL_FUNCTION), native("_PyFunction_Vectorcall"),
		native(PYTHON_EVAL_FUNCTION), native("PyEval_EvalCode"),
		native("Py_BytesMain"),
	};
	const struct frame py[] = { python("inner"), python("middle"), python("outer"),
				    python("<module>") };
	static const char *const want[] = {
		"clock_nanosleep",	  "time_sleep", "inner",    "middle",
		"_PyFunction_Vectorcall", "outer",	"<module>", "PyEval_EvalCode",
		"Py_BytesMain",
	};
	static const char *const cut[] = { "clock_nanosleep", "time_sleep", "inner",
					   "middle",	      "outer",	    "<module>" };
	static const char *const none[] = { "inner", "middle", "outer", "<module>" };
	struct frame out[16];
	size_t n;

	(void)state;
	/* Frame 1 (middle) ends the inner call; frame 3 the outer one. */
	n = python_merge(stack, 7, py, 4, (1 << 1) | (1 << 3), out, 16);
	assert_names(out, n, want, 9);
	assert_string_equal(out[2].kind, PYTHON_FRAME_KIND);
	assert_null(out[4].kind);
	/* A native stack cut short before the outer call: its group at the root end. */
	n = python_merge(stack, 3, py, 4, (1 << 1) | (1 << 3), out, 16);
	assert_names(out, n, cut, 6);
	/* No native stack at all: the Python frames alone. */
	n = python_merge(NULL, 0, py, 4, 1 << 3, out, 16);
	assert_names(out, n, none, 4);
	/* Bounded by the room given. */
	assert_int_equal(python_merge(stack, 7, py, 4, (1 << 1) | (1 << 3), out, 5), 5);
	/* More evaluator frames than groups: the rest stay as they are. */
	n = python_merge(stack, 7, py, 4, 0, out, 16);
	assert_int_equal(n, 10);
	assert_string_equal(out[5].sym, "<module>");
	assert_string_equal(out[7].sym, PYTHON_EVAL_FUNCTION);
}

/* 3.9 and 3.10: a C call per Python frame. */
static void merge_one_frame_per_call(void **state)
{
	const struct frame stack[] = {
		native("select"),	  native(PYTHON_EVAL_FUNCTION),
		native("_PyEval_Vector"), native(PYTHON_EVAL_FUNCTION),
		native("main"),
	};
	const struct frame py[] = { python("inner"), python("middle") };
	static const char *const want[] = { "select", "inner", "_PyEval_Vector", "middle", "main" };
	struct frame out[8];

	(void)state;
	assert_names(out, python_merge(stack, 5, py, 2, 3, out, 8), want, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_replaces_each_evaluator_frame_by_its_python_frames),
		cmocka_unit_test(merge_one_frame_per_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
