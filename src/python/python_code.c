// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_code.h"
#include "python/python_lines.h"

static uint64_t u64_at(const uint8_t *buf, uint16_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static int32_t i32_at(const uint8_t *buf, uint16_t off)
{
	int32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* A code object's header, which holds every field named here. */
#define HEADER_MAX 1024

/*
 * ob_refcnt, first in PyObject_HEAD in every build read here (not
 * Py_TRACE_REFS, not free-threaded). A live object's count is at least 1
 * and at most 3.12's immortal UINT_MAX; pymalloc's free writes the pool's
 * next free block (a pointer, or NULL) over it, and leaves the rest of a
 * freed code object as it was: its type and the pointers to its name, file
 * and line table, which may be freed and reused too (a process's churn
 * test named gen_10 at line 0: its line table was someone else's bytes).
 */
#define OB_REFCNT 0
#define REFCNT_MAX UINT32_MAX

int python_code__id(const struct python_code_layout *l, const struct python_memory *m,
		    uint64_t addr, uint64_t code_type, struct python_code_id *out)
{
	uint8_t buf[HEADER_MAX];
	uint64_t refcnt;

	if (!addr || l->header_size > sizeof(buf) || m->read(m->ctx, addr, buf, l->header_size))
		return -EFAULT;
	out->type = u64_at(buf, l->ob_type);
	if (code_type && out->type != code_type)
		return -EINVAL;
	refcnt = u64_at(buf, OB_REFCNT);
	if (!refcnt || refcnt > REFCNT_MAX)
		return -ESTALE;
	out->filename = u64_at(buf, l->filename);
	out->name = u64_at(buf, l->name);
	out->qualname = l->qualname == OFFCPU_PY_NONE ? out->name : u64_at(buf, l->qualname);
	out->linetable = u64_at(buf, l->linetable);
	out->firstlineno = i32_at(buf, l->firstlineno);
	return 0;
}

bool python_code__same(const struct python_code_id *a, const struct python_code_id *b)
{
	return a->type == b->type && a->filename == b->filename && a->name == b->name &&
	       a->qualname == b->qualname && a->linetable == b->linetable &&
	       a->firstlineno == b->firstlineno;
}

/* One code point as UTF-8 into out (4 bytes at most); its length. */
static size_t utf8_put(uint32_t cp, char *out)
{
	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 0xfffd; /* a lone surrogate (str allows them): no UTF-8 character */
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 63));
		out[2] = (char)(0x80 | (cp & 63));
		return 3;
	}
	if (cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x10000)
		return utf8_put(cp, out);
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 63));
	out[2] = (char)(0x80 | ((cp >> 6) & 63));
	out[3] = (char)(0x80 | (cp & 63));
	return 4;
}

/*
 * PyASCIIObject's state bitfield (Include/cpython/unicodeobject.h, the
 * same bits 3.9 to 3.13): interned 2 bits, kind 3, compact 1, ascii 1.
 */
#define STATE_KIND(s) (((s) >> 2) & 7)
#define STATE_COMPACT(s) (((s) >> 5) & 1)
#define STATE_ASCII(s) (((s) >> 6) & 1)

int python_code__string(const struct python_code_layout *l, const struct python_memory *m,
			uint64_t addr, char **out)
{
	uint64_t length;
	uint32_t state, kind;
	uint8_t *raw;
	char *s;
	size_t i, n = 0;

	if (!addr || m->read(m->ctx, addr + l->unicode_length, &length, sizeof(length)) ||
	    m->read(m->ctx, addr + l->unicode_state, &state, sizeof(state)))
		return -EFAULT;
	kind = STATE_KIND(state);
	if (!STATE_COMPACT(state) || (kind != 1 && kind != 2 && kind != 4) ||
	    (STATE_ASCII(state) && kind != 1) || length > (1ULL << 40))
		return -EINVAL;
	if (length > PYTHON_NAME_MAX)
		length = PYTHON_NAME_MAX;
	raw = malloc(length * kind + 1);
	s = malloc(length * 4 + 1);
	if (!raw || !s) {
		free(raw);
		free(s);
		return -ENOMEM;
	}
	if (m->read(m->ctx,
		    addr + (STATE_ASCII(state) ? l->unicode_ascii_data : l->unicode_compact_data),
		    raw, length * kind)) {
		free(raw);
		free(s);
		return -EFAULT;
	}
	for (i = 0; i < length; i++) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, sizeof(v));
			cp = v;
		} else {
			memcpy(&cp, raw + 4 * i, sizeof(cp));
		}
		/* A name with a NUL would end early: shown as U+FFFD instead. */
		n += utf8_put(cp ? cp : 0xfffd, s + n);
	}
	s[n] = '\0';
	free(raw);
	*out = s;
	return 0;
}

static int read_bytes(const struct python_code_layout *l, const struct python_memory *m,
		      uint64_t addr, uint8_t **out, size_t *size)
{
	int64_t n;
	uint8_t *data;

	if (!addr || m->read(m->ctx, addr + l->bytes_size, &n, sizeof(n)))
		return -EFAULT;
	if (n < 0 || n > PYTHON_LINES_MAX)
		return -EINVAL;
	data = malloc(n ? (size_t)n : 1);
	if (!data)
		return -ENOMEM;
	if (n && m->read(m->ctx, addr + l->bytes_data, data, (size_t)n)) {
		free(data);
		return -EFAULT;
	}
	*out = data;
	*size = (size_t)n;
	return 0;
}

int python_code__read(const struct python_code_layout *l, const struct python_memory *m,
		      uint64_t addr, uint64_t code_type, struct python_code *out)
{
	struct python_code_id again;
	int err;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	err = python_code__id(l, m, addr, code_type, &out->id);
	if (!err)
		err = python_code__string(l, m, out->id.qualname, &out->qualname);
	if (!err)
		err = python_code__string(l, m, out->id.filename, &out->filename);
	if (!err)
		err = read_bytes(l, m, out->id.linetable, &out->lines, &out->lines_size);
	/*
	 * Still alive and the same once its parts are read: what they said was
	 * its own, not what was made of them after a free during these reads.
	 */
	if (!err)
		err = python_code__id(l, m, addr, code_type, &again);
	if (!err && !python_code__same(&again, &out->id))
		err = -ESTALE;
	if (err) {
		python_code__clear(out);
		return err;
	}
	out->firstlineno = out->id.firstlineno;
	return 0;
}

uint32_t python_code__offset(const struct python_code *c, const struct python_layout *l,
			     uint64_t instr)
{
	uint64_t start;

	if (l->frames.instr_is_int) {
		/* f_lasti is -1 before the first instruction. */
		if ((int32_t)instr < 0)
			return 0;
		return (uint32_t)instr * (l->code.lasti_unit_bytes ? l->code.lasti_unit_bytes : 1);
	}
	/* _PyInterpreterFrame_LASTI: the instruction pointer less _PyCode_CODE(code). */
	start = c->addr + l->code.code_adaptive;
	if (instr < start || instr - start > UINT32_MAX)
		return 0;
	return (uint32_t)(instr - start);
}

uint32_t python_code__line(const struct python_code *c, const struct python_layout *l,
			   uint64_t instr)
{
	return python_lines__line(l->code.lines, c->lines, c->lines_size, c->firstlineno,
				  python_code__offset(c, l, instr));
}

void python_code__clear(struct python_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->lines);
	c->qualname = NULL;
	c->filename = NULL;
	c->lines = NULL;
}
