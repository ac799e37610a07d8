// SPDX-License-Identifier: GPL-2.0
/*
 * The wait chain: the holder's own waits inside a wait on its lock, by
 * what they were, whether the holder's came before the waiter's or after
 * (a waiter cut short by a signal ends while the holder still sleeps).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/strpool.h"
#include "profile/wait_chains.h"

#define MS 1000000ull

static struct wait a_wait(struct strpool *s, uint32_t tid, uint64_t start_ms, uint64_t end_ms,
			  const char *wait_class, const struct wait_object *o)
{
	struct wait w = { 0 };

	w.tid = tid;
	w.pid = 1;
	w.end_ts_ns = end_ms * MS;
	w.duration_ns = (end_ms - start_ms) * MS;
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(s, wait_class);
	w.object = o;
	return w;
}

static void holder_asleep_inside_the_wait(void **state)
{
	struct strpool *s = strpool__new();
	struct wait_object lock = { "mutex", "orders_lock", 0x1000, 1, 20, "holder" };
	struct wait_chains *c;
	const struct wait_chain *chain;
	struct wait w;

	(void)state;
	assert_non_null(s);
	assert_int_equal(wait_chains__new(s, &c), 0);
	/* The holder (20) sleeps 10..28 ms holding it; the waiter (10) waits 12..30 ms. */
	w = a_wait(s, 20, 10, 28, "sleep", NULL);
	assert_int_equal(wait_chains__add(c, &w), 0);
	w = a_wait(s, 10, 12, 30, "lock:mutex", &lock);
	assert_int_equal(wait_chains__add(c, &w), 0);
	chain = wait_chains__find(c, &lock);
	assert_non_null(chain);
	assert_int_equal(chain->waited_ns, 18 * MS);
	assert_int_equal(chain->count, 1);
	assert_string_equal(chain->parts[0].what, "asleep in sleep");
	assert_int_equal(chain->parts[0].ns, 16 * MS);
	assert_null(chain->parts[1].what);
	wait_chains__free(c);
	strpool__free(s);
}

/* The waiter's wait ended first: the holder's is added when it comes. */
static void holder_wait_that_ends_after(void **state)
{
	struct strpool *s = strpool__new();
	struct wait_object lock = { "mutex", "timed_lock", 0x2000, 1, 20, "holder" };
	struct wait_chains *c;
	const struct wait_chain *chain;
	struct wait w;

	(void)state;
	assert_non_null(s);
	assert_int_equal(wait_chains__new(s, &c), 0);
	w = a_wait(s, 10, 5, 15, "lock:mutex", &lock);
	assert_int_equal(wait_chains__add(c, &w), 0);
	w = a_wait(s, 10, 16, 25, "lock:mutex", &lock);
	assert_int_equal(wait_chains__add(c, &w), 0);
	w = a_wait(s, 20, 0, 30, "sleep", NULL);
	assert_int_equal(wait_chains__add(c, &w), 0);
	chain = wait_chains__find(c, &lock);
	assert_non_null(chain);
	assert_int_equal(chain->waited_ns, 19 * MS);
	assert_int_equal(chain->parts[0].ns, 19 * MS);
	/* Its next wait overlaps neither: nothing more. */
	w = a_wait(s, 20, 31, 40, "io", NULL);
	assert_int_equal(wait_chains__add(c, &w), 0);
	assert_int_equal(chain->parts[0].ns, 19 * MS);
	assert_null(chain->parts[1].what);
	/* A wait with no holder, or its own, is no chain. */
	assert_null(wait_chains__find(c, &(struct wait_object){ "mutex", "x", 0, 0, 0, NULL }));
	wait_chains__free(c);
	strpool__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(holder_asleep_inside_the_wait),
		cmocka_unit_test(holder_wait_that_ends_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
