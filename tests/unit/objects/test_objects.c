// SPDX-License-Identifier: GPL-2.0
/*
 * What a wait waited on, by the call it blocked in: a sleep's requested
 * time, the child a wait4 or waitid waits for, a futex_waitv's first futex,
 * and a lock in this very process with the thread that holds it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "objects/objects.h"

static struct objects *objs;

static int setup(void **state)
{
	struct symbol_limits limits;

	(void)state;
	limits__defaults(&limits);
	return objects__new(&limits, &objs);
}

static int teardown(void **state)
{
	(void)state;
	objects__free(objs);
	return 0;
}

static struct offcpu_object call(uint32_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct offcpu_object o = { .taken = 1, .syscall = nr };

	o.args[0] = a0;
	o.args[1] = a1;
	o.args[2] = a2;
	return o;
}

static void with_timespec(struct offcpu_object *o, int64_t sec, int64_t nsec)
{
	int64_t ts[2] = { sec, nsec };

	memcpy(o->window, ts, sizeof(ts));
	o->window_len = sizeof(ts);
}

static void sleeps_name_their_requested_time(void **state)
{
	struct offcpu_object o = call(35, 0x1000, 0, 0);
	struct object_name n;

	(void)state;
	with_timespec(&o, 0, 20000000);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.kind, "timer");
	assert_string_equal(n.name, "timer 20 ms");
	assert_false(n.failed);
	/* clock_nanosleep's request is its third argument; the window is what it points at. */
	o = call(230, 1, 0, 0x1000);
	with_timespec(&o, 1, 500000000);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "timer 1.500 s");
	with_timespec(&o, 0, 250);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "timer 250 ns");
	/* TIMER_ABSTIME: a deadline, not a length. */
	o = call(230, 1, 1, 0x1000);
	with_timespec(&o, 12345, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "timer to a deadline");
	/* A request that could not be read is said, and counted. */
	o = call(35, 0x1000, 0, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "timer");
	assert_true(n.failed);
}

static void waits_for_children_name_them(void **state)
{
	struct offcpu_object o;
	struct object_name n;

	(void)state;
	o = call(61, 4321, 0, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.kind, "child");
	assert_string_equal(n.name, "pid 4321");
	o = call(61, (uint64_t)-1, 0, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "any child");
	o = call(61, (uint64_t)-77, 0, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "any child in process group 77");
	o = call(247, 1, 99, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "pid 99");
	o = call(247, 0, 0, 0);
	assert_true(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	assert_string_equal(n.name, "any child");
}

static void nothing_named_without_a_call_that_names_one(void **state)
{
	struct offcpu_object o = call(0, 3, 0, 0);
	struct object_name n;

	(void)state;
	assert_false(objects__name(objs, getpid(), &o, NULL, NULL, &n));
	o.taken = 0;
	o.syscall = 35;
	assert_false(objects__name(objs, getpid(), &o, NULL, NULL, &n));
}

static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t before;
	pthread_mutex_t lock;
} books;
static volatile uint32_t holder_tid;
static volatile int let_go;

static void *hold(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "ledger_keeper");
	pthread_mutex_lock(&ledger_lock);
	holder_tid = (uint32_t)syscall(SYS_gettid);
	while (!let_go)
		usleep(1000);
	pthread_mutex_unlock(&ledger_lock);
	return NULL;
}

/*
 * The futex call a waiter on the mutex m makes, with what the switch-out
 * reads around it: m's bytes after the 16 before it (not this test's to read).
 */
static struct offcpu_object futex_on(pthread_mutex_t *m)
{
	struct offcpu_object o = call(202, (uint64_t)m, 128, 2);

	o.window_addr = (uint64_t)m - OFFCPU_OBJECT_BEFORE;
	o.window_len = OFFCPU_OBJECT_WINDOW;
	memcpy(o.window + OFFCPU_OBJECT_BEFORE, m, OFFCPU_OBJECT_WINDOW - OFFCPU_OBJECT_BEFORE);
	return o;
}

static void a_lock_in_this_process_and_its_holder(void **state)
{
	static const char *const names[] = { "__lll_lock_wait", "pthread_mutex_lock" };
	struct stack *s = calloc(1, sizeof(*s) + 2 * sizeof(s->frames[0]));
	pthread_mutex_t *on_heap = malloc(sizeof(*on_heap));
	struct offcpu_object o;
	struct object_name n;
	pthread_t t;

	(void)state;
	assert_non_null(s);
	assert_non_null(on_heap);
	s->nr = 2;
	s->frames[0].sym = names[0];
	s->frames[1].sym = names[1];
	assert_int_equal(pthread_create(&t, NULL, hold, NULL), 0);
	while (!holder_tid)
		usleep(1000);
	o = futex_on(&ledger_lock);
	assert_true(objects__name(objs, getpid(), &o, s, NULL, &n));
	assert_string_equal(n.kind, "mutex");
	assert_string_equal(n.name, "ledger_lock");
	assert_int_equal(n.addr, (uint64_t)&ledger_lock);
	assert_int_equal(n.holder_tid, holder_tid);
	assert_int_equal(n.holder_pid, getpid());
	assert_string_equal(n.holder_comm, "ledger_keeper");
	assert_false(n.failed);
	let_go = 1;
	pthread_join(t, NULL);
	/* Inside a variable: its offset. On the heap, in no variable: the mapping. */
	o = futex_on(&books.lock);
	assert_true(objects__name(objs, getpid(), &o, s, NULL, &n));
	assert_string_equal(n.name, "books+0x8");
	assert_int_equal(n.holder_tid, 0);
	pthread_mutex_init(on_heap, NULL);
	o = futex_on(on_heap);
	assert_true(objects__name(objs, getpid(), &o, s, NULL, &n));
#ifdef __SANITIZE_ADDRESS__
	/* ASan's allocator maps memory of its own. */
	assert_string_equal(n.name, "[anon]");
#else
	assert_string_equal(n.name, "[heap]");
#endif
	free(on_heap);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sleeps_name_their_requested_time),
		cmocka_unit_test(waits_for_children_name_them),
		cmocka_unit_test(nothing_named_without_a_call_that_names_one),
		cmocka_unit_test(a_lock_in_this_process_and_its_holder),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
