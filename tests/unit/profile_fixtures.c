// SPDX-License-Identifier: GPL-2.0
/* The fixture profiles and readers that the profile, recording and output tests share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "lib/inline_pool.h"
#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"
#include "trace/recording.h"

#include "profile_fixtures.h"

struct frame kframe(struct profile *p, uint64_t addr, const char *sym)
{
	struct frame f = { 0 };

	f.addr = addr;
	f.sym = strpool__intern(p->strings, sym);
	f.module = strpool__intern(p->strings, "[kernel.kallsyms]");
	f.module_off = addr; /* as the symbolizer gives kernel frames */
	f.kernel = true;
	return f;
}
struct frame uframe(struct profile *p, uint64_t addr, const char *sym)
{
	struct frame f = { 0 };

	f.addr = addr;
	f.sym = sym ? strpool__intern(p->strings, sym) : NULL;
	f.module = strpool__intern(p->strings, "/usr/bin/app");
	f.module_off = addr - 0x1000;
	return f;
}
struct profile *fixture_profile(bool keep_waits)
{
	struct profile *p;
	struct frame k_sleep[2], k_futex[2], u_main[3];
	struct wait w = { 0 };

	assert_int_equal(profile__new(keep_waits, &p), 0);
	k_sleep[0] = kframe(p, 0xffffffff81000010ULL, "do_nanosleep");
	k_sleep[1] = kframe(p, 0xffffffff81000020ULL, "__x64_sys_clock_nanosleep");
	k_futex[0] = kframe(p, 0xffffffff81000110ULL, "futex_wait_queue");
	k_futex[1] = kframe(p, 0xffffffff81000120ULL, "__x64_sys_futex");
	u_main[0] = uframe(p, 0x1100, "clock_nanosleep");
	u_main[1] = uframe(p, 0x1234, NULL);
	u_main[2] = uframe(p, 0x1300, "main");

	w.pid = 100;
	w.tid = 101;
	w.comm = strpool__intern(p->strings, "app");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.kernel_stack = profile__intern_stack(p, k_sleep, 2);
	w.user_stack = profile__intern_stack(p, u_main, 3);
	w.duration_ns = 20000000;
	w.end_ts_ns = 1000;
	w.cpu = 1;
	assert_int_equal(profile__add(p, &w), 0);
	w.duration_ns = 30000000;
	w.end_ts_ns = 2000;
	assert_int_equal(profile__add(p, &w), 0);

	w.tid = 102;
	w.title = strpool__intern(p->strings, "app --worker");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "lock:futex");
	w.kernel_stack = profile__intern_stack(p, k_futex, 2);
	w.user_stack = NULL;
	w.duration_ns = 50000000;
	w.end_ts_ns = 3000;
	assert_int_equal(profile__add(p, &w), 0);
	return p;
}
char *render_by(int (*write)(FILE *, const struct profile *, const struct output_opts *),
		const struct profile *p, enum report_group_by group_by)
{
	struct output_opts opts = { .group_by = group_by };
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	assert_non_null(out);
	assert_int_equal(write(out, p, &opts), 0);
	fclose(out);
	return buf;
}
char *render(int (*write)(FILE *, const struct profile *, const struct output_opts *),
	     const struct profile *p)
{
	return render_by(write, p, GROUP_BY_TID);
}
struct profile *read_back(const char *text, const struct recording_filter *filter, bool keep_waits)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct profile *back;

	assert_non_null(in);
	assert_int_equal(profile__new(keep_waits, &back), 0);
	assert_int_equal(recording__read(in, "fixture", filter, back), 0);
	fclose(in);
	return back;
}
struct wait a_wait(struct profile *p, const char *comm, const char *wait_class)
{
	struct wait w = { 0 };

	w.comm = strpool__intern(p->strings, comm);
	w.wait_class = strpool__intern(p->strings, wait_class);
	return w;
}
bool read_varint(const uint8_t *buf, size_t len, size_t *at, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*at < len && shift < 64) {
		uint8_t byte = buf[(*at)++];

		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return true;
		}
		shift += 7;
	}
	return false;
}
bool next_field(const uint8_t *buf, size_t len, size_t *at, struct pb_field *f)
{
	uint64_t key;

	if (*at >= len || !read_varint(buf, len, at, &key))
		return false;
	memset(f, 0, sizeof(*f));
	f->number = (uint32_t)(key >> 3);
	if ((key & 7) == 0)
		return read_varint(buf, len, at, &f->value);
	assert_int_equal(key & 7, 2);
	assert_true(read_varint(buf, len, at, &f->value) && f->value <= len - *at);
	f->data = buf + *at;
	f->len = f->value;
	f->is_bytes = true;
	*at += f->len;
	return true;
}
uint8_t *gunzip(const char *gz, size_t gz_len, size_t *out_len)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream z = { 0 };
	int ret;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	while ((ret = inflate(&z, Z_FINISH)) == Z_BUF_ERROR && !z.avail_out) {
		out = realloc(out, cap * 2);
		assert_non_null(out);
		z.next_out = out + cap;
		z.avail_out = (uInt)cap;
		cap *= 2;
	}
	assert_int_equal(ret, Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}
uint8_t *pprof_of(const struct profile *p, size_t *len)
{
	struct output_opts opts = { 0 };
	char *gz = NULL;
	size_t gz_len = 0;
	FILE *out = open_memstream(&gz, &gz_len);
	uint8_t *pb;

	assert_non_null(out);
	assert_int_equal(output_pprof__write(out, p, &opts), 0);
	fclose(out);
	pb = gunzip(gz, gz_len, len);
	free(gz);
	return pb;
}
/*
 * Not strstr in a loop: ASan's strstr measures the whole rest of the text on
 * every call, minutes on a 100,000-frame SVG; strchr stops at its match.
 */
size_t count_of(const char *text, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	for (text = strchr(text, needle[0]); text; text = strchr(text + 1, needle[0]))
		if (!strncmp(text, needle, len))
			n++;
	return n;
}
struct profile *full_profile(bool keep_waits)
{
	struct profile *p = fixture_profile(keep_waits);
	const char *lib = strpool__intern(p->strings, "/usr/lib/libcxx.so.1");
	const char *app = strpool__intern(p->strings, "/usr/bin/app");
	struct frame k[2], u[3];
	struct wait w = { 0 };
	uint32_t pid;

	k[0] = kframe(p, 0xffffffffc0001234ULL, "nvme_poll");
	k[0].module = strpool__intern(p->strings, "[nvme]");
	k[1] = kframe(p, 0xffffffff81000120ULL, "__x64_sys_futex");
	w.comm = strpool__intern(p->strings, "cxx");
	w.state = OFFCPU_STATE_UNINTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, "lock:mutex");
	w.kernel_stack = profile__intern_stack(p, k, 2);
	for (pid = 200; pid < 202; pid++) {
		uint64_t base = pid == 200 ? 0x7f0000000000ULL : 0x7f1000000000ULL;

		u[0] = uframe(p, base + 0x9100, "std::mutex::lock()");
		u[0].module = lib;
		u[0].module_off = 0x9100;
		u[0].system_name = strpool__intern(p->strings, "_ZNSt5mutex4lockEv");
		u[0].build_id =
		    strpool__intern(p->strings, "0123456789abcdef0123456789abcdef01234567");
		u[0].file = strpool__intern(p->strings, "mutex.h");
		u[0].line = 42;
		u[0].inlined = inline_pool__intern(
		    p->inlines, strpool__intern(p->strings, "lock_inner"),
		    strpool__intern(p->strings, "inner.h"), 7,
		    inline_pool__intern(p->inlines, strpool__intern(p->strings, "lock_outer"), NULL,
					0, NULL));
		u[1] = uframe(p, base + 0x55abcd, NULL);
		u[1].module = app;
		u[1].module_off = 0x1bcd;
		u[1].build_id =
		    strpool__intern(p->strings, "fedcba9876543210fedcba9876543210fedcba98");
		u[2] = uframe(p, base + 0x55ab00, "main");
		u[2].module = app;
		u[2].module_off = 0x1b00;
		u[2].build_id = u[1].build_id;
		w.pid = w.tid = pid;
		w.user_stack = profile__intern_stack(p, u, 3);
		w.duration_ns = 7000000 + pid;
		w.end_ts_ns = 4000 + pid;
		assert_int_equal(profile__add(p, &w), 0);
	}
	p->start_time_ns = 1700000000123456789ULL;
	p->duration_ns = 5000000000ULL;
	p->counters[OFFCPU_CNT_SWITCHES] = 42;
	p->counters[OFFCPU_CNT_SYMBOL_MISS] = 3;
	return p;
}
struct profile *hostile_profile(bool keep_waits)
{
	struct profile *p;
	struct frame k, u;
	struct wait w = { 0 };

	assert_int_equal(profile__new(keep_waits, &p), 0);
	k = kframe(p, 0xffffffff81000010ULL, "do_nanosleep");
	u = uframe(p, 0x1100, HOSTILE_SYM);
	u.file = strpool__intern(p->strings, "/src/\x1b[2Jx.c");
	u.line = 3;
	w.pid = w.tid = 66;
	w.comm = strpool__intern(p->strings, HOSTILE_COMM);
	w.title = strpool__intern(p->strings, HOSTILE_TITLE);
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, HOSTILE_CLASS);
	w.kernel_stack = profile__intern_stack(p, &k, 1);
	w.user_stack = profile__intern_stack(p, &u, 1);
	w.duration_ns = 20000000;
	w.end_ts_ns = 30000000;
	assert_int_equal(profile__add(p, &w), 0);

	u = uframe(p, 0x2200, NULL);
	u.module = strpool__intern(p->strings, HOSTILE_MODULE);
	u.inlined = inline_pool__intern(p->inlines, strpool__intern(p->strings, "in\xc2\x9b\x01 x"),
					NULL, 0, NULL);
	w.tid = 67;
	w.comm = strpool__intern(p->strings, HOSTILE_COMM2);
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.user_stack = profile__intern_stack(p, &u, 1);
	w.duration_ns = 10000000;
	assert_int_equal(profile__add(p, &w), 0);
	p->start_time_ns = 1700000000000000000ULL;
	p->duration_ns = 1000000000ULL;
	return p;
}
bool well_formed_utf8(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n, k;

	while (i < len) {
		unsigned char b = s[i], lo = 0x80, hi = 0xbf;

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf)
			n = 1;
		else if (b >= 0xe0 && b <= 0xef)
			n = 2, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
		else if (b >= 0xf0 && b <= 0xf4)
			n = 3, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
		else
			return false;
		if (i + n >= len || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (k = 2; k <= n; k++) {
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		}
		i += n + 1;
	}
	return true;
}
void assert_no_terminal_controls(const char *text, size_t len)
{
	size_t i;

	assert_true(well_formed_utf8(text, len));
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if ((c < 0x20 && c != '\n') || c == 0x7f ||
		    (c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] < 0xa0))
			fail_msg("control byte 0x%02x at offset %zu", c, i);
	}
}
