// SPDX-License-Identifier: GPL-2.0
/* The layouts of each version: 3.13's from a captured _Py_DebugOffsets, 3.9 to 3.12's built in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "python/python_layout.h"

#include "python_fixtures.h"

/* The _Py_DebugOffsets of a running 3.13.0: what offsetof() says over its headers. */
static void debug_offsets_of_3_13(void **state)
{
	uint8_t buf[PYTHON_DEBUG_OFFSETS_SIZE] = { 0 };
	struct python_layout l;
	uint64_t word;

	(void)state;
	assert_int_equal(read_debug_offsets(buf, sizeof(buf)), 584);
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), &l), 0);
	assert_int_equal(l.frames.version, 0x030d);
	assert_int_equal(l.frames.runtime_interp_head, 632);
	assert_int_equal(l.frames.interp_threads_head, 7344);
	assert_int_equal(l.frames.tstate_next, 8);
	assert_int_equal(l.frames.tstate_thread_id, 160);
	assert_int_equal(l.frames.tstate_frame, 72);
	assert_int_equal(l.frames.cframe_current_frame, OFFCPU_PY_NONE);
	assert_int_equal(l.frames.frame_code, 0);
	assert_int_equal(l.frames.frame_previous, 8);
	assert_int_equal(l.frames.frame_instr, 56);
	assert_int_equal(l.frames.frame_owner, 70);
	assert_int_equal(l.frames.frame_is_entry, OFFCPU_PY_NONE);
	assert_int_equal(l.frames.code_names, 112);
	assert_int_equal(l.frames.code_names_words, 4);
	assert_int_equal(l.code.filename, 112);
	assert_int_equal(l.code.qualname, 128);
	assert_int_equal(l.code.firstlineno, 68);
	assert_int_equal(l.code.linetable, 136);
	assert_int_equal(l.code.code_adaptive, 200);
	assert_int_equal(l.code.unicode_ascii_data, 40);
	assert_int_equal(l.code.unicode_compact_data, 56);
	assert_int_equal(l.code.bytes_data, 32);

	/* Short, no cookie, another version's layout, a free-threaded build: not read. */
	assert_int_equal(python_layout__from_debug_offsets(buf, 300, &l), -ENOENT);
	buf[0] = 'y';
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), &l), -ENOENT);
	buf[0] = 'x';
	memcpy(&word, buf + 8, 8);
	word = 0x030e00f0;
	memcpy(buf + 8, &word, 8);
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), &l), -ENOENT);
	word = 0x030d00f0;
	memcpy(buf + 8, &word, 8);
	word = 1;
	memcpy(buf + 16, &word, 8);
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), &l), -ENOENT);
	word = 0;
	memcpy(buf + 16, &word, 8);
	/* An offset no structure has. */
	word = 1 << 20;
	memcpy(buf + 9 * 8, &word, 8);
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), &l), -EINVAL);
}

static void layouts_of_each_version(void **state)
{
	struct python_layout l;
	uint16_t v;

	(void)state;
	for (v = 0x0309; v <= 0x030c; v++) {
		assert_int_equal(python_layout__of_version(v, &l), 0);
		assert_int_equal(l.frames.version, v);
		/* The identity the walk reads: co_filename, co_name (, co_qualname), co_linetable.
		 */
		assert_int_equal(l.frames.code_names, l.code.filename);
		assert_int_equal(l.code.name, l.code.filename + 8);
		assert_int_equal(l.code.linetable,
				 l.code.filename + 8 * (l.frames.code_names_words - 1));
	}
	assert_int_equal(python_layout__of_version(0x0308, &l), -ENOENT);
	/* 3.13 and later: from the runtime's own debug offsets only. */
	assert_int_equal(python_layout__of_version(0x030d, &l), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debug_offsets_of_3_13),
		cmocka_unit_test(layouts_of_each_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
