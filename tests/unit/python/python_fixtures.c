// SPDX-License-Identifier: GPL-2.0
/* What the tests of CPython's line tables, layouts and code objects share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "python_fixtures.h"

#define DEBUG_OFFSETS_FIXTURE "tests/unit/fixtures/python313_debug_offsets.hex"

size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int byte;

	while (n < max && sscanf(hex + 2 * n, "%2x", &byte) == 1)
		out[n++] = (uint8_t)byte;
	return n;
}

size_t read_debug_offsets(uint8_t *buf, size_t max)
{
	FILE *f = fopen(DEBUG_OFFSETS_FIXTURE, "r");
	char line[256];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#')
			n += unhex(line, buf + n, max - n);
	}
	fclose(f);
	return n;
}
