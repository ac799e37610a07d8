// SPDX-License-Identifier: GPL-2.0
/* The collector on hand-made ring buffer records: malformed ones are said, once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/array.h"
#include "offcpu.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"
#include "trace/collector.h"

struct fixture {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct rule_set rules;
	struct collector *collector;
};

static void start(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(profile__new(false, &f->profile), 0);
	assert_int_equal(
	    symbolizer__new(f->profile->strings, f->profile->inlines, NULL, &f->symbolizer), 0);
	assert_int_equal(collector__new(f->profile, f->symbolizer, &f->rules, 0, &f->collector), 0);
}

static void finish(struct fixture *f)
{
	collector__free(f->collector);
	symbolizer__free(f->symbolizer);
	profile__free(f->profile);
}

/* What the collector says on stderr while it reads one record. */
struct said {
	int result;
	char text[512];
};

/*
 * The record is copied to a buffer of exactly size bytes, so that under
 * ASan a read past its end is a failure, not a read of the next record.
 */
static struct said record(struct fixture *f, const void *data, size_t size)
{
	int fd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(2);
	void *exact = malloc(size ? size : 1);
	struct said said = { 0 };
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0 && exact);
	memcpy(exact, data, size);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	said.result = collector__record(f->collector, exact, size);
	fflush(stderr);
	assert_true(dup2(saved, 2) == 2);
	n = pread(fd, said.text, sizeof(said.text) - 1, 0);
	assert_true(n >= 0);
	said.text[n] = '\0';
	close(saved);
	close(fd);
	free(exact);
	return said;
}

static struct offcpu_wait_record wait_of(uint8_t kernel_frames, uint8_t user_frames)
{
	struct offcpu_wait_record r;

	memset(&r, 0, sizeof(r));
	r.type = OFFCPU_RECORD_WAIT;
	r.pid = 4242;
	r.tid = 4242;
	r.duration_ns = 1000000;
	r.end_ts_ns = 5000000;
	r.user_stack = OFFCPU_USTACK_NONE;
	r.kernel_frames = kernel_frames;
	r.user_frames = user_frames;
	memcpy(r.comm, "fixture", 8);
	return r;
}

/* Each kind of malformed record: its type, size and what is wrong, in one line. */
static void malformed_records_say_type_and_size(void **state)
{
	struct offcpu_wait_record header = wait_of(0, 0), three_frames = wait_of(3, 0);
	struct offcpu_wait_record too_deep = wait_of(OFFCPU_MAX_STACK_DEPTH + 1, 0);
	struct offcpu_task_record exit = { .type = OFFCPU_RECORD_EXIT, .pid = 1 };
	struct offcpu_task_record unknown = { .type = 9 };
	const uint32_t wait_type = OFFCPU_RECORD_WAIT;
	const struct {
		const void *data;
		size_t size;
		const char *said; /* after "malformed ring buffer record: ", of size */
	} cases[] = {
		{ &unknown, sizeof(unknown), "type 9, %zu bytes: unknown type" },
		{ &wait_type, 2, "%zu bytes: shorter than its type" },
		{ &wait_type, sizeof(wait_type),
		  "type 1, %zu bytes: shorter than a wait's header" },
		{ &header, OFFCPU_WAIT_HEADER_SIZE - 1,
		  "type 1, %zu bytes: shorter than a wait's header" },
		{ &three_frames, OFFCPU_WAIT_HEADER_SIZE + 2 * sizeof(__u64),
		  "type 1, %zu bytes: shorter than its frames" },
		{ &too_deep, sizeof(too_deep),
		  "type 1, %zu bytes: more frames than a stack holds" },
		{ &exit, 8, "type 4, %zu bytes: shorter than a process record" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char expected[256], format[160];
		struct fixture f;
		struct said said;

		start(&f);
		said = record(&f, cases[i].data, cases[i].size);
		snprintf(format, sizeof(format), "offcpu: malformed ring buffer record: %s\n",
			 cases[i].said);
		snprintf(expected, sizeof(expected), format, cases[i].size);
		assert_int_equal(said.result, -EINVAL);
		assert_string_equal(said.text, expected);
		assert_int_equal(f.profile->total_count, 0);
		finish(&f);
	}
}

/* The reading stops at the first; should it go on, the next ones are not said again. */
static void malformed_record_said_once(void **state)
{
	struct offcpu_task_record unknown = { .type = 7 };
	struct offcpu_wait_record good = wait_of(0, 0);
	struct fixture f;
	struct said said;

	(void)state;
	start(&f);
	said = record(&f, &unknown, sizeof(unknown));
	assert_int_equal(said.result, -EINVAL);
	assert_non_null(strstr(said.text, "type 7, 12 bytes"));
	said = record(&f, &unknown, sizeof(unknown));
	assert_int_equal(said.result, -EINVAL);
	assert_string_equal(said.text, "");
	/* A good record after them still counts, and says nothing. */
	said = record(&f, &good, OFFCPU_WAIT_HEADER_SIZE);
	assert_int_equal(said.result, 0);
	assert_string_equal(said.text, "");
	assert_int_equal(f.profile->total_count, 1);
	finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(malformed_records_say_type_and_size),
		cmocka_unit_test(malformed_record_said_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
