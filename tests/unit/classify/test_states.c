// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The mapping the BPF program runs, compiled here as plain C. */
#include "bpf/states.bpf.h"
#include "classify/states.h"
#include "lib/array.h"
#include "offcpu.h"

struct state_case {
	unsigned int prev_state;
	int preempt;
	enum offcpu_state expected;
};

/* Values of include/linux/sched.h as of 6.x. */
static const struct state_case cases[] = {
	{ 0x0000, 0, OFFCPU_STATE_RUNNING },   /* TASK_RUNNING, sched_yield */
	{ 0x0000, 1, OFFCPU_STATE_PREEMPTED }, /* preempted while runnable */
	{ 0x0001, 1, OFFCPU_STATE_PREEMPTED }, /* preempted before schedule() */
	{ 0x0002, 1, OFFCPU_STATE_PREEMPTED },
	{ 0x0001, 0, OFFCPU_STATE_INTERRUPTIBLE },   /* TASK_INTERRUPTIBLE */
	{ 0x2001, 0, OFFCPU_STATE_INTERRUPTIBLE },   /* | TASK_FREEZABLE (6.1) */
	{ 0x0002, 0, OFFCPU_STATE_UNINTERRUPTIBLE }, /* TASK_UNINTERRUPTIBLE */
	{ 0x0102, 0, OFFCPU_STATE_UNINTERRUPTIBLE }, /* TASK_KILLABLE */
	{ 0x0402, 0, OFFCPU_STATE_IDLE },	     /* TASK_IDLE */
	{ 0x1000, 0, OFFCPU_STATE_UNINTERRUPTIBLE }, /* TASK_RTLOCK_WAIT */
	{ 0x0104, 0, OFFCPU_STATE_STOPPED },	     /* TASK_STOPPED */
	{ 0x0008, 0, OFFCPU_STATE_TRACED },	     /* TASK_TRACED (6.1+) */
	{ 0x0108, 0, OFFCPU_STATE_TRACED },	     /* TASK_TRACED before 6.1 */
	{ 0x0040, 0, OFFCPU_STATE_PARKED },	     /* TASK_PARKED */
	{ 0x0080, 0, OFFCPU_STATE_OTHER },	     /* TASK_DEAD */
	{ 0x0010, 0, OFFCPU_STATE_OTHER },	     /* EXIT_DEAD bit */
};

static void states_value_by_value(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum offcpu_state got = state_of(cases[i].prev_state, cases[i].preempt);

		if (got != cases[i].expected)
			fail_msg("prev_state 0x%x preempt %d: got %s, want %s", cases[i].prev_state,
				 cases[i].preempt, states__name(got),
				 states__name(cases[i].expected));
	}
}

static void state_names(void **state)
{
	(void)state;
	assert_string_equal(states__name(OFFCPU_STATE_INTERRUPTIBLE), "interruptible");
	assert_string_equal(states__name(OFFCPU_STATE_UNINTERRUPTIBLE), "uninterruptible");
	assert_string_equal(states__name(OFFCPU_STATE_IDLE), "idle");
	assert_string_equal(states__name(OFFCPU_STATE_PREEMPTED), "preempted");
	assert_string_equal(states__name(OFFCPU_STATE_RUNNING), "running");
	assert_string_equal(states__name(OFFCPU_STATE_STOPPED), "stopped");
	assert_string_equal(states__name(OFFCPU_STATE_TRACED), "traced");
	assert_string_equal(states__name(OFFCPU_STATE_PARKED), "parked");
	assert_string_equal(states__name(OFFCPU_STATE_OTHER), "other");
	assert_string_equal(states__name(1000), "other");
}

static void state_lists(void **state)
{
	uint32_t mask = 0;

	(void)state;
	assert_int_equal(states__parse_list("preempted", &mask), 0);
	assert_int_equal(mask, 1u << OFFCPU_STATE_PREEMPTED);
	assert_int_equal(states__parse_list("interruptible,uninterruptible,idle", &mask), 0);
	assert_int_equal(mask, (1u << OFFCPU_STATE_INTERRUPTIBLE) |
				   (1u << OFFCPU_STATE_UNINTERRUPTIBLE) |
				   (1u << OFFCPU_STATE_IDLE));
	assert_int_equal(states__parse_list("", &mask), -EINVAL);
	assert_int_equal(states__parse_list("sleeping", &mask), -EINVAL);
	assert_int_equal(states__parse_list("idle,", &mask), -EINVAL);
	assert_int_equal(states__parse_list("Idle", &mask), -EINVAL);
	assert_int_equal(states__parse_list("idl", &mask), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(states_value_by_value),
		cmocka_unit_test(state_names),
		cmocka_unit_test(state_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
