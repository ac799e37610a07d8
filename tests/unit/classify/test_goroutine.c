// SPDX-License-Identifier: GPL-2.0
/*
 * Go's parking paths, on stacks Go 1.19 threads gave here
 * (tests/integration/test_go.py's program, frame pointers): what the
 * goroutine an M parked waited for, and the M's own paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "classify/goroutine.h"
#include "lib/array.h"
#include "offcpu.h"

static struct frame fr(const char *sym)
{
	struct frame f = { .sym = sym, .module = "/tmp/gowait" };

	return f;
}

/* The frames past runtime.mcall: gopark's caller first (gopark's own PC is in g.sched). */
static void parked_goroutines(void **state)
{
	const struct frame sleep[] = { fr("time.Sleep"), fr("main.sleeper") };
	const struct frame chan[] = { fr("runtime.chanrecv"), fr("runtime.chanrecv2"),
				      fr("main.chanWaiter") };
	const struct frame send[] = { fr("runtime.chansend"), fr("runtime.chansend1") };
	const struct frame mutex[] = { fr("runtime.semacquire1"),
				       fr("sync.runtime_SemacquireMutex"),
				       fr("sync.(*Mutex).lockSlow"), fr("main.mutexWaiter") };
	const struct frame wg[] = { fr("runtime.semacquire1"), fr("sync.runtime_Semacquire"),
				    fr("sync.(*WaitGroup).Wait") };
	const struct frame net[] = { fr("runtime.netpollblock"),
				     fr("internal/poll.runtime_pollWait"),
				     fr("internal/poll.(*pollDesc).wait") };
	const struct frame sel[] = { fr("runtime.selectgo"), fr("main.main") };
	const struct frame with_gopark[] = { fr("runtime.gopark"), fr("time.Sleep") };
	const struct frame cond[] = { fr("runtime.goparkunlock"), fr("sync.runtime_notifyListWait"),
				      fr("sync.(*Cond).Wait") };
	const struct frame other[] = { fr("main.spin"), fr("main.main") };

	(void)state;
	assert_string_equal(goroutine__park_class(sleep, ARRAY_SIZE(sleep)), "sleep");
	assert_string_equal(goroutine__park_class(chan, ARRAY_SIZE(chan)), "lock:go-chan");
	assert_string_equal(goroutine__park_class(send, ARRAY_SIZE(send)), "lock:go-chan");
	assert_string_equal(goroutine__park_class(mutex, ARRAY_SIZE(mutex)), "lock:go-mutex");
	assert_string_equal(goroutine__park_class(wg, ARRAY_SIZE(wg)), "lock:go-semaphore");
	assert_string_equal(goroutine__park_class(net, ARRAY_SIZE(net)), "poll:go-netpoll");
	assert_string_equal(goroutine__park_class(sel, ARRAY_SIZE(sel)), "lock:go-select");
	assert_string_equal(goroutine__park_class(with_gopark, ARRAY_SIZE(with_gopark)), "sleep");
	assert_string_equal(goroutine__park_class(cond, ARRAY_SIZE(cond)), "lock:go-cond");
	assert_null(goroutine__park_class(other, ARRAY_SIZE(other)));
	assert_null(goroutine__park_class(NULL, 0));
}

static void m_paths(void **state)
{
	const struct frame idle[] = { fr("runtime.futex.abi0"), fr("runtime.notesleep"),
				      fr("runtime.stopm"),	fr("runtime.findRunnable"),
				      fr("runtime.schedule"),	fr("runtime.park_m"),
				      fr("runtime.mcall") };
	const struct frame netpoll[] = { fr("runtime.epollwait.abi0"), fr("runtime.findRunnable"),
					 fr("runtime.schedule"), fr("runtime.park_m"),
					 fr("runtime.mcall") };
	const struct frame sysmon[] = { fr("runtime.futex.abi0"), fr("runtime.notetsleep"),
					fr("runtime.sysmon"), fr("runtime.mstart.abi0") };
	const struct frame c_code[] = { fr("pthread_cond_wait"), fr("main") };

	(void)state;
	assert_string_equal(goroutine__m_class(idle, ARRAY_SIZE(idle)), "sleep:go-idle");
	assert_string_equal(goroutine__m_class(netpoll, ARRAY_SIZE(netpoll)), "poll:go-netpoll");
	assert_string_equal(goroutine__m_class(sysmon, ARRAY_SIZE(sysmon)), "sleep:go-sysmon");
	assert_null(goroutine__m_class(c_code, ARRAY_SIZE(c_code)));
}

/* In classify__wait_parked's order: cpu first, then the user's rules, the park, the M, the kernel.
 */
static void order_of_the_classes(void **state)
{
	const struct frame futex[] = { fr("futex_wait"), fr("do_futex") };
	const struct frame idle[] = { fr("runtime.futex.abi0"), fr("runtime.stopm"),
				      fr("runtime.mcall") };
	const struct frame c_code[] = { fr("__lll_lock_wait"), fr("main") };
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE;

	(void)state;
	assert_string_equal(
	    classify__wait_parked(NULL, OFFCPU_STATE_PREEMPTED, futex, 2, idle, 3, "sleep"), "cpu");
	assert_string_equal(classify__wait_parked(NULL, S, futex, 2, idle, 3, "sleep"), "sleep");
	assert_string_equal(classify__wait_parked(NULL, S, futex, 2, idle, 3, NULL), "sleep:go-idle");
	assert_string_equal(classify__wait(NULL, S, futex, 2, c_code, 2), "lock:mutex");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parked_goroutines),
		cmocka_unit_test(m_paths),
		cmocka_unit_test(order_of_the_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
