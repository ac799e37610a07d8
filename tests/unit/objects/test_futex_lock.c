// SPDX-License-Identifier: GPL-2.0
/*
 * A futex wait's lock: its kind from the futex call and the libc frame
 * that made it, the lock's own address from the word waited on, and its
 * owner from glibc's fields in the bytes the switch-out read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "objects/futex_lock.h"

#define WORD 0x7f0000001010ull
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAIT_BITSET_PRIVATE 137
#define FUTEX_LOCK_PI_PRIVATE 134

/* A futex call on WORD, with the 48 bytes from 16 before it as the switch-out reads them. */
static struct offcpu_object futex_call(uint32_t op, uint32_t value)
{
	struct offcpu_object o = { .taken = 1, .syscall = 202 };

	o.args[0] = WORD;
	o.args[1] = op;
	o.args[2] = value;
	o.window_addr = WORD - OFFCPU_OBJECT_BEFORE;
	o.window_len = OFFCPU_OBJECT_WINDOW;
	return o;
}

static void put_int(struct offcpu_object *o, uint64_t addr, uint32_t value)
{
	memcpy(o->window + (addr - o->window_addr), &value, sizeof(value));
}

/* A user stack whose frames, leaf first, are named names[0..nr). */
static struct stack *stack_of(const char *const *names, uint32_t nr)
{
	struct stack *s = calloc(1, sizeof(*s) + nr * sizeof(s->frames[0]));
	uint32_t i;

	assert_non_null(s);
	s->nr = nr;
	for (i = 0; i < nr; i++)
		s->frames[i].sym = names[i];
	return s;
}

static void mutex_owner_is_its_int_at_8(void **state)
{
	static const char *const names[] = { "__lll_lock_wait", "pthread_mutex_lock", "work" };
	struct offcpu_object o = futex_call(FUTEX_WAIT_PRIVATE, 2);
	struct stack *s = stack_of(names, 3);
	struct futex_lock lock;

	(void)state;
	put_int(&o, WORD + 8, 4242);
	futex_lock__decode(&o, s, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_MUTEX);
	assert_string_equal(futex_lock__kind_name(lock.kind), "mutex");
	assert_int_equal(lock.addr, WORD);
	assert_int_equal(lock.holder_tid, 4242);
	assert_false(lock.holder_unread);
	free(s);
}

/* libc's own locks wait as a mutex does, but no frame says they are pthread mutexes. */
static void a_lock_no_frame_names_has_no_owner_guessed(void **state)
{
	static const char *const names[] = { "__lll_lock_wait_private", "malloc" };
	struct offcpu_object o = futex_call(FUTEX_WAIT_PRIVATE, 2);
	struct stack *s = stack_of(names, 2);
	struct futex_lock lock;

	(void)state;
	put_int(&o, WORD + 8, 4242);
	futex_lock__decode(&o, s, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_MUTEX);
	assert_int_equal(lock.holder_tid, 0);
	futex_lock__decode(&o, NULL, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_MUTEX);
	assert_int_equal(lock.holder_tid, 0);
	/* Any other value: a futex, nothing more. */
	o = futex_call(FUTEX_WAIT_PRIVATE, 7);
	futex_lock__decode(&o, NULL, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_FUTEX);
	assert_string_equal(futex_lock__kind_name(lock.kind), "futex");
	free(s);
}

static void pi_owner_is_the_futex_word(void **state)
{
	struct offcpu_object o = futex_call(FUTEX_LOCK_PI_PRIVATE, 0);
	struct futex_lock lock;

	(void)state;
	/* FUTEX_WAITERS set beside the owner's TID. */
	put_int(&o, WORD, 0x80000000u | 777);
	futex_lock__decode(&o, NULL, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_MUTEX);
	assert_int_equal(lock.holder_tid, 777);
}

static void rwlock_base_from_the_word_waited_on(void **state)
{
	static const char *const rd[] = { "pthread_rwlock_rdlock", "reader" };
	static const char *const wr[] = { "___pthread_rwlock_wrlock", "writer" };
	struct stack *r = stack_of(rd, 2), *w = stack_of(wr, 2);
	struct offcpu_object o;
	struct futex_lock lock;

	(void)state;
	/* A reader on __wrphase_futex (+8) in a write phase: the writer is __cur_writer. */
	o = futex_call(FUTEX_WAIT_BITSET_PRIVATE, 3);
	put_int(&o, WORD - 8 + 24, 99);
	futex_lock__decode(&o, r, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_RWLOCK_READ);
	assert_string_equal(futex_lock__kind_name(lock.kind), "rwlock");
	assert_int_equal(lock.addr, WORD - 8);
	assert_int_equal(lock.holder_tid, 99);
	/* A reader on __readers itself (writers preferred). */
	o = futex_call(FUTEX_WAIT_BITSET_PRIVATE, 0x1a);
	put_int(&o, WORD + 24, 98);
	futex_lock__decode(&o, r, &lock);
	assert_int_equal(lock.addr, WORD);
	assert_int_equal(lock.holder_tid, 98);
	/* A writer on __writers_futex (+12) while another writer holds it. */
	o = futex_call(FUTEX_WAIT_BITSET_PRIVATE, 3);
	put_int(&o, WORD - 12 + 24, 97);
	futex_lock__decode(&o, w, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_RWLOCK_WRITE);
	assert_int_equal(lock.addr, WORD - 12);
	assert_int_equal(lock.holder_tid, 97);
	/* A writer on __wrphase_futex while readers hold it: no writer to name. */
	o = futex_call(FUTEX_WAIT_BITSET_PRIVATE, 2);
	futex_lock__decode(&o, w, &lock);
	assert_int_equal(lock.addr, WORD - 8);
	assert_int_equal(lock.holder_tid, 0);
	free(r);
	free(w);
}

static void condvar_and_semaphore_have_no_owner(void **state)
{
	static const char *const cv[] = { "__futex_abstimed_wait_common", "pthread_cond_wait" };
	static const char *const sem[] = { "do_futex_wait", "__new_sem_wait_slow64", "sem_wait" };
	struct stack *c = stack_of(cv, 2), *s = stack_of(sem, 3);
	struct offcpu_object o = futex_call(FUTEX_WAIT_BITSET_PRIVATE, 0);
	struct futex_lock lock;

	(void)state;
	put_int(&o, WORD + 8, 5);
	futex_lock__decode(&o, c, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_CONDVAR);
	assert_int_equal(lock.addr, WORD);
	assert_int_equal(lock.holder_tid, 0);
	futex_lock__decode(&o, s, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_SEMAPHORE);
	assert_string_equal(futex_lock__kind_name(lock.kind), "semaphore");
	assert_int_equal(lock.holder_tid, 0);
	free(c);
	free(s);
}

/* The owner's field past what could be read (its page ended): said, never guessed. */
static void owner_outside_the_window_is_unread(void **state)
{
	static const char *const names[] = { "pthread_mutex_lock" };
	struct offcpu_object o = futex_call(FUTEX_WAIT_PRIVATE, 2);
	struct stack *s = stack_of(names, 1);
	struct futex_lock lock;

	(void)state;
	o.window_len = OFFCPU_OBJECT_BEFORE + 8;
	put_int(&o, WORD, 2);
	futex_lock__decode(&o, s, &lock);
	assert_int_equal(lock.kind, FUTEX_LOCK_MUTEX);
	assert_int_equal(lock.holder_tid, 0);
	assert_true(lock.holder_unread);
	o.window_len = 0;
	futex_lock__decode(&o, s, &lock);
	assert_true(lock.holder_unread);
	/* A window from a forged record longer than its buffer is not read past it. */
	o.window_len = OFFCPU_OBJECT_WINDOW + 16;
	futex_lock__decode(&o, s, &lock);
	assert_true(lock.holder_unread);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mutex_owner_is_its_int_at_8),
		cmocka_unit_test(a_lock_no_frame_names_has_no_owner_guessed),
		cmocka_unit_test(pi_owner_is_the_futex_word),
		cmocka_unit_test(rwlock_base_from_the_word_waited_on),
		cmocka_unit_test(condvar_and_semaphore_have_no_owner),
		cmocka_unit_test(owner_outside_the_window_is_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
