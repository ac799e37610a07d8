// SPDX-License-Identifier: GPL-2.0
/*
 * Where a user stack ends, on the stacks Go 1.19 threads gave here: an idle
 * M walked past runtime.mcall into the goroutine it had parked, sysmon past
 * runtime.mstart into Go heap words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/array.h"
#include "unwind/stack_end.h"

#define GO "/tmp/gowait"

static struct frame fr(const char *sym, const char *module)
{
	struct frame f = { .sym = sym, .module = module };

	return f;
}

static void stops_at_mcall(void **state)
{
	const struct frame idle_m[] = {
		fr("runtime.futex.abi0", GO), fr("runtime.notesleep", GO),
		fr("runtime.stopm", GO),      fr("runtime.findRunnable", GO),
		fr("runtime.schedule", GO),   fr("runtime.park_m", GO),
		fr("runtime.mcall", GO),      fr("time.Sleep", GO),
		fr("main.sleeper", GO),	      fr("runtime.goexit.abi0", GO),
	};

	(void)state;
	assert_int_equal(stack_end__user(idle_m, ARRAY_SIZE(idle_m), true), 7);
	assert_true(stack_end__is_goroutine_switch(&idle_m[6]));
	assert_false(stack_end__is_goroutine_switch(&idle_m[5]));
}

static void stops_at_roots_and_switches(void **state)
{
	const struct frame sysmon[] = {
		fr("runtime.usleep.abi0", GO), fr("runtime.sysmon", GO),
		fr("runtime.mstart1", GO),     fr("runtime.mstart0", GO),
		fr("runtime.mstart.abi0", GO), fr("runtime.execute", GO),
	};
	const struct frame on_g0[] = {
		fr("runtime.futex.abi0", GO),
		fr("runtime.systemstack.abi0", GO),
		fr("runtime.entersyscallblock", GO),
		fr("main.main", GO),
	};
	const struct frame goroutine[] = {
		fr("syscall.Syscall", GO),
		fr("main.reader", GO),
		fr("runtime.goexit.abi0", GO),
		fr("runtime.mstart", GO),
	};
	/* Names that only begin like one of them are not one. */
	const struct frame lookalike[] = {
		fr("runtime.mcallers", GO),
		fr("runtime.mstartm", GO),
		fr("main.main", GO),
	};

	(void)state;
	assert_int_equal(stack_end__user(sysmon, ARRAY_SIZE(sysmon), true), 5);
	assert_int_equal(stack_end__user(on_g0, ARRAY_SIZE(on_g0), true), 2);
	assert_int_equal(stack_end__user(goroutine, ARRAY_SIZE(goroutine), true), 3);
	assert_int_equal(stack_end__user(lookalike, ARRAY_SIZE(lookalike), true), 3);
}

static void no_frame_outside_executable_mappings(void **state)
{
	/* 0xc000024000: a Go heap word the walk took for a return address. */
	const struct frame heap[] = {
		fr("runtime.futex.abi0", GO),
		fr("runtime.notetsleep", GO),
		fr(NULL, NULL),
		fr("runtime.execute", GO),
	};
	/* The leaf is where the thread is, even with no mapping known for it. */
	const struct frame leaf[] = { fr(NULL, NULL), fr("main", "/bin/x"), fr(NULL, NULL) };
	/* A process whose maps are not known: no frame has a module, each is kept. */
	const struct frame unknown[] = { fr(NULL, NULL), fr(NULL, NULL), fr(NULL, NULL) };
	/* Anonymous executable memory (JIT code) is a mapping. */
	const struct frame jit[] = { fr("jitted", "[anon]"), fr(NULL, "[anon]"), fr("main", "/x") };

	(void)state;
	assert_int_equal(stack_end__user(heap, ARRAY_SIZE(heap), true), 2);
	assert_int_equal(stack_end__user(leaf, ARRAY_SIZE(leaf), true), 2);
	assert_int_equal(stack_end__user(unknown, ARRAY_SIZE(unknown), false), 3);
	assert_int_equal(stack_end__user(jit, ARRAY_SIZE(jit), true), 3);
	assert_int_equal(stack_end__user(NULL, 0, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stops_at_mcall),
		cmocka_unit_test(stops_at_roots_and_switches),
		cmocka_unit_test(no_frame_outside_executable_mappings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
