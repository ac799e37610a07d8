/* SPDX-License-Identifier: GPL-2.0 */
/* What the tests of CPython's line tables, layouts and code objects share. */
#ifndef OFFCPU_TESTS_UNIT_PYTHON_FIXTURES_H
#define OFFCPU_TESTS_UNIT_PYTHON_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

/* The bytes written in hex ("0a1b..."), at most max: how many. */
size_t unhex(const char *hex, uint8_t *out, size_t max);

/*
 * The _Py_DebugOffsets of a running 3.13.0
 * (tests/unit/fixtures/python313_debug_offsets.hex): how many bytes.
 */
size_t read_debug_offsets(uint8_t *buf, size_t max);

#endif
