/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where CPython keeps what offcpu reads, version by version:
 * the frame chain (struct offcpu_python_layout, for the BPF walk) and the
 * code objects, strings and line tables (struct python_code_layout, read
 * in user space). 3.9 to 3.12 from each version's headers; 3.13 and later
 * from the _Py_DebugOffsets the runtime publishes at the start of
 * _PyRuntime for out-of-process readers like this one (3.13's layout of
 * them: 3.14 changed it).
 */
#ifndef OFFCPU_PYTHON_LAYOUT_H
#define OFFCPU_PYTHON_LAYOUT_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "offcpu.h"

/* How co_linetable (co_lnotab) maps instructions to lines. */
enum python_line_format {
	PYTHON_LINES_LNOTAB,	/* 3.9: (address delta, line delta) byte pairs */
	PYTHON_LINES_3_10,	/* 3.10: (start delta, line delta or -128) pairs */
	PYTHON_LINES_LOCATIONS, /* 3.11+: Objects/locations.md */
};

struct python_code_layout {
	uint16_t ob_type;
	uint16_t filename;
	uint16_t name;
	uint16_t qualname; /* OFFCPU_PY_NONE before 3.11: name is used */
	uint16_t firstlineno;
	uint16_t linetable;
	uint16_t code_adaptive; /* 3.11+: the first instruction, in the code object */
	uint16_t header_size;	/* bytes of a code object read to name it */
	uint16_t bytes_size;	/* PyBytesObject: ob_size, then ob_sval */
	uint16_t bytes_data;
	uint16_t unicode_length;
	uint16_t unicode_state;
	uint16_t unicode_ascii_data;   /* compact ASCII: the characters follow the header */
	uint16_t unicode_compact_data; /* compact, not ASCII */
	enum python_line_format lines;
	/* The frame's instruction field: a pointer (3.11+), else f_lasti in bytes or units. */
	uint8_t lasti_unit_bytes; /* 3.9: 1 (bytes), 3.10: 2 (instructions) */
};

struct python_layout {
	struct offcpu_python_layout frames;
	struct python_code_layout code;
};

/* 3.9 to 3.12 by version (0x0309...0x030c); -ENOENT for any other. */
int python_layout__of_version(uint16_t version, struct python_layout *out);

/* The bytes of _Py_DebugOffsets read from the start of _PyRuntime (3.13+). */
#define PYTHON_DEBUG_OFFSETS_SIZE 1024

/*
 * The layout from the runtime's _Py_DebugOffsets (buf, size bytes at
 * _PyRuntime); -ENOENT when it has none (no cookie, or a version before
 * 3.13, or after it), -EINVAL for offsets no real runtime has. Sets out->frames.version.
 */
int python_layout__from_debug_offsets(const void *buf, size_t size, struct python_layout *out);

#endif
