/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unit tests of the profile, the recording and the output
 * back-ends share: the fixture profiles they write and read, the writers
 * run into memory, and readers of what the outputs wrote (protobuf, gzip,
 * UTF-8).
 */
#ifndef OFFCPU_TESTS_UNIT_PROFILE_FIXTURES_H
#define OFFCPU_TESTS_UNIT_PROFILE_FIXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/output.h"
#include "profile/profile.h"
#include "trace/recording.h"

/* A kernel frame and one of /usr/bin/app (sym may be NULL), as the symbolizer gives them. */
struct frame kframe(struct profile *p, uint64_t addr, const char *sym);
struct frame uframe(struct profile *p, uint64_t addr, const char *sym);

/* Two threads of "app": a sleeper (2 waits) and a futex waiter (1 wait). */
struct profile *fixture_profile(bool keep_waits);

/*
 * Beside the fixture, what else a frame can carry: a kernel module, a
 * demangled symbol, a build ID, source lines and inlined functions, and
 * one code path in two processes at other addresses (ASLR).
 */
struct profile *full_profile(bool keep_waits);

/*
 * Names as hostile as any user can make them: a thread's name
 * (prctl(PR_SET_NAME)), a process title (argv), a binary's symbols, paths
 * and source files, and a recording's wait classes. Terminal commands
 * (retitle, clear), CR, the folded separators, markup, bytes that are not
 * UTF-8 (a surrogate, a cut sequence), U+FFFE, U+FFFF, U+2028, C1 and DEL.
 */
#define HOSTILE_COMM "\x1b]0;PWN\x07\x1b[2J"
#define HOSTILE_TITLE "t\r;\"'<>& \x7f\xc2\x9b\xff\xfe\xed\xa0\x80\xef\xbf\xbf\xe2\x80\xa8"
#define HOSTILE_CLASS "lock:x\x1b[31m;y z\n1 2\xe2\x80\xa9"
#define HOSTILE_SYM "f\x1b[2J<&>;\x9b"
#define HOSTILE_MODULE "/tmp/d\xff/l\xfe b\x07.so"
#define HOSTILE_COMM2 "\xef\xbf\xbe\xe2\x82"
#define REPLACEMENT "\xef\xbf\xbd"

struct profile *hostile_profile(bool keep_waits);

/* A wait of comm in wait_class, for the test to fill in. */
struct wait a_wait(struct profile *p, const char *comm, const char *wait_class);

/* What a writer writes of p, grouped by group_by (render: by thread); the caller frees it. */
char *render_by(int (*write)(FILE *, const struct profile *, const struct output_opts *),
		const struct profile *p, enum report_group_by group_by);
char *render(int (*write)(FILE *, const struct profile *, const struct output_opts *),
	     const struct profile *p);

/* The profile recording__read makes of a json recording. */
struct profile *read_back(const char *text, const struct recording_filter *filter, bool keep_waits);

/* A reader of the protobuf wire format, to check the profiles written. */
struct pb_field {
	uint32_t number;
	uint64_t value; /* varint */
	const uint8_t *data;
	size_t len; /* length-delimited */
	bool is_bytes;
};

bool read_varint(const uint8_t *buf, size_t len, size_t *at, uint64_t *out);
bool next_field(const uint8_t *buf, size_t len, size_t *at, struct pb_field *f);
uint8_t *gunzip(const char *gz, size_t gz_len, size_t *out_len);

/* The pprof profile of p, unzipped; the caller frees it. */
uint8_t *pprof_of(const struct profile *p, size_t *len);

/* How often needle is in text. */
size_t count_of(const char *text, const char *needle);

/* Unicode's table of well-formed UTF-8 (3-7), written apart from lib/utf8.c. */
bool well_formed_utf8(const char *text, size_t len);

/* Nothing a terminal takes for a command: C0 but newline, DEL, C1 (UTF-8 C2 80..9F). */
void assert_no_terminal_controls(const char *text, size_t len);

#endif
