// SPDX-License-Identifier: GPL-2.0
/* The folded stacks of the fixture profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void folded_golden(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_folded__write, p);

	(void)state;
	assert_string_equal(
	    text,
	    "app;[interruptible];[lock:futex];__x64_sys_futex_[k];futex_wait_queue_[k] 50000000\n"
	    "app;[interruptible];[sleep];main;app+0x234;clock_nanosleep;"
	    "__x64_sys_clock_nanosleep_[k];do_nanosleep_[k] 50000000\n");
	free(text);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
