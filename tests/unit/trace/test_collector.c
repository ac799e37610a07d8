// SPDX-License-Identifier: GPL-2.0
/*
 * The collector on hand-made ring buffer records: malformed ones are said,
 * once; user stacks that end in a frame-pointer loop are cut, recursions kept;
 * kernel stacks lose their scheduler and tracing frames, never the caller that
 * decided to sleep.
 */
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
#include "lib/clock.h"
#include "offcpu.h"
#include "profile/profile.h"
#include "symbols/ksyms.h"
#include "symbols/symbolizer.h"
#include "trace/collector.h"
#include "trace/reaper.h"

struct fixture {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct rule_set rules;
	struct collector *collector;
};

/* ksyms: the kernel's symbols the symbolizer takes (NULL: none). */
static void start_with(struct fixture *f, bool keep_waits, struct ksyms *ksyms)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(profile__new(keep_waits, &f->profile), 0);
	assert_int_equal(
	    symbolizer__new(f->profile->strings, f->profile->inlines, ksyms, &f->symbolizer), 0);
	assert_int_equal(collector__new(f->profile, f->symbolizer,
					&(struct collector_opts){ .rules = &f->rules },
					&f->collector),
			 0);
}

static void start_keeping(struct fixture *f, bool keep_waits)
{
	start_with(f, keep_waits, NULL);
}

static void start(struct fixture *f)
{
	start_keeping(f, false);
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
	/* Past PID_MAX_LIMIT (4194304): no process on the machine running the test has it. */
	r.pid = 4194400;
	r.tid = 4194400;
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
	/* Far past the last type, so that a new one never takes it. */
	struct offcpu_task_record unknown = { .type = 99 };
	/* Two kernel frames, then a copy of the user stack that says 64 bytes and has 56. */
	struct offcpu_wait_record copied = wait_of(2, 0);
	struct offcpu_user_copy *copy = (void *)&copied.ips[2];
	size_t copy_at = OFFCPU_WAIT_HEADER_SIZE + 2 * sizeof(__u64);
	const uint32_t wait_type = OFFCPU_RECORD_WAIT;
	const struct {
		const void *data;
		size_t size;
		const char *said; /* after "malformed ring buffer record: ", of size */
	} cases[] = {
		{ &unknown, sizeof(unknown), "type 99, %zu bytes: unknown type" },
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
		{ &copied, copy_at + sizeof(*copy) - 8,
		  "type 1, %zu bytes: shorter than its user stack copy" },
		{ &copied, copy_at + sizeof(*copy) + 56,
		  "type 1, %zu bytes: shorter than its user stack copy" },
	};
	size_t i;

	(void)state;
	copied.user_stack = OFFCPU_USTACK_COPIED;
	copy->size = 64;
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

/* Return addresses in no mapped file: the frames stay addresses, in order. */
#define LEAF 0x401000ULL
#define CALLER 0x401100ULL
#define LOOPING 0x7f0000001234ULL

/* What one wait's user stack of nr frames, taken with --stack-depth depth, became. */
struct user_result {
	uint32_t nr;
	uint64_t addrs[OFFCPU_MAX_STACK_DEPTH];
	uint64_t cut_short;
	uint64_t loops;
};

static struct user_result user_stack_of(const uint64_t *ips, uint8_t nr, uint8_t depth)
{
	struct offcpu_wait_record r = wait_of(0, nr);
	struct user_result result = { 0 };
	const struct stack *stack;
	struct fixture f;
	uint32_t i;

	r.user_stack = OFFCPU_USTACK_TAKEN;
	r.stack_depth = depth;
	memcpy(r.ips, ips, nr * sizeof(ips[0]));
	start_keeping(&f, true);
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE + nr * sizeof(ips[0])).result, 0);
	assert_int_equal(f.profile->nr_waits, 1);
	stack = f.profile->waits[0].user_stack;
	assert_non_null(stack);
	result.nr = stack->nr;
	for (i = 0; i < stack->nr; i++)
		result.addrs[i] = stack->frames[i].addr;
	result.cut_short = f.profile->counters[OFFCPU_CNT_USTACK_CUT_SHORT];
	result.loops = f.profile->counters[OFFCPU_CNT_USTACK_LOOP];
	finish(&f);
	return result;
}

static void assert_frames(const struct user_result *got, const uint64_t *ips, uint32_t nr)
{
	uint32_t i;

	assert_int_equal(got->nr, nr);
	for (i = 0; i < nr; i++)
		assert_int_equal(got->addrs[i], ips[i]);
}

/* As seen: one return address repeated to the depth limit. Cut after its first. */
static void frame_pointer_loop_cut_at_first_repetition(void **state)
{
	uint64_t ips[OFFCPU_MAX_STACK_DEPTH] = { LEAF, CALLER };
	struct user_result got;
	size_t i;

	(void)state;
	for (i = 2; i < ARRAY_SIZE(ips); i++)
		ips[i] = LOOPING;
	got = user_stack_of(ips, OFFCPU_MAX_STACK_DEPTH, OFFCPU_MAX_STACK_DEPTH);
	assert_frames(&got, ips, 3);
	assert_int_equal(got.cut_short, 1);
	assert_int_equal(got.loops, 1);
}

/* A chain of three frames pointing back to the first: one cycle kept. */
static void frame_pointer_cycle_of_three_cut(void **state)
{
	const uint64_t cycle[] = { 0x7f0000002000, 0x7f0000003000, 0x7f0000004000 };
	uint64_t ips[OFFCPU_MAX_STACK_DEPTH] = { LEAF };
	struct user_result got;
	size_t i;

	(void)state;
	for (i = 1; i < ARRAY_SIZE(ips); i++)
		ips[i] = cycle[(i - 1) % ARRAY_SIZE(cycle)];
	got = user_stack_of(ips, OFFCPU_MAX_STACK_DEPTH, OFFCPU_MAX_STACK_DEPTH);
	assert_frames(&got, ips, 4);
	assert_int_equal(got.loops, 1);
}

/* --stack-depth 8 fills sooner: the same loop, the same cut. */
static void frame_pointer_loop_cut_at_a_smaller_depth(void **state)
{
	const uint64_t ips[] = {
		LEAF, CALLER, LOOPING, LOOPING, LOOPING, LOOPING, LOOPING, LOOPING
	};
	struct user_result got;

	(void)state;
	got = user_stack_of(ips, ARRAY_SIZE(ips), ARRAY_SIZE(ips));
	assert_frames(&got, ips, 3);
	assert_int_equal(got.loops, 1);
}

/*
 * A recursion from one call site, 100 deep, repeats its return address too,
 * but ends: its callers up to the thread's root follow. Kept whole.
 */
static void deep_recursion_that_ends_kept_whole(void **state)
{
	uint64_t ips[104] = { LEAF };
	struct user_result got;
	size_t i;

	(void)state;
	for (i = 1; i <= 100; i++)
		ips[i] = LOOPING;
	ips[101] = 0x401500;	   /* main */
	ips[102] = 0x7f0000100000; /* __libc_start_call_main */
	ips[103] = 0x401050;	   /* _start */
	got = user_stack_of(ips, ARRAY_SIZE(ips), OFFCPU_MAX_STACK_DEPTH);
	assert_frames(&got, ips, ARRAY_SIZE(ips));
	assert_int_equal(got.cut_short, 0);
	assert_int_equal(got.loops, 0);
}

/*
 * A recursion that fills the depth but whose last frames are its callers:
 * cut short by the depth (counted), not a loop (kept).
 */
static void full_stack_ending_in_callers_kept(void **state)
{
	uint64_t ips[OFFCPU_MAX_STACK_DEPTH] = { LEAF };
	struct user_result got;
	size_t i;

	(void)state;
	for (i = 1; i < ARRAY_SIZE(ips); i++)
		ips[i] = i < ARRAY_SIZE(ips) - 6 ? LOOPING : 0x401500 + i;
	got = user_stack_of(ips, OFFCPU_MAX_STACK_DEPTH, OFFCPU_MAX_STACK_DEPTH);
	assert_frames(&got, ips, OFFCPU_MAX_STACK_DEPTH);
	assert_int_equal(got.cut_short, 1);
	assert_int_equal(got.loops, 0);
}

/* Three in a row at the end of a full stack is too few to call it a loop. */
static void few_repetitions_at_the_depth_kept(void **state)
{
	const uint64_t ips[] = { LEAF,	   CALLER,  0x401200, 0x401300,
				 0x401400, LOOPING, LOOPING,  LOOPING };
	struct user_result got;

	(void)state;
	got = user_stack_of(ips, ARRAY_SIZE(ips), ARRAY_SIZE(ips));
	assert_frames(&got, ips, ARRAY_SIZE(ips));
	assert_int_equal(got.cut_short, 1);
	assert_int_equal(got.loops, 0);
}

/* A record that does not say its depth (0) is never taken for a full stack. */
static void unknown_depth_never_cut(void **state)
{
	uint64_t ips[OFFCPU_MAX_STACK_DEPTH];
	struct user_result got;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ips); i++)
		ips[i] = LOOPING;
	got = user_stack_of(ips, OFFCPU_MAX_STACK_DEPTH, 0);
	assert_frames(&got, ips, OFFCPU_MAX_STACK_DEPTH);
	assert_int_equal(got.cut_short, 0);
}

/* The functions around schedule(), each 0x100 long from KERNEL_TEXT, in this order. */
#define KERNEL_TEXT 0xffffffff81000000ULL
static const char *const kernel_functions[] = {
	"__traceiter_sched_switch",
	"__bpf_trace_sched_switch",
	"__schedule",
	"schedule",
	"do_nanosleep",
	"hrtimer_nanosleep",
	"schedule_hrtimeout_range_clock",
	"schedule_hrtimeout_range",
	"ep_poll",
	"schedule_timeout",
	"io_schedule",
	"folio_wait_bit_common",
};

static struct ksyms *fixture_ksyms(void)
{
	char text[2048];
	struct ksyms *ksyms = NULL;
	size_t i, n = 0;
	FILE *file;

	for (i = 0; i < ARRAY_SIZE(kernel_functions); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%llx T %s\n",
				      (unsigned long long)(KERNEL_TEXT + 0x100 * i),
				      kernel_functions[i]);
	file = fmemopen(text, n, "r");
	assert_non_null(file);
	assert_int_equal(ksyms__load(file, &ksyms), 0);
	fclose(file);
	return ksyms;
}

/* A return address inside the function of that name. */
static uint64_t kernel_return_address(const char *name)
{
	size_t i;

	for (i = 0; strcmp(kernel_functions[i], name); i++)
		assert_true(i + 1 < ARRAY_SIZE(kernel_functions));
	return KERNEL_TEXT + 0x100 * i + 0x20;
}

/* The kernel stack the collector keeps of return addresses into these functions, by name. */
static void kernel_stack_kept(const char *const *names, size_t nr, const char *const *kept,
			      size_t nr_kept)
{
	struct offcpu_wait_record r = wait_of((uint8_t)nr, 0);
	const struct stack *stack;
	struct fixture f;
	size_t i;

	for (i = 0; i < nr; i++)
		r.ips[i] = kernel_return_address(names[i]);
	start_with(&f, true, fixture_ksyms());
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE + nr * sizeof(r.ips[0])).result, 0);
	assert_int_equal(f.profile->nr_waits, 1);
	stack = f.profile->waits[0].kernel_stack;
	assert_non_null(stack);
	assert_int_equal(stack->nr, nr_kept);
	for (i = 0; i < nr_kept; i++)
		assert_string_equal(stack->frames[i].sym, kept[i]);
	finish(&f);
}

/*
 * As perf shows a nanosleep: the tracepoint, __schedule and schedule go,
 * do_nanosleep (which decided to sleep) stays, as perf's stack has it.
 */
static void kernel_leaf_keeps_the_caller_of_schedule(void **state)
{
	const char *const nanosleep[] = { "__traceiter_sched_switch",
					  "__bpf_trace_sched_switch",
					  "__schedule",
					  "schedule",
					  "do_nanosleep",
					  "hrtimer_nanosleep" };
	const char *const epoll[] = { "__schedule", "schedule", "schedule_hrtimeout_range_clock",
				      "schedule_hrtimeout_range", "ep_poll" };
	const char *const io[] = { "schedule", "io_schedule", "folio_wait_bit_common" };
	const char *const timeout[] = { "schedule", "schedule_timeout", "ep_poll" };

	(void)state;
	kernel_stack_kept(nanosleep, ARRAY_SIZE(nanosleep), nanosleep + 4, 2);
	kernel_stack_kept(epoll, ARRAY_SIZE(epoll), epoll + 2, 3);
	kernel_stack_kept(io, ARRAY_SIZE(io), io + 1, 2);
	kernel_stack_kept(timeout, ARRAY_SIZE(timeout), timeout + 1, 2);
	/* Already without them (bpf_get_task_stack drops .sched.text): nothing more goes. */
	kernel_stack_kept(nanosleep + 5, 1, nanosleep + 5, 1);
}

/* The waker and runq_ns of a record; the waker's stacks from the record before it. */
static void waker_and_its_stacks_attached_to_their_wait(void **state)
{
	const char *const waker_kernel[] = { "__traceiter_sched_switch", "do_nanosleep",
					     "hrtimer_nanosleep" };
	struct offcpu_wait_record r = wait_of(0, 0);
	struct offcpu_waker_record k;
	const struct wait *w;
	struct fixture f;
	size_t i;

	(void)state;
	start_with(&f, true, fixture_ksyms());
	memset(&k, 0, sizeof(k));
	k.type = OFFCPU_RECORD_WAKER;
	k.pid = 77;
	k.tid = r.tid;
	k.start_ts_ns = r.end_ts_ns - r.duration_ns;
	k.kernel_frames = ARRAY_SIZE(waker_kernel);
	for (i = 0; i < ARRAY_SIZE(waker_kernel); i++)
		k.ips[i] = kernel_return_address(waker_kernel[i]);
	assert_int_equal(
	    record(&f, &k, OFFCPU_WAKER_HEADER_SIZE + k.kernel_frames * sizeof(k.ips[0])).result,
	    0);
	r.waker = OFFCPU_WAKER_TASK;
	r.waker_pid = 77;
	r.waker_tid = 78;
	memcpy(r.waker_comm, "waker", 6);
	r.waker_stack = 1;
	/* More than the wait: a record from another build; cut to duration_ns. */
	r.runq_ns = 2 * r.duration_ns;
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	/* A second wait of that thread without stacks of its own gets none. */
	r.end_ts_ns += 1000;
	r.runq_ns = 1000;
	r.waker = OFFCPU_WAKER_SOFTIRQ;
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	assert_int_equal(f.profile->nr_waits, 2);
	w = &f.profile->waits[0];
	assert_int_equal(w->runq_ns, w->duration_ns);
	assert_int_equal(w->waker.context, OFFCPU_WAKER_TASK);
	assert_int_equal(w->waker.tid, 78);
	assert_string_equal(w->waker.comm, "waker");
	assert_non_null(w->waker_kernel_stack);
	/* The tracing frames at the leaf go, as from any kernel stack. */
	assert_int_equal(w->waker_kernel_stack->nr, 2);
	assert_string_equal(w->waker_kernel_stack->frames[0].sym, "do_nanosleep");
	assert_null(w->waker_user_stack);
	w = &f.profile->waits[1];
	assert_int_equal(w->runq_ns, 1000);
	assert_int_equal(w->waker.context, OFFCPU_WAKER_SOFTIRQ);
	assert_null(w->waker_kernel_stack);
	/* Stacks whose wait never came are counted at the end. */
	k.tid = 9999;
	assert_int_equal(
	    record(&f, &k, OFFCPU_WAKER_HEADER_SIZE + k.kernel_frames * sizeof(k.ips[0])).result,
	    0);
	assert_int_equal(collector__finish(f.collector), 0);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED], 1);
	/* A waker record shorter than its frames is malformed. */
	assert_int_equal(record(&f, &k, OFFCPU_WAKER_HEADER_SIZE).result, -EINVAL);
	finish(&f);
}

/* A waker record naming the wait of r's thread that began at start_ts_ns, with one kernel frame. */
static void send_waker(struct fixture *f, const struct offcpu_wait_record *r, uint64_t start_ts_ns,
		       const char *frame)
{
	struct offcpu_waker_record k;

	memset(&k, 0, sizeof(k));
	k.type = OFFCPU_RECORD_WAKER;
	k.pid = 77;
	k.tid = r->tid;
	k.start_ts_ns = start_ts_ns;
	k.kernel_frames = 1;
	k.ips[0] = kernel_return_address(frame);
	assert_int_equal(record(f, &k, OFFCPU_WAKER_HEADER_SIZE + sizeof(k.ips[0])).result, 0);
}

/*
 * dwarf mode sends a waker's record at the wakeup: a thread that blocked
 * again before its wait's record went has two waiting, each found by its
 * wait's start; one whose wait never came (not kept) is dropped, counted,
 * at the first later wait.
 */
static void waker_records_found_by_their_waits_start(void **state)
{
	struct offcpu_wait_record first = wait_of(0, 0), second = wait_of(0, 0);
	uint64_t first_start, second_start;
	struct fixture f;

	(void)state;
	start_with(&f, true, fixture_ksyms());
	second.end_ts_ns = first.end_ts_ns + 2 * first.duration_ns;
	first_start = first.end_ts_ns - first.duration_ns;
	second_start = second.end_ts_ns - second.duration_ns;
	first.waker = second.waker = OFFCPU_WAKER_TASK;
	first.waker_stack = second.waker_stack = 1;
	/* A wait before them, dropped by -M after its waker's record went. */
	send_waker(&f, &first, first_start - 5000, "hrtimer_nanosleep");
	send_waker(&f, &first, first_start, "do_nanosleep");
	send_waker(&f, &second, second_start, "hrtimer_nanosleep");
	assert_int_equal(record(&f, &first, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED], 1);
	assert_int_equal(record(&f, &second, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	assert_int_equal(f.profile->nr_waits, 2);
	assert_non_null(f.profile->waits[0].waker_kernel_stack);
	assert_string_equal(f.profile->waits[0].waker_kernel_stack->frames[0].sym, "do_nanosleep");
	assert_non_null(f.profile->waits[1].waker_kernel_stack);
	assert_string_equal(f.profile->waits[1].waker_kernel_stack->frames[0].sym,
			    "hrtimer_nanosleep");
	assert_int_equal(collector__finish(f.collector), 0);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED], 1);
	finish(&f);
}

/* A TID no thread has: /proc/TID is not there (the kernel's PID_MAX_LIMIT is 4,194,304). */
#define GONE_TID 0x7ffffff0u

/* A chained wait, a waker's stacks and Python frames, each waiting for tid's next record. */
static void leave_for_next_record(struct fixture *f, uint32_t tid)
{
	struct offcpu_wait_record r = wait_of(0, 0);
	struct offcpu_waker_record k;
	struct offcpu_python_record py;

	r.pid = r.tid = tid;
	r.user_stack = OFFCPU_USTACK_FROM_NEXT;
	assert_int_equal(record(f, &r, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	memset(&k, 0, sizeof(k));
	k.type = OFFCPU_RECORD_WAKER;
	k.pid = k.tid = tid;
	k.start_ts_ns = r.end_ts_ns + 1000;
	assert_int_equal(record(f, &k, OFFCPU_WAKER_HEADER_SIZE).result, 0);
	memset(&py, 0, sizeof(py));
	py.type = OFFCPU_RECORD_PYTHON;
	py.pid = py.tid = tid;
	py.end_ts_ns = r.end_ts_ns + 1000;
	assert_int_equal(record(f, &py, OFFCPU_PYTHON_HEADER_SIZE).result, 0);
}

/*
 * What a thread left for a next record that never came (it exited) is
 * freed at the second look that finds it gone, the chained wait added
 * without a user stack; a live thread's is kept.
 */
static void leftovers_of_exited_threads_freed_by_a_look(void **state)
{
	uint64_t *counters, now = clock__monotonic_ns();
	struct fixture f;

	(void)state;
	start_keeping(&f, true);
	counters = f.profile->counters;
	leave_for_next_record(&f, GONE_TID);
	leave_for_next_record(&f, (uint32_t)getpid());
	/* The first call starts the looks' clock; the first look is an interval on. */
	assert_int_equal(collector__reap(f.collector, now), 0);
	assert_int_equal(collector__reap(f.collector, now + REAPER_INTERVAL_NS), 0);
	/* Held at this look for the first time: kept, its records may be on their way. */
	assert_int_equal(counters[OFFCPU_CNT_THREAD_LEFTOVERS_REAPED], 0);
	assert_int_equal(f.profile->nr_waits, 0);
	assert_int_equal(collector__reap(f.collector, now + 2 * REAPER_INTERVAL_NS), 0);
	assert_int_equal(counters[OFFCPU_CNT_THREAD_LEFTOVERS_REAPED], 3);
	assert_int_equal(f.profile->nr_waits, 1);
	assert_int_equal(f.profile->waits[0].tid, GONE_TID);
	assert_null(f.profile->waits[0].user_stack);
	assert_int_equal(counters[OFFCPU_CNT_USTACK_LOST], 1);
	assert_int_equal(counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED], 1);
	assert_int_equal(collector__reap(f.collector, now + 3 * REAPER_INTERVAL_NS), 0);
	assert_int_equal(counters[OFFCPU_CNT_THREAD_LEFTOVERS_REAPED], 3);
	/* The live thread's, at the end as before. */
	assert_int_equal(collector__finish(f.collector), 0);
	assert_int_equal(f.profile->nr_waits, 2);
	assert_int_equal(counters[OFFCPU_CNT_WAKER_STACK_UNMATCHED], 2);
	finish(&f);
}

/* A record whose kernel stack lacks its __sched frames is counted, its stack kept. */
static void kernel_leaf_missed_counted(void **state)
{
	struct offcpu_wait_record r = wait_of(0, 0);
	struct fixture f;

	(void)state;
	start_keeping(&f, true);
	r.flags = OFFCPU_WAIT_LEAF_MISSED | OFFCPU_WAIT_OPEN_AFTER;
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	r.flags = 0;
	r.end_ts_ns += 1000;
	assert_int_equal(record(&f, &r, OFFCPU_WAIT_HEADER_SIZE).result, 0);
	assert_int_equal(f.profile->counters[OFFCPU_CNT_KERNEL_LEAF_MISSED], 1);
	assert_int_equal(f.profile->nr_waits, 2);
	assert_int_equal(f.profile->waits[0].open, OFFCPU_WAIT_OPEN_AFTER);
	finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leftovers_of_exited_threads_freed_by_a_look),
		cmocka_unit_test(kernel_leaf_missed_counted),
		cmocka_unit_test(malformed_records_say_type_and_size),
		cmocka_unit_test(malformed_record_said_once),
		cmocka_unit_test(frame_pointer_loop_cut_at_first_repetition),
		cmocka_unit_test(frame_pointer_cycle_of_three_cut),
		cmocka_unit_test(frame_pointer_loop_cut_at_a_smaller_depth),
		cmocka_unit_test(deep_recursion_that_ends_kept_whole),
		cmocka_unit_test(full_stack_ending_in_callers_kept),
		cmocka_unit_test(few_repetitions_at_the_depth_kept),
		cmocka_unit_test(unknown_depth_never_cut),
		cmocka_unit_test(kernel_leaf_keeps_the_caller_of_schedule),
		cmocka_unit_test(waker_and_its_stacks_attached_to_their_wait),
		cmocka_unit_test(waker_records_found_by_their_waits_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
