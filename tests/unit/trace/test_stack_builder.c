// SPDX-License-Identifier: GPL-2.0
/*
 * The stack builder alone, on hand-made records of a process that does not
 * exist: its frames stay addresses, so what is kept, cut and cached shows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/array.h"
#include "offcpu.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"
#include "trace/stack_builder.h"

/* Past PID_MAX_LIMIT (4194304): no process on the machine running the test has it. */
#define PID 4194400
#define LEAF 0x401000ULL
#define CALLER 0x401100ULL
#define LOOPING 0x7f0000001234ULL

struct fixture {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct stack_builder *builder;
	/* What process_new was told, and what it answers. */
	unsigned int told;
	uint32_t told_pid;
	int answer;
};

static int process_new(void *ctx, uint32_t pid)
{
	struct fixture *f = ctx;

	f->told++;
	f->told_pid = pid;
	return f->answer;
}

static void start(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(profile__new(true, &f->profile), 0);
	assert_int_equal(
	    symbolizer__new(f->profile->strings, f->profile->inlines, NULL, &f->symbolizer), 0);
	assert_int_equal(
	    stack_builder__new(f->profile, f->symbolizer,
			       &(struct stack_builder_opts){ .process_new = process_new, .ctx = f },
			       &f->builder),
	    0);
}

static void finish(struct fixture *f)
{
	stack_builder__free(f->builder);
	symbolizer__free(f->symbolizer);
	profile__free(f->profile);
}

static struct offcpu_wait_record wait_of(uint8_t user_stack, const uint64_t *ips, uint8_t nr)
{
	struct offcpu_wait_record r;

	memset(&r, 0, sizeof(r));
	r.type = OFFCPU_RECORD_WAIT;
	r.pid = PID;
	r.tid = PID;
	r.end_ts_ns = 5000000;
	r.user_stack = user_stack;
	r.user_frames = nr;
	if (nr)
		memcpy(r.ips, ips, nr * sizeof(ips[0]));
	return r;
}

static size_t size_of(const struct offcpu_wait_record *r)
{
	return OFFCPU_WAIT_HEADER_SIZE + (r->kernel_frames + r->user_frames) * sizeof(r->ips[0]);
}

static void assert_addrs(const struct stack *stack, const uint64_t *ips, uint32_t nr)
{
	uint32_t i;

	assert_non_null(stack);
	assert_int_equal(stack->nr, nr);
	for (i = 0; i < nr; i++)
		assert_int_equal(stack->frames[i].addr, ips[i]);
}

/* A frame-pointer walk's last, zero, return address is no frame. */
static void walk_ends_before_its_zero(void **state)
{
	const uint64_t ips[] = { LEAF, CALLER, 0 };
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_TAKEN, ips, ARRAY_SIZE(ips));
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &got), 0);
	assert_null(got.kernel_stack);
	assert_addrs(got.user_stack, ips, 2);
	assert_null(got.parked);
	assert_false(got.cut_short);
	finish(&f);
}

/*
 * A loop that filled --stack-depth: cut, counted as a loop, and said cut
 * short for the caller to count (the builder does not: a chained wait counts it).
 */
static void loop_cut_and_said_cut_short(void **state)
{
	uint64_t ips[16] = { LEAF, CALLER };
	struct offcpu_wait_record r;
	struct built_stacks got;
	struct fixture f;
	size_t i;

	(void)state;
	for (i = 2; i < ARRAY_SIZE(ips); i++)
		ips[i] = LOOPING;
	r = wait_of(OFFCPU_USTACK_TAKEN, ips, ARRAY_SIZE(ips));
	r.stack_depth = ARRAY_SIZE(ips);
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &got), 0);
	assert_addrs(got.user_stack, ips, 3);
	assert_true(got.cut_short);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_USTACK_LOOP], 1);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT], 0);
	finish(&f);
}

/* One raw stack, one stack; the process's owner is told of it once, until it is forgotten. */
static void user_stacks_cached_per_process(void **state)
{
	const uint64_t ips[] = { LEAF, CALLER };
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_TAKEN, ips, ARRAY_SIZE(ips));
	struct built_stacks first, again;
	struct fixture f;
	uint64_t misses;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &first), 0);
	assert_int_equal(f.told, 1);
	assert_int_equal(f.told_pid, PID);
	misses = f.profile->counters[OFFCPU_CNT_SYMBOL_MISS];
	assert_int_equal(misses, 2);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &again), 0);
	assert_ptr_equal(again.user_stack, first.user_stack);
	assert_int_equal(f.told, 1);
	/* Not named again: its misses are not counted again. */
	assert_int_equal(f.profile->counters[OFFCPU_CNT_SYMBOL_MISS], misses);
	stack_builder__forget_process(f.builder, PID);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &again), 0);
	assert_int_equal(f.told, 2);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_SYMBOL_MISS], 2 * misses);
	finish(&f);
}

/* An owner that cannot hold the process fails the build, and is asked again next time. */
static void owner_failing_fails_the_build(void **state)
{
	const uint64_t ips[] = { LEAF };
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_TAKEN, ips, ARRAY_SIZE(ips));
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	f.answer = -ENOMEM;
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &got), -ENOMEM);
	f.answer = 0;
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), NULL, &got), 0);
	assert_int_equal(f.told, 2);
	assert_addrs(got.user_stack, ips, 1);
	finish(&f);
}

/* A copy whose record is too short for it, in dwarf mode and for fp mode's leaf. */
static void short_copies_are_einval(void **state)
{
	const uint64_t ips[] = { LEAF, CALLER };
	struct offcpu_wait_record copied = wait_of(OFFCPU_USTACK_COPIED, NULL, 0);
	struct offcpu_wait_record leaf = wait_of(OFFCPU_USTACK_TAKEN_LEAF, ips, ARRAY_SIZE(ips));
	struct offcpu_user_copy *copy = (void *)&copied.ips[0];
	struct built_stacks got;
	struct fixture f;

	(void)state;
	copy->size = 64;
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &copied,
					     OFFCPU_WAIT_HEADER_SIZE + sizeof(*copy) + 56, NULL,
					     &got),
			 -EINVAL);
	assert_int_equal(stack_builder__wait(f.builder, &leaf, size_of(&leaf), NULL, &got),
			 -EINVAL);
	finish(&f);
}

/* An empty copy (no stack could be read): no user stack, nothing cut short. */
static void empty_copy_no_user_stack(void **state)
{
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_COPIED, NULL, 0);
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__wait(
			     f.builder, &r,
			     OFFCPU_WAIT_HEADER_SIZE + sizeof(struct offcpu_user_copy), NULL, &got),
			 0);
	assert_null(got.user_stack);
	assert_false(got.cut_short);
	assert_int_equal(f.told, 0);
	finish(&f);
}

/* fp mode's leaf with an empty copy: the frame chain as it was. */
static void leaf_without_copy_kept_as_walked(void **state)
{
	const uint64_t ips[] = { LEAF, CALLER };
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_TAKEN_LEAF, ips, ARRAY_SIZE(ips));
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &r,
					     size_of(&r) + sizeof(struct offcpu_user_copy), NULL,
					     &got),
			 0);
	assert_addrs(got.user_stack, ips, ARRAY_SIZE(ips));
	finish(&f);
}

/* Python frames of a wait with no native user stack make its user stack alone. */
static void python_frames_without_a_native_stack(void **state)
{
	const struct frame py[] = {
		{ .addr = 0x1000, .sym = "wait_for_it", .kind = "python" },
		{ .addr = 0x2000, .sym = "<module>", .kind = "python" },
	};
	const struct python_frames python = { py, ARRAY_SIZE(py), 0 };
	struct offcpu_wait_record r = wait_of(OFFCPU_USTACK_NONE, NULL, 0);
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__wait(f.builder, &r, size_of(&r), &python, &got), 0);
	assert_addrs(got.user_stack, (const uint64_t[]){ 0x1000, 0x2000 }, 2);
	assert_string_equal(got.user_stack->frames[0].sym, "wait_for_it");
	assert_null(got.parked);
	finish(&f);
}

/* A waker's frame chain loses its zero too; its short copy is -EINVAL. */
static void waker_stacks_built(void **state)
{
	struct offcpu_waker_record r = { .type = OFFCPU_RECORD_WAKER,
					 .pid = PID,
					 .tid = PID,
					 .user_frames = 3,
					 .user_stack = OFFCPU_USTACK_TAKEN,
					 .ips = { LEAF, CALLER, 0 } };
	struct built_stacks got;
	struct fixture f;

	(void)state;
	start(&f);
	assert_int_equal(stack_builder__waker(
			     f.builder, &r, OFFCPU_WAKER_HEADER_SIZE + 3 * sizeof(r.ips[0]), &got),
			 0);
	assert_null(got.kernel_stack);
	assert_addrs(got.user_stack, (const uint64_t[]){ LEAF, CALLER }, 2);
	r.user_stack = OFFCPU_USTACK_COPIED;
	r.user_frames = 0;
	assert_int_equal(stack_builder__waker(f.builder, &r, OFFCPU_WAKER_HEADER_SIZE, &got),
			 -EINVAL);
	finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walk_ends_before_its_zero),
		cmocka_unit_test(loop_cut_and_said_cut_short),
		cmocka_unit_test(user_stacks_cached_per_process),
		cmocka_unit_test(owner_failing_fails_the_build),
		cmocka_unit_test(short_copies_are_einval),
		cmocka_unit_test(empty_copy_no_user_stack),
		cmocka_unit_test(leaf_without_copy_kept_as_walked),
		cmocka_unit_test(python_frames_without_a_native_stack),
		cmocka_unit_test(waker_stacks_built),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
