// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "python/python_layout.h"

/*
 * Offsets for x86-64 builds without Py_DEBUG, as offsetof() gives them
 * over each version's own headers (Include/cpython/pystate.h,
 * Include/internal/pycore_frame.h, pycore_interp.h, pycore_runtime.h,
 * Include/cpython/code.h, unicodeobject.h) compiled with Py_BUILD_CORE:
 * checked against 3.9.18, 3.10.13, 3.11.7, 3.12.1 and Debian 12's 3.11.2.
 */
static const struct python_layout layouts[] = {
	{
		.frames = {
			.version = 0x0309,
			.code_names = 104, /* co_filename, co_name, co_lnotab */
			.code_names_words = 3,
			.runtime_interp_head = 32,
			.interp_threads_head = 8, /* tstate_head */
			.tstate_next = 8,
			.tstate_thread_id = 176, /* thread_id: pthread_self() */
			.tstate_frame = 24,	 /* PyFrameObject *frame */
			.cframe_current_frame = OFFCPU_PY_NONE,
			.frame_code = 32,
			.frame_previous = 24, /* f_back */
			.frame_instr = 104,   /* f_lasti */
			.frame_owner = OFFCPU_PY_NONE,
			.frame_is_entry = OFFCPU_PY_NONE,
			.thread_id_is_pthread = 1,
			.instr_is_int = 1,
			.frame_per_c_call = 1,
		},
		.code = {
			.ob_type = 8, .filename = 104, .name = 112, .qualname = OFFCPU_PY_NONE,
			.firstlineno = 40, .linetable = 120, /* co_lnotab */
			.code_adaptive = OFFCPU_PY_NONE, .header_size = 128,
			.bytes_size = 16, .bytes_data = 32,
			.unicode_length = 16, .unicode_state = 32,
			.unicode_ascii_data = 48, .unicode_compact_data = 72,
			.lines = PYTHON_LINES_LNOTAB, .lasti_unit_bytes = 1,
		},
	},
	{
		.frames = {
			.version = 0x030a,
			.code_names = 104, /* co_filename, co_name, co_linetable */
			.code_names_words = 3,
			.runtime_interp_head = 32,
			.interp_threads_head = 8,
			.tstate_next = 8,
			.tstate_thread_id = 176,
			.tstate_frame = 24,
			.cframe_current_frame = OFFCPU_PY_NONE,
			.frame_code = 32,
			.frame_previous = 24,
			.frame_instr = 96, /* f_lasti: in instructions since 3.10 */
			.frame_owner = OFFCPU_PY_NONE,
			.frame_is_entry = OFFCPU_PY_NONE,
			.thread_id_is_pthread = 1,
			.instr_is_int = 1,
			.frame_per_c_call = 1,
		},
		.code = {
			.ob_type = 8, .filename = 104, .name = 112, .qualname = OFFCPU_PY_NONE,
			.firstlineno = 40, .linetable = 120,
			.code_adaptive = OFFCPU_PY_NONE, .header_size = 128,
			.bytes_size = 16, .bytes_data = 32,
			.unicode_length = 16, .unicode_state = 32,
			.unicode_ascii_data = 48, .unicode_compact_data = 72,
			.lines = PYTHON_LINES_3_10, .lasti_unit_bytes = 2,
		},
	},
	{
		.frames = {
			.version = 0x030b,
			.code_names = 112, /* co_filename, co_name, co_qualname, co_linetable */
			.code_names_words = 4,
			.runtime_interp_head = 40,
			.interp_threads_head = 16,
			.tstate_next = 8,
			.tstate_thread_id = 160, /* native_thread_id */
			.tstate_frame = 56,	 /* _PyCFrame *cframe */
			.cframe_current_frame = 8,
			.frame_code = 32,
			.frame_previous = 48,
			.frame_instr = 56, /* prev_instr */
			.frame_owner = 69,
			.frame_is_entry = 68,
		},
		.code = {
			.ob_type = 8, .filename = 112, .name = 120, .qualname = 128,
			.firstlineno = 72, .linetable = 136,
			.code_adaptive = 184, .header_size = 184,
			.bytes_size = 16, .bytes_data = 32,
			.unicode_length = 16, .unicode_state = 32,
			.unicode_ascii_data = 48, .unicode_compact_data = 72,
			.lines = PYTHON_LINES_LOCATIONS,
		},
	},
	{
		.frames = {
			.version = 0x030c,
			.code_names = 112, /* co_filename, co_name, co_qualname, co_linetable */
			.code_names_words = 4,
			.runtime_interp_head = 40,
			.interp_threads_head = 72,
			.tstate_next = 8,
			.tstate_thread_id = 144,
			.tstate_frame = 56,
			.cframe_current_frame = 0,
			.frame_code = 0,
			.frame_previous = 8,
			.frame_instr = 56,
			.frame_owner = 70,
			.frame_is_entry = OFFCPU_PY_NONE, /* entry shims: FRAME_OWNED_BY_CSTACK */
		},
		.code = {
			.ob_type = 8, .filename = 112, .name = 120, .qualname = 128,
			.firstlineno = 68, .linetable = 136,
			.code_adaptive = 192, .header_size = 192,
			.bytes_size = 16, .bytes_data = 32,
			.unicode_length = 16, .unicode_state = 32,
			.unicode_ascii_data = 40, .unicode_compact_data = 56,
			.lines = PYTHON_LINES_LOCATIONS,
		},
	},
};

int python_layout__of_version(uint16_t version, struct python_layout *out)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (layouts[i].frames.version == version) {
			*out = layouts[i];
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * _Py_DebugOffsets (3.13's Include/internal/pycore_runtime.h): the cookie
 * "xdebugpy", version (PY_VERSION_HEX), free_threaded, then groups of u64
 * offsets, each group opening with the structure's size. Indexes in u64
 * words from the start.
 */
enum debug_word {
	DBG_VERSION = 1,
	DBG_FREE_THREADED = 2,
	DBG_RUNTIME_INTERPRETERS_HEAD = 3 + 2,
	DBG_INTERP_THREADS_HEAD = 6 + 3,
	DBG_TSTATE_NEXT = 19 + 2,
	DBG_TSTATE_CURRENT_FRAME = 19 + 4,
	DBG_TSTATE_NATIVE_THREAD_ID = 19 + 6,
	DBG_FRAME_PREVIOUS = 28 + 1,
	DBG_FRAME_EXECUTABLE = 28 + 2,
	DBG_FRAME_INSTR_PTR = 28 + 3,
	DBG_FRAME_OWNER = 28 + 5,
	DBG_CODE_SIZE = 34,
	DBG_CODE_FILENAME = 34 + 1,
	DBG_CODE_NAME = 34 + 2,
	DBG_CODE_QUALNAME = 34 + 3,
	DBG_CODE_LINETABLE = 34 + 4,
	DBG_CODE_FIRSTLINENO = 34 + 5,
	DBG_CODE_ADAPTIVE = 34 + 9,
	DBG_PYOBJECT_OB_TYPE = 44 + 1,
	/* type_object 46..49, tuple 50..52, list 53..55, dict 56..58, float 59..60, long 61..63 */
	DBG_BYTES_OB_SIZE = 64 + 1,
	DBG_BYTES_OB_SVAL = 64 + 2,
	DBG_UNICODE_STATE = 67 + 1,
	DBG_UNICODE_LENGTH = 67 + 2,
	DBG_UNICODE_ASCII_SIZE = 67 + 3,
	DBG_WORDS = 67 + 4,
};

static const char debug_cookie[8] = { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' };

/* An offset a real structure can have: within the 16-bit fields, below the tag. */
static int offset_of(const uint64_t *w, enum debug_word i, uint16_t *out)
{
	if (w[i] >= OFFCPU_PY_NONE)
		return -EINVAL;
	*out = (uint16_t)w[i];
	return 0;
}

int python_layout__from_debug_offsets(const void *buf, size_t size, struct python_layout *out)
{
	uint64_t w[DBG_WORDS];
	struct offcpu_python_layout *f = &out->frames;
	struct python_code_layout *c = &out->code;
	uint16_t ascii;
	int err = 0;

	if (size < sizeof(w) || memcmp(buf, debug_cookie, sizeof(debug_cookie)))
		return -ENOENT;
	memcpy(w, buf, sizeof(w));
	/*
	 * PY_VERSION_HEX: 0x030d00f0 for 3.13.0 final. 3.14 added fields
	 * inside the groups: these word indexes are 3.13's alone.
	 */
	if ((w[DBG_VERSION] >> 16) != 0x030d)
		return -ENOENT;
	/* The free-threaded build keeps other structures around these: not read. */
	if (w[DBG_FREE_THREADED])
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	f->version = (uint16_t)(w[DBG_VERSION] >> 16);
	err |= offset_of(w, DBG_RUNTIME_INTERPRETERS_HEAD, &f->runtime_interp_head);
	err |= offset_of(w, DBG_INTERP_THREADS_HEAD, &f->interp_threads_head);
	err |= offset_of(w, DBG_TSTATE_NEXT, &f->tstate_next);
	err |= offset_of(w, DBG_TSTATE_NATIVE_THREAD_ID, &f->tstate_thread_id);
	err |= offset_of(w, DBG_TSTATE_CURRENT_FRAME, &f->tstate_frame);
	f->cframe_current_frame = OFFCPU_PY_NONE;
	err |= offset_of(w, DBG_FRAME_EXECUTABLE, &f->frame_code);
	err |= offset_of(w, DBG_FRAME_PREVIOUS, &f->frame_previous);
	err |= offset_of(w, DBG_FRAME_INSTR_PTR, &f->frame_instr);
	err |= offset_of(w, DBG_FRAME_OWNER, &f->frame_owner);
	f->frame_is_entry = OFFCPU_PY_NONE;
	err |= offset_of(w, DBG_PYOBJECT_OB_TYPE, &c->ob_type);
	err |= offset_of(w, DBG_CODE_FILENAME, &c->filename);
	err |= offset_of(w, DBG_CODE_NAME, &c->name);
	err |= offset_of(w, DBG_CODE_QUALNAME, &c->qualname);
	err |= offset_of(w, DBG_CODE_FIRSTLINENO, &c->firstlineno);
	err |= offset_of(w, DBG_CODE_LINETABLE, &c->linetable);
	err |= offset_of(w, DBG_CODE_ADAPTIVE, &c->code_adaptive);
	err |= offset_of(w, DBG_BYTES_OB_SIZE, &c->bytes_size);
	err |= offset_of(w, DBG_BYTES_OB_SVAL, &c->bytes_data);
	err |= offset_of(w, DBG_UNICODE_STATE, &c->unicode_state);
	err |= offset_of(w, DBG_UNICODE_LENGTH, &c->unicode_length);
	err |= offset_of(w, DBG_UNICODE_ASCII_SIZE, &ascii);
	if (err)
		return -EINVAL;
	if (c->name == c->filename + 8 && c->qualname == c->filename + 16 &&
	    c->linetable == c->filename + 24) {
		f->code_names = c->filename;
		f->code_names_words = 4;
	} else {
		f->code_names = OFFCPU_PY_NONE;
	}
	c->header_size = c->code_adaptive;
	c->unicode_ascii_data = ascii;
	/* PyCompactUnicodeObject: utf8_length and utf8 after the ASCII header (3.12+). */
	c->unicode_compact_data = ascii + 16;
	c->lines = PYTHON_LINES_LOCATIONS;
	/* A header the size of a code object, whose fields are all inside it. */
	if (c->header_size > 1024 || c->filename + 8 > c->header_size ||
	    c->name + 8 > c->header_size || c->qualname + 8 > c->header_size ||
	    c->linetable + 8 > c->header_size || c->firstlineno + 4 > c->header_size)
		return -EINVAL;
	return 0;
}
