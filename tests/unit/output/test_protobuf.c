// SPDX-License-Identifier: GPL-2.0
/* The protocol buffer encodings profile.proto needs, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "output/protobuf.h"

static void protobuf_wire_format(void **state)
{
	struct pb_buffer b = { 0 }, inner = { 0 };
	uint64_t values[3] = { 1, 300, 0 };
	static const uint8_t expected[] = {
		0x08, 0x96, 0x01,		    /* field 1 varint 150 */
		0x12, 0x02, 'h',  'i',		    /* field 2 "hi" */
		0x1a, 0x04, 0x01, 0xac, 0x02, 0x00, /* field 3 packed 1, 300, 0 */
		0x22, 0x02, 0x08, 0x07,		    /* field 4 message { field 1: 7 } */
		0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 2^64-1 */
	};

	(void)state;
	pb_buffer__varint(&b, 1, 150);
	pb_buffer__string(&b, 2, "hi");
	pb_buffer__packed(&b, 3, values, 3);
	pb_buffer__varint(&inner, 1, 7);
	pb_buffer__message(&b, 4, &inner);
	pb_buffer__varint(&b, 5, UINT64_MAX);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, sizeof(expected));
	assert_memory_equal(b.data, expected, sizeof(expected));
	pb_buffer__free(&b);
	pb_buffer__free(&inner);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(protobuf_wire_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
