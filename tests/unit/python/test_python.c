// SPDX-License-Identifier: GPL-2.0
/*
 * Naming Python frames: code objects read from memory images built for
 * each version's layout, a code object freed and another allocated at its
 * address, one freed before its record was read, and a process never found
 * running CPython.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/strpool.h"
#include "python/python.h"
#include "python/python_code.h"
#include "python/python_layout.h"

#include "python_fixtures.h"

/* --- memory images -------------------------------------------------------------------------- */

#define IMAGE_BASE 0x7f0000000000ULL
#define IMAGE_SIZE 65536

struct image {
	uint8_t bytes[IMAGE_SIZE];
	size_t used;
	unsigned int reads;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;

	im->reads++;
	if (addr < IMAGE_BASE || addr - IMAGE_BASE > IMAGE_SIZE || len > IMAGE_SIZE ||
	    addr - IMAGE_BASE + len > IMAGE_SIZE)
		return -EFAULT;
	memcpy(buf, im->bytes + (addr - IMAGE_BASE), len);
	return 0;
}

static uint64_t image_alloc(struct image *im, size_t size)
{
	uint64_t addr = IMAGE_BASE + im->used;

	im->used += (size + 15) & ~15UL;
	assert_true(im->used <= IMAGE_SIZE);
	return addr;
}

static void put(struct image *im, uint64_t addr, const void *data, size_t len)
{
	memcpy(im->bytes + (addr - IMAGE_BASE), data, len);
}

static void put_u64(struct image *im, uint64_t addr, uint64_t v)
{
	put(im, addr, &v, sizeof(v));
}

/* A compact str of code points of kind 1, 2 or 4, ASCII where they all are. */
static uint64_t put_str(struct image *im, const struct python_code_layout *l, const uint32_t *cps,
			size_t n)
{
	uint32_t kind = 1, state, i;
	bool ascii = true;
	uint64_t addr, data;

	for (i = 0; i < n; i++) {
		if (cps[i] > 0x7f)
			ascii = false;
		if (cps[i] > 0xff && kind < 2)
			kind = 2;
		if (cps[i] > 0xffff)
			kind = 4;
	}
	addr = image_alloc(im, l->unicode_compact_data + (n + 1) * kind);
	put_u64(im, addr + l->unicode_length, n);
	state = (kind << 2) | (1 << 5) | (ascii ? 1 << 6 : 0);
	put(im, addr + l->unicode_state, &state, sizeof(state));
	data = addr + (ascii ? l->unicode_ascii_data : l->unicode_compact_data);
	for (i = 0; i < n; i++) {
		uint8_t b = (uint8_t)cps[i];
		uint16_t h = (uint16_t)cps[i];

		if (kind == 1)
			put(im, data + i, &b, 1);
		else if (kind == 2)
			put(im, data + 2 * i, &h, 2);
		else
			put(im, data + 4 * i, &cps[i], 4);
	}
	return addr;
}

static uint64_t put_ascii(struct image *im, const struct python_code_layout *l, const char *s)
{
	uint32_t cps[256];
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		cps[i] = (unsigned char)s[i];
	return put_str(im, l, cps, n);
}

static uint64_t put_bytes(struct image *im, const struct python_code_layout *l, const uint8_t *data,
			  size_t n)
{
	uint64_t addr = image_alloc(im, l->bytes_data + n + 1);

	put_u64(im, addr + l->bytes_size, n);
	put(im, addr + l->bytes_data, data, n);
	return addr;
}

#define CODE_TYPE 0x55aa0000ULL

/*
 * Line 88 for the first three instructions, 89 for the fourth, in the
 * version's own format.
 */
static uint64_t put_lines(struct image *im, const struct python_layout *l)
{
	static const uint8_t lnotab[] = { 0, 8, 6, 1 };
	static const uint8_t table_3_10[] = { 6, 8, 2, 1 };
	/* 13: no columns, line +8 (svarint 16), 3 units; 11: one line, +1, 1 unit. */
	static const uint8_t locations[] = { 0x80 | (13 << 3) | 2, 16, 0x80 | (11 << 3), 4, 9 };

	switch (l->code.lines) {
	case PYTHON_LINES_LNOTAB:
		return put_bytes(im, &l->code, lnotab, sizeof(lnotab));
	case PYTHON_LINES_3_10:
		return put_bytes(im, &l->code, table_3_10, sizeof(table_3_10));
	default:
		return put_bytes(im, &l->code, locations, sizeof(locations));
	}
}

struct code_ptrs {
	uint64_t addr, filename, name, qualname, linetable;
};

static struct code_ptrs put_code(struct image *im, const struct python_layout *l, uint64_t filename,
				 uint64_t name, uint64_t qualname, uint64_t linetable,
				 int32_t firstlineno)
{
	struct code_ptrs c = { 0 };
	uint16_t size = l->code.code_adaptive == OFFCPU_PY_NONE ? l->code.header_size
								: l->code.code_adaptive + 16;

	c.addr = image_alloc(im, size);
	c.filename = filename;
	c.name = name;
	c.qualname = l->code.qualname == OFFCPU_PY_NONE ? name : qualname;
	c.linetable = linetable;
	put_u64(im, c.addr, 1); /* ob_refcnt: alive */
	put_u64(im, c.addr + l->code.ob_type, CODE_TYPE);
	put_u64(im, c.addr + l->code.filename, filename);
	put_u64(im, c.addr + l->code.name, name);
	if (l->code.qualname != OFFCPU_PY_NONE)
		put_u64(im, c.addr + l->code.qualname, qualname);
	put_u64(im, c.addr + l->code.linetable, linetable);
	put(im, c.addr + l->code.firstlineno, &firstlineno, sizeof(firstlineno));
	return c;
}

/* What the BPF walk would send as its identity. */
static uint64_t names_of(const struct python_layout *l, const struct code_ptrs *c)
{
	if (l->frames.code_names_words == 4)
		return offcpu_python_names(c->filename, c->name, c->qualname, c->linetable);
	return offcpu_python_names(c->filename, c->name, c->linetable, 0);
}

/* The frame's instruction field for the fourth instruction (byte offset 6). */
static uint64_t instr_of(const struct python_layout *l, const struct code_ptrs *c)
{
	if (!l->frames.instr_is_int)
		return c->addr + l->code.code_adaptive + 6;
	return 6 / l->code.lasti_unit_bytes;
}

static void layout_for(int minor, struct python_layout *l)
{
	uint8_t buf[PYTHON_DEBUG_OFFSETS_SIZE] = { 0 };

	if (minor < 13) {
		assert_int_equal(python_layout__of_version((uint16_t)(0x0300 | minor), l), 0);
		return;
	}
	read_debug_offsets(buf, sizeof(buf));
	assert_int_equal(python_layout__from_debug_offsets(buf, sizeof(buf), l), 0);
}

/* Each version's layout: qualified name (3.11+; the name before), file, line, non-ASCII. */
static void code_objects_in_each_layout(void **state)
{
	static const uint32_t greek[] = { 'n', 0xe9, 'e', '_', 0x3bb }; /* "née_λ": kind 2 */
	static const uint32_t emoji[] = { 'x', 0x1f40d };		/* kind 4 */
	int minor;

	(void)state;
	for (minor = 9; minor <= 13; minor++) {
		struct image *im = calloc(1, sizeof(*im));
		struct strpool *strings = strpool__new();
		struct python_memory mem = { image_read, im };
		struct offcpu_python_record r = { 0 };
		struct frame frames[4];
		struct python_layout l;
		struct python *py;
		struct code_ptrs a, b, c;
		uint64_t unnamed = 0, file;

		assert_non_null(im);
		layout_for(minor, &l);
		file = put_ascii(im, &l.code, "/srv/app/db.py");
		a = put_code(im, &l, file, put_ascii(im, &l.code, "fetch_rows"),
			     put_ascii(im, &l.code, "Repo.fetch_rows"), put_lines(im, &l), 80);
		b = put_code(im, &l, file, put_str(im, &l.code, greek, 5),
			     put_str(im, &l.code, greek, 5), put_lines(im, &l), 100);
		c = put_code(im, &l, put_str(im, &l.code, emoji, 2), put_str(im, &l.code, emoji, 2),
			     put_str(im, &l.code, emoji, 2), put_lines(im, &l), 0);
		assert_int_equal(python__new(strings, NULL, &py), 0);
		assert_int_equal(python__add_process(py, 42, &l, CODE_TYPE, &mem), 0);
		r.type = OFFCPU_RECORD_PYTHON;
		r.pid = 42;
		r.frames = 3;
		r.frame[0] =
		    (struct offcpu_python_frame){ a.addr, instr_of(&l, &a), names_of(&l, &a) };
		r.frame[1] =
		    (struct offcpu_python_frame){ b.addr, instr_of(&l, &b), names_of(&l, &b) };
		r.frame[2] =
		    (struct offcpu_python_frame){ c.addr, instr_of(&l, &c), names_of(&l, &c) };
		assert_int_equal(python__name(py, &r, frames, 4, &unnamed), 3);
		if (unnamed)
			fail_msg("3.%d: %u frames unnamed (%s %s %s)", minor, (unsigned int)unnamed,
				 frames[0].sym, frames[1].sym, frames[2].sym);
		assert_string_equal(frames[0].kind, PYTHON_FRAME_KIND);
		assert_string_equal(frames[0].sym, minor >= 11 ? "Repo.fetch_rows" : "fetch_rows");
		assert_string_equal(frames[0].file, "/srv/app/db.py");
		assert_int_equal(frames[0].line, 89);
		assert_int_equal(frames[0].off, 6);
		assert_int_equal(frames[0].addr, a.addr);
		assert_null(frames[0].module);
		assert_string_equal(frames[1].sym, "n\xc3\xa9"
						   "e_\xce\xbb");
		assert_int_equal(frames[1].line, 109);
		assert_string_equal(frames[2].sym, "x\xf0\x9f\x90\x8d");
		assert_string_equal(frames[2].file, "x\xf0\x9f\x90\x8d");
		/* Seen before, with the same identity: named from the cache, nothing read. */
		im->reads = 0;
		assert_int_equal(python__name(py, &r, frames, 4, &unnamed), 3);
		if (im->reads)
			fail_msg("3.%d: %u reads for code objects seen before", minor, im->reads);
		assert_int_equal(frames[1].line, 109);
		python__free(py);
		strpool__free(strings);
		free(im);
	}
}

/*
 * A code object freed and another allocated at its address: a record of
 * the new one names the new one; a record the walk made of the old one,
 * read after the new one took its place, is not named at all.
 */
static void code_object_freed_and_reused(void **state)
{
	struct image *im = calloc(1, sizeof(*im));
	struct strpool *strings = strpool__new();
	struct python_memory mem = { image_read, im };
	struct offcpu_python_record r = { 0 };
	struct python_layout l;
	struct frame f;
	struct python *py;
	struct code_ptrs old, now;
	uint64_t unnamed = 0, file, lines, name;
	size_t end;

	(void)state;
	assert_non_null(im);
	layout_for(11, &l);
	file = put_ascii(im, &l.code, "/srv/app/gen.py");
	lines = put_lines(im, &l);
	old = put_code(im, &l, file, put_ascii(im, &l.code, "gen_0"),
		       put_ascii(im, &l.code, "gen_0"), lines, 10);
	assert_int_equal(python__new(strings, NULL, &py), 0);
	assert_int_equal(python__add_process(py, 7, &l, CODE_TYPE, &mem), 0);
	r.pid = 7;
	r.frames = 1;
	r.frame[0] =
	    (struct offcpu_python_frame){ old.addr, instr_of(&l, &old), names_of(&l, &old) };
	assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
	assert_string_equal(f.sym, "gen_0");
	assert_int_equal(f.line, 19);

	/* Freed; gen_1 allocated where gen_0 was, its own strings and line table. */
	name = put_ascii(im, &l.code, "gen_1");
	lines = put_lines(im, &l);
	end = im->used;
	im->used = old.addr - IMAGE_BASE;
	now = put_code(im, &l, file, name, name, lines, 20);
	im->used = end;
	assert_int_equal(now.addr, old.addr);
	r.frame[0] =
	    (struct offcpu_python_frame){ now.addr, instr_of(&l, &now), names_of(&l, &now) };
	assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
	assert_string_equal(f.sym, "gen_1");
	assert_int_equal(f.line, 29);
	assert_int_equal(unnamed, 0);

	/* The walk saw gen_0, which was gone by the time its record was read. */
	r.frame[0].names = names_of(&l, &old);
	assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
	assert_null(f.sym);
	assert_null(f.file);
	assert_string_equal(f.kind, PYTHON_FRAME_KIND);
	assert_int_equal(unnamed, 1);

	/* Something else than a code object there now: not named either. */
	put_u64(im, now.addr + l.code.ob_type, 0x1234);
	r.frame[0].names = names_of(&l, &now) ^ 1;
	assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
	assert_null(f.sym);
	assert_int_equal(unnamed, 2);

	/* The process gone: what was named stays named. */
	r.frame[0].names = names_of(&l, &now);
	python__free(py);
	strpool__free(strings);
	free(im);
}

/*
 * test_python.py's churn test named gen_10 at line 0: the code object was
 * freed after its wait and before its record was read, its header left as
 * it was (pymalloc writes its free list over ob_refcnt alone), its line
 * table freed and reused by other bytes. A freed object is never named,
 * whatever its header still says.
 */
static void code_object_freed_before_its_read(void **state)
{
	static const uint8_t other[] = { 0x01, 0x02, 0x03, 0x04, 0x05 };
	struct image *im = calloc(1, sizeof(*im));
	struct strpool *strings = strpool__new();
	struct python_memory mem = { image_read, im };
	struct offcpu_python_record r = { 0 };
	struct python_layout l;
	struct python_code code;
	struct frame f;
	struct python *py;
	struct code_ptrs gen;
	uint64_t unnamed = 0, name, lines, pool;
	size_t end;
	int minor;

	(void)state;
	assert_non_null(im);
	for (minor = 9; minor <= 13; minor++) {
		memset(im, 0, sizeof(*im));
		unnamed = 0;
		layout_for(minor, &l);
		name = put_ascii(im, &l.code, "gen_10");
		lines = put_lines(im, &l);
		gen =
		    put_code(im, &l, put_ascii(im, &l.code, "generated.py"), name, name, lines, 12);
		pool = gen.addr + 4096;
		/* Freed: ob_refcnt is the next free block of its pool, then NULL. */
		put_u64(im, gen.addr, pool);
		assert_int_equal(python_code__read(&l.code, &mem, gen.addr, CODE_TYPE, &code),
				 -ESTALE);
		put_u64(im, gen.addr, 0);
		assert_int_equal(python_code__read(&l.code, &mem, gen.addr, CODE_TYPE, &code),
				 -ESTALE);
		/* Its line table's bytes reused by other bytes of its size. */
		end = im->used;
		im->used = lines - IMAGE_BASE;
		assert_int_equal(put_bytes(im, &l.code, other, sizeof(other)), lines);
		im->used = end;
		assert_int_equal(python__new(strings, NULL, &py), 0);
		assert_int_equal(python__add_process(py, 7, &l, CODE_TYPE, &mem), 0);
		r.pid = 7;
		r.frames = 1;
		r.frame[0] = (struct offcpu_python_frame){ gen.addr, instr_of(&l, &gen),
							   names_of(&l, &gen) };
		assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
		assert_null(f.sym);
		assert_null(f.file);
		assert_int_equal(f.line, 0);
		assert_int_equal(unnamed, 1);

		/*
		 * Alive (a test of the line alone), with a table that gives its
		 * instruction no line: not line 0 of gen_10, unnamed too. (3.9's
		 * lnotab gives every instruction a line.)
		 */
		put_u64(im, gen.addr, 1);
		assert_int_equal(python__name(py, &r, &f, 1, &unnamed), 1);
		if (minor >= 10) {
			assert_null(f.sym);
			assert_int_equal(f.line, 0);
			assert_int_equal(unnamed, 2);
		}
		python__free(py);
	}
	strpool__free(strings);
	free(im);
}

/* A record of a process never found running CPython: its frames unnamed, counted. */
static void frames_of_an_unknown_process_are_counted(void **state)
{
	struct strpool *strings = strpool__new();
	struct offcpu_python_record r = { 0 };
	struct frame f[2];
	struct python *py;
	uint64_t unnamed = 0;

	(void)state;
	assert_int_equal(python__new(strings, NULL, &py), 0);
	r.pid = 99;
	r.frames = 2;
	r.frame[0].code = 0x1000;
	r.frame[1].code = 0x2000;
	assert_int_equal(python__name(py, &r, f, 2, &unnamed), 2);
	assert_int_equal(unnamed, 2);
	assert_null(f[0].sym);
	assert_int_equal(f[1].addr, 0x2000);
	/* Never more than the record holds, nor than the room given. */
	r.frames = 1000;
	assert_int_equal(python__name(py, &r, f, 2, &unnamed), 2);
	python__free(py);
	strpool__free(strings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(code_objects_in_each_layout),
		cmocka_unit_test(code_object_freed_and_reused),
		cmocka_unit_test(code_object_freed_before_its_read),
		cmocka_unit_test(frames_of_an_unknown_process_are_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
