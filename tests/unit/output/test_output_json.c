// SPDX-License-Identifier: GPL-2.0
/* The json recording of the fixture profiles: its lines, a frame's fields, hostile names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void json_golden(void **state)
{
	static const char first[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":1000,\"pid\":100,\"tid\":101,\"comm\":\"app\","
	    "\"state\":\"interruptible\",\"wait\":\"sleep\",\"duration_ns\":20000000,\"weight_ns\":"
	    "20000000,\"cpu\":1,"
	    "\"kernel_stack\":[{\"addr\":\"0xffffffff81000010\",\"sym\":\"do_nanosleep\","
	    "\"off\":0,\"module\":\"[kernel.kallsyms]\"},{\"addr\":\"0xffffffff81000020\","
	    "\"sym\":\"__x64_sys_clock_nanosleep\",\"off\":0,\"module\":\"[kernel.kallsyms]\"}],"
	    "\"user_stack\":[{\"addr\":\"0x1100\",\"sym\":\"clock_nanosleep\",\"off\":0,"
	    "\"module\":\"/usr/bin/app\",\"module_off\":256},{\"addr\":\"0x1234\","
	    "\"module\":\"/usr/bin/app\",\"module_off\":564},{\"addr\":\"0x1300\",\"sym\":"
	    "\"main\",\"off\":0,\"module\":\"/usr/bin/app\",\"module_off\":768}],"
	    "\"runq_ns\":0}\n";
	struct profile *p = fixture_profile(true);
	char *text = render(output_json__write, p), *line2, *last;

	(void)state;
	assert_int_equal(p->nr_waits, 3);
	if (strncmp(text, first, strlen(first)))
		fail_msg("first line:\n%.*s\nexpected:\n%s", (int)strlen(first), text, first);
	line2 = strchr(text, '\n') + 1;
	assert_non_null(strstr(line2, "\"ts_ns\":2000"));
	/* "title" only where it says more than comm. */
	assert_null(strstr(text, "\"tid\":101,\"comm\":\"app\",\"title\""));
	assert_non_null(strstr(text, "\"tid\":102,\"comm\":\"app\",\"title\":\"app --worker\","));
	last = strstr(text, "{\"type\":\"stats\",\"switches\":0,");
	assert_non_null(last);
	assert_non_null(strstr(last, "\"ringbuf_full\":0"));
	assert_non_null(strstr(last, "\"symbol_misses\":0"));
	assert_int_equal(last[strlen(last) - 1], '\n');
	free(text);
	profile__free(p);
}
/* The frame fields beyond addr, sym, off and module: named as pprof and perf users know them. */
static void json_frames_place_the_code(void **state)
{
	struct profile *p = full_profile(true);
	char *text = render(output_json__write, p);

	(void)state;
	assert_non_null(strstr(
	    text,
	    "\"user_stack\":[{\"addr\":\"0x7f0000009100\",\"sym\":\"std::mutex::lock()\","
	    "\"mangled\":\"_ZNSt5mutex4lockEv\",\"off\":0,\"module\":\"/usr/lib/libcxx.so.1\","
	    "\"module_off\":37120,\"build_id\":\"0123456789abcdef0123456789abcdef01234567\","
	    "\"file\":\"mutex.h\",\"line\":42,\"inlined\":[{\"sym\":\"lock_inner\","
	    "\"file\":\"inner.h\",\"line\":7},{\"sym\":\"lock_outer\"}]},"));
	/* A kernel frame's offset is its address, not said again. */
	assert_non_null(strstr(text, "{\"addr\":\"0xffffffffc0001234\",\"sym\":\"nvme_poll\","
				     "\"off\":0,\"module\":\"[nvme]\"},"));
	free(text);
	profile__free(p);
}
static void hostile_names_in_json(void **state)
{
	struct profile *p = hostile_profile(true);
	char *text = render(output_json__write, p);

	(void)state;
	assert_true(well_formed_utf8(text, strlen(text)));
	assert_non_null(strstr(text, "\"comm\":\"\\u001b]0;PWN\\u0007\\u001b[2J\","));
	assert_non_null(strstr(text,
			       "\"title\":\"t\\r;\\\"'<>& \\u007f\\u009b" REPLACEMENT REPLACEMENT
				   REPLACEMENT REPLACEMENT REPLACEMENT "\xef\xbf\xbf\\u2028\","));
	assert_non_null(strstr(text, "\"wait\":\"lock:x\\u001b[31m;y z\\n1 2\\u2029\","));
	assert_non_null(strstr(text, "\"sym\":\"f\\u001b[2J<&>;" REPLACEMENT "\","));
	assert_non_null(strstr(text, "\"comm\":\"\xef\xbf\xbe" REPLACEMENT "\","));
	assert_non_null(
	    strstr(text, "\"module\":\"/tmp/d" REPLACEMENT "/l" REPLACEMENT " b\\u0007.so\","));
	free(text);
	profile__free(p);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_golden),
		cmocka_unit_test(json_frames_place_the_code),
		cmocka_unit_test(hostile_names_in_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
