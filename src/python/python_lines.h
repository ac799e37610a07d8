/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source line of an instruction from a code object's line
 * table, in each format CPython has used since 3.9 (python_layout.h).
 */
#ifndef OFFCPU_PYTHON_LINES_H
#define OFFCPU_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "python/python_layout.h"

/*
 * The line of the instruction at byte offset addr of the code (co_code's
 * bytes; 2 per instruction); 0 when the table gives it no line, or ends
 * before it.
 */
uint32_t python_lines__line(enum python_line_format format, const uint8_t *table, size_t size,
			    int32_t firstlineno, uint32_t addr);

#endif
