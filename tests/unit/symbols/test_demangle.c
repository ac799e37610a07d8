// SPDX-License-Identifier: GPL-2.0
/* C++ and Rust names demangled, the rest left as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/array.h"
#include "symbols/demangle.h"

static void demangled_names(void **state)
{
	static const struct {
		const char *raw, *name;
	} cases[] = {
		{ "_ZN11offcpu_test6WaiterIiE5blockEv", "offcpu_test::Waiter<int>::block()" },
		{ "_ZNKSt6vectorIiSaIiEE4sizeEv",
		  "std::vector<int, std::allocator<int> >::size() const" },
		/* Rust, legacy (its hash dropped) and v0. */
		{ "_ZN3std6thread4park17h0123456789abcdefE", "std::thread::park" },
		{ "_RNvMs_NtNtCsalM65ksrrJu_3std6thread6threadNtB4_6Thread12park_timeout",
		  "<std::thread::thread::Thread>::park_timeout" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *name = demangle__symbol(cases[i].raw);

		assert_non_null(name);
		assert_string_equal(name, cases[i].name);
		free(name);
	}
	/* C names and what does not demangle stay as they are. */
	assert_null(demangle__symbol("main"));
	assert_null(demangle__symbol("__lll_lock_wait"));
	assert_null(demangle__symbol("_Znotmangled"));
	assert_null(demangle__symbol("_"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demangled_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
