// SPDX-License-Identifier: GPL-2.0
/* Aggregation, the output back-ends on one fixture profile, and the classifier. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "classify/classify.h"
#include "lib/array.h"
#include "lib/json_writer.h"
#include "offcpu.h"
#include "output/output.h"
#include "output/protobuf.h"
#include "profile/profile.h"
#include "trace/recording.h"

static struct frame kframe(struct profile *p, uint64_t addr, const char *sym)
{
	struct frame f = { 0 };

	f.addr = addr;
	f.sym = strpool__intern(p->strings, sym);
	f.module = strpool__intern(p->strings, "[kernel.kallsyms]");
	f.module_off = addr; /* as the symbolizer gives kernel frames */
	f.kernel = true;
	return f;
}

static struct frame uframe(struct profile *p, uint64_t addr, const char *sym)
{
	struct frame f = { 0 };

	f.addr = addr;
	f.sym = sym ? strpool__intern(p->strings, sym) : NULL;
	f.module = strpool__intern(p->strings, "/usr/bin/app");
	f.module_off = addr - 0x1000;
	return f;
}

/* Two threads of "app": a sleeper (2 waits) and a futex waiter (1 wait). */
static struct profile *fixture_profile(bool keep_waits)
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

static void aggregation(void **state)
{
	struct profile *p = fixture_profile(false);
	struct profile_entry **entries;
	struct frame f[1];
	size_t nr;

	(void)state;
	assert_int_equal(p->total_count, 3);
	assert_int_equal(p->total_ns, 100000000);
	assert_int_equal(p->nr_waits, 0);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(nr, 2);
	/* Equal totals: by pid, then tid. */
	assert_int_equal(entries[0]->key.tid, 101);
	assert_int_equal(entries[0]->total_ns, 50000000);
	assert_int_equal(entries[0]->count, 2);
	assert_int_equal(entries[1]->key.tid, 102);
	assert_int_equal(entries[1]->total_ns, 50000000);
	assert_int_equal(entries[1]->count, 1);
	free(entries);
	/* The same frames give the same stack. */
	f[0] = kframe(p, 0xffffffff81000010ULL, "do_nanosleep");
	assert_ptr_equal(profile__intern_stack(p, f, 1), profile__intern_stack(p, f, 1));
	profile__free(p);
}

static char *render_by(int (*write)(FILE *, const struct profile *, const struct output_opts *),
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

static char *render(int (*write)(FILE *, const struct profile *, const struct output_opts *),
		    const struct profile *p)
{
	return render_by(write, p, GROUP_BY_TID);
}

/* The profile recording__read makes of a json recording. */
static struct profile *read_back(const char *text, const struct recording_filter *filter,
				 bool keep_waits)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct profile *back;

	assert_non_null(in);
	assert_int_equal(profile__new(keep_waits, &back), 0);
	assert_int_equal(recording__read(in, "fixture", filter, back), 0);
	fclose(in);
	return back;
}

/*
 * offcpu serve's sweep keeps what a profile holds (its stacks' frames with
 * their inline frames, labels, entries, waits, thread accounts) and frees
 * the rest: the json written after it is the json written before, and under
 * ASan nothing it writes was freed.
 */
static void strings_held_survive_a_sweep(void **state)
{
	struct profile *p = fixture_profile(true);
	unsigned long strings, bytes, freed, freed_bytes, kept;
	struct thread_account a = { .pid = 100, .tid = 103 };
	struct label items[1];
	struct frame f[2];
	struct wait w = { 0 };
	char *before, *after;
	int err;

	(void)state;
	f[0] = uframe(p, 0x1400, "inlined_caller");
	f[0].system_name = strpool__intern(p->strings, "_Z14inlined_callerv");
	f[0].build_id = strpool__intern(p->strings, "0123abcd");
	f[0].file = strpool__intern(p->strings, "app.c");
	f[0].line = 12;
	f[0].inlined = inline_pool__intern(p->inlines, strpool__intern(p->strings, "helper"),
					   strpool__intern(p->strings, "helper.h"), 3, NULL);
	memset(&f[1], 0, sizeof(f[1]));
	f[1].addr = 0x7f0000001000;
	f[1].kind = strpool__intern(p->strings, "python");
	f[1].sym = strpool__intern(p->strings, "inner");
	f[1].file = strpool__intern(p->strings, "app.py");
	f[1].line = 27;
	items[0].name = "query";
	items[0].value = "SELECT 1";
	w.pid = 200;
	w.tid = 200;
	w.comm = strpool__intern(p->strings, "py");
	w.wait_class = strpool__intern(p->strings, "sleep");
	w.cgroup = strpool__intern(p->strings, "/system.slice/py.service");
	w.waker.context = OFFCPU_WAKER_TASK;
	w.waker.comm = strpool__intern(p->strings, "waker");
	w.user_stack = profile__intern_stack(p, f, 2);
	w.labels = profile__intern_labels(p, items, 1, &err);
	assert_int_equal(err, 0);
	w.duration_ns = 1000;
	w.end_ts_ns = 4000;
	assert_int_equal(profile__add(p, &w), 0);
	a.comm = strpool__intern(p->strings, "exited");
	assert_int_equal(profile__add_thread(p, &a), 0);
	strpool__stats(p->strings, &kept, &bytes);
	strpool__intern(p->strings, "sh -c a title no one holds");
	strpool__intern(p->strings, "/tmp/perf-1.map");
	assert_non_null(inline_pool__intern(p->inlines, strpool__intern(p->strings, "gone"),
					    w.cgroup, 1, NULL));
	before = render(output_json__write, p);
	profile__mark_strings(p, p->strings, p->inlines);
	assert_int_equal(inline_pool__sweep(p->inlines), 1);
	strpool__sweep(p->strings, &freed, &freed_bytes);
	assert_int_equal(freed, 3);
	strpool__stats(p->strings, &strings, &bytes);
	assert_int_equal(strings, kept);
	after = render(output_json__write, p);
	assert_string_equal(before, after);
	assert_non_null(strstr(after, "helper.h"));
	assert_non_null(strstr(after, "SELECT 1"));
	free(before);
	free(after);
	profile__free(p);
}

static bool even_pids_alive(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid % 2 == 0;
}

/* A wait of comm in wait_class, for the test to fill in. */
static struct wait a_wait(struct profile *p, const char *comm, const char *wait_class)
{
	struct wait w = { 0 };

	w.comm = strpool__intern(p->strings, comm);
	w.wait_class = strpool__intern(p->strings, wait_class);
	return w;
}

/*
 * A profile whose odd pids have exited and whose entries merge from 8 on,
 * and a wait of comm in wait_class with the one kernel frame sym.
 */
static struct profile *merging_profile(const char *comm, const char *wait_class, const char *sym,
				       struct wait *w)
{
	struct profile *p;
	struct frame f;

	assert_int_equal(profile__new(false, &p), 0);
	p->process_alive = even_pids_alive;
	p->compact_at = 8;
	f = kframe(p, 0xffffffff81000010ULL, sym);
	*w = a_wait(p, comm, wait_class);
	w->kernel_stack = profile__intern_stack(p, &f, 1);
	return p;
}

/* Past the mark, exited processes' entries merge; their time stays. */
static void exited_processes_merge(void **state)
{
	struct wait w;
	struct profile *p = merging_profile("short", "sleep", "do_nanosleep", &w);
	struct profile_entry **entries;
	size_t nr, i, exited = 0, total = 0;
	char *text;
	uint32_t pid;

	(void)state;
	for (pid = 1; pid <= 100; pid++) {
		w.pid = w.tid = pid;
		w.duration_ns = 1000;
		assert_int_equal(profile__add(p, &w), 0);
	}
	assert_int_equal(p->total_count, 100);
	assert_int_equal(p->total_ns, 100000);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	/*
	 * Live processes stay apart; exited ones merge each time the entries
	 * reach the mark, which then moves to twice what is left.
	 */
	for (i = 0; i < nr; i++) {
		if (entries[i]->key.pid == PROFILE_EXITED_ID)
			exited += entries[i]->count;
		else
			total += entries[i]->count;
	}
	assert_int_equal(exited + total, 100);
	assert_true(exited >= 25);
	assert_true(nr <= 100 - exited + 1);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "  short                     (exited)"));
	free(text);
	free(entries);
	profile__free(p);
}

/*
 * The waker ids are in an entry's key: a live shell's wait for each child
 * it ran, woken by that child's exit, was an entry per child for the run.
 * Past the mark, the exited wakers fold; the wakee stays itself.
 */
static void exited_wakers_merge(void **state)
{
	struct wait w;
	struct profile *p = merging_profile("sh", "child", "do_wait", &w);
	struct profile_entry **entries;
	size_t nr, i, folded = 0;
	uint32_t child;

	(void)state;
	w.pid = w.tid = 2; /* alive */
	w.waker.context = OFFCPU_WAKER_TASK;
	w.waker.comm = strpool__intern(p->strings, "child");
	for (child = 1; child <= 199; child += 2) {
		w.waker.pid = w.waker.tid = child; /* odd: exited */
		w.duration_ns = 1000;
		assert_int_equal(profile__add(p, &w), 0);
	}
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	for (i = 0; i < nr; i++) {
		assert_int_equal(entries[i]->key.pid, 2);
		if (entries[i]->key.waker.tid == PROFILE_EXITED_ID)
			folded += entries[i]->count;
	}
	assert_true(folded >= 25);
	assert_true(nr <= 100 - folded + 1);
	free(entries);
	profile__free(p);
}

static void folded_golden(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_folded__write, p);

	(void)state;
	assert_string_equal(
	    text,
	    "app;[interruptible];[lock:futex];__x64_sys_futex_[k];futex_wait_queue_[k] 50000000\n"
	    "app;[interruptible];[sleep];main;app+0x234;clock_nanosleep;"
	    "__x64_sys_clock_nanosleep_[k];do_nanosleep_[k] 50000000\n");
	free(text);
	profile__free(p);
}

static void json_golden(void **state)
{
	static const char first[] =
	    "{\"type\":\"offcpu\",\"ts_ns\":1000,\"pid\":100,\"tid\":101,\"comm\":\"app\","
	    "\"state\":\"interruptible\",\"wait\":\"sleep\",\"duration_ns\":20000000,\"weight_ns\":"
	    "20000000,\"cpu\":1,"
	    "\"kernel_stack\":[{\"addr\":\"0xffffffff81000010\",\"sym\":\"do_nanosleep\","
	    "\"off\":0,\"module\":\"[kernel.kallsyms]\"},{\"addr\":\"0xffffffff81000020\","
	    "\"sym\":\"__x64_sys_clock_nanosleep\",\"off\":0,\"module\":\"[kernel.kallsyms]\"}],"
	    "\"user_stack\":[{\"addr\":\"0x1100\",\"sym\":\"clock_nanosleep\",\"off\":0,"
	    "\"module\":\"/usr/bin/app\",\"module_off\":256},{\"addr\":\"0x1234\","
	    "\"module\":\"/usr/bin/app\",\"module_off\":564},{\"addr\":\"0x1300\",\"sym\":"
	    "\"main\",\"off\":0,\"module\":\"/usr/bin/app\",\"module_off\":768}],"
	    "\"runq_ns\":0}\n";
	struct profile *p = fixture_profile(true);
	char *text = render(output_json__write, p), *line2, *last;

	(void)state;
	assert_int_equal(p->nr_waits, 3);
	if (strncmp(text, first, strlen(first)))
		fail_msg("first line:\n%.*s\nexpected:\n%s", (int)strlen(first), text, first);
	line2 = strchr(text, '\n') + 1;
	assert_non_null(strstr(line2, "\"ts_ns\":2000"));
	/* "title" only where it says more than comm. */
	assert_null(strstr(text, "\"tid\":101,\"comm\":\"app\",\"title\""));
	assert_non_null(strstr(text, "\"tid\":102,\"comm\":\"app\",\"title\":\"app --worker\","));
	last = strstr(text, "{\"type\":\"stats\",\"switches\":0,");
	assert_non_null(last);
	assert_non_null(strstr(last, "\"ringbuf_full\":0"));
	assert_non_null(strstr(last, "\"symbol_misses\":0"));
	assert_int_equal(last[strlen(last) - 1], '\n');
	free(text);
	profile__free(p);
}

static void text_report(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_text__write, p);

	(void)state;
	assert_non_null(strstr(text, "offcpu: 3 waits, 100.000 ms off CPU in total"));
	assert_non_null(strstr(
	    text,
	    "  interruptible                          100.000 ms  100.0%         3     100.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "  lock:futex                              50.000 ms   50.0%         1      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "  app                   100      101      50.000 ms   50.0%         2      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(text,
			       "  #1 app;[interruptible];[lock:futex]  50.000 ms, 50.0%, 1 wait\n"
			       "    kernel:\n      futex_wait_queue\n      __x64_sys_futex\n"));
	/* No counter counted anything: one line says so. */
	assert_non_null(strstr(text, "\nHealth counters\n  all counters: 0\n"));
	assert_null(strstr(text, "  switches"));
	free(text);
	profile__free(p);
}

static void text_group_by(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render_by(output_text__write, p, GROUP_BY_TITLE);

	(void)state;
	assert_non_null(strstr(text, "By process title (top 20)\n"));
	assert_non_null(strstr(
	    text,
	    "\n  app --worker                            50.000 ms   50.0%         1      50.000 ms"
	    "       0.000 us\n"));
	assert_non_null(strstr(
	    text,
	    "\n  app                                     50.000 ms   50.0%         2      50.000 ms"
	    "       0.000 us\n"));
	assert_null(strstr(text, "By thread (top 20)"));
	free(text);
	text = render_by(output_text__write, p, GROUP_BY_PID);
	assert_non_null(strstr(text, "By process (top 20)\n"));
	free(text);
	/* By state or wait class: the tables above already are. */
	text = render_by(output_text__write, p, GROUP_BY_WAIT);
	assert_null(strstr(text, "(top 20)"));
	free(text);
	profile__free(p);
}

static void json_escaping(void **state)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	struct json_writer w;

	(void)state;
	json_writer__init(&w, out);
	json_writer__begin_object(&w);
	json_writer__key(&w, "s");
	json_writer__string(&w, "a\"b\\c\n\x01");
	json_writer__key(&w, "list");
	json_writer__begin_array(&w);
	json_writer__u64(&w, 1);
	json_writer__hex(&w, 255);
	json_writer__begin_object(&w);
	json_writer__end_object(&w);
	json_writer__end_array(&w);
	json_writer__end_object(&w);
	fclose(out);
	assert_string_equal(buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"list\":[1,\"0xff\",{}]}");
	free(buf);
}

static const char *classify_names(unsigned int state, const char *const *names, size_t nr)
{
	struct frame frames[16] = { 0 };
	size_t i;

	for (i = 0; i < nr; i++)
		frames[i].sym = names[i];
	return classify__wait(NULL, state, frames, nr, NULL, 0);
}

#define CLASSIFY(state, ...)                                                                       \
	classify_names(state, (const char *const[]){ __VA_ARGS__ },                                \
		       sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void classification(void **state)
{
	const unsigned int S = OFFCPU_STATE_INTERRUPTIBLE, D = OFFCPU_STATE_UNINTERRUPTIBLE;

	(void)state;
	/* Stacks as recorded on 6.18 (leaf first, scheduler frames removed). */
	assert_string_equal(CLASSIFY(S, "hrtimer_nanosleep", "common_nsleep_timens",
				     "__x64_sys_clock_nanosleep", "do_syscall_64"),
			    "sleep");
	assert_string_equal(CLASSIFY(S, "futex_do_wait", "__futex_wait", "futex_wait", "do_futex"),
			    "lock:futex");
	assert_string_equal(CLASSIFY(S, "futex_wait_queue_me", "futex_wait", "do_futex"),
			    "lock:futex");
	assert_string_equal(CLASSIFY(S, "anon_pipe_read", "vfs_read", "ksys_read"), "pipe");
	assert_string_equal(CLASSIFY(S, "pipe_wait", "pipe_read", "vfs_read"), "pipe");
	assert_string_equal(CLASSIFY(S, "do_wait", "kernel_wait4", "do_syscall_64"), "child");
	assert_string_equal(CLASSIFY(S, "do_epoll_wait", "__x64_sys_epoll_wait"), "poll:epoll");
	assert_string_equal(CLASSIFY(S, "schedule_hrtimeout_range", "do_select", "core_sys_select"),
			    "poll:select");
	assert_string_equal(CLASSIFY(S, "sk_wait_data", "tcp_recvmsg_locked", "tcp_recvmsg"),
			    "net:recv");
	assert_string_equal(CLASSIFY(S, "unix_stream_read_generic", "unix_stream_recvmsg"),
			    "net:unix");
	/* fsync waits on block I/O: the specific rule wins. */
	assert_string_equal(CLASSIFY(D, "io_schedule", "folio_wait_bit_common",
				     "file_write_and_wait_range", "ext4_sync_file",
				     "vfs_fsync_range", "do_fsync"),
			    "io:fsync");
	assert_string_equal(CLASSIFY(D, "io_schedule", "folio_wait_bit_common", "filemap_read"),
			    "io:read");
	assert_string_equal(CLASSIFY(D, "__mutex_lock.constprop.0", "do_truncate"), "lock:mutex");
	assert_string_equal(CLASSIFY(D, "rwsem_down_write_slowpath", "down_write"), "lock:rwsem");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_PREEMPTED, "do_nanosleep"), "cpu");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_RUNNING, "do_sched_yield"), "cpu");
	/* A kernel thread's loop waiting for work; inside a work item, the wait is the item's. */
	assert_string_equal(CLASSIFY(OFFCPU_STATE_IDLE, "worker_thread", "kthread"), "idle");
	assert_string_equal(
	    CLASSIFY(D, "synchronize_rcu_normal", "process_one_work", "worker_thread", "kthread"),
	    "other");
	assert_string_equal(CLASSIFY(OFFCPU_STATE_STOPPED, "get_signal"), "signal");
	assert_string_equal(classify__wait(NULL, S, NULL, 0, NULL, 0), "other");
}

static void formats_by_name_and_extension(void **state)
{
	(void)state;
	assert_string_equal(output_format__by_name("json")->name, "json");
	assert_null(output_format__by_name("xml"));
	assert_string_equal(output_format__by_path("out.folded")->name, "folded");
	assert_string_equal(output_format__by_path("/tmp/a.b/out.json")->name, "json");
	assert_string_equal(output_format__by_path("report.txt")->name, "text");
	assert_null(output_format__by_path("out.data"));
	/* A hidden file named ".json" has no extension. */
	assert_null(output_format__by_path(".json"));
	/* The longer extension wins, wherever the table lists it. */
	assert_string_equal(output_format__by_path("run.trace.json")->name, "trace");
	assert_string_equal(output_format__by_path("trace.json")->name, "json");
	assert_string_equal(output_format__by_name("trace")->name, "trace");
}

static void protobuf_wire_format(void **state)
{
	struct pb_buffer b = { 0 }, inner = { 0 };
	uint64_t values[3] = { 1, 300, 0 };
	static const uint8_t expected[] = {
		0x08, 0x96, 0x01,		    /* field 1 varint 150 */
		0x12, 0x02, 'h',  'i',		    /* field 2 "hi" */
		0x1a, 0x04, 0x01, 0xac, 0x02, 0x00, /* field 3 packed 1, 300, 0 */
		0x22, 0x02, 0x08, 0x07,		    /* field 4 message { field 1: 7 } */
		0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 2^64-1 */
	};

	(void)state;
	pb_buffer__varint(&b, 1, 150);
	pb_buffer__string(&b, 2, "hi");
	pb_buffer__packed(&b, 3, values, 3);
	pb_buffer__varint(&inner, 1, 7);
	pb_buffer__message(&b, 4, &inner);
	pb_buffer__varint(&b, 5, UINT64_MAX);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, sizeof(expected));
	assert_memory_equal(b.data, expected, sizeof(expected));
	pb_buffer__free(&b);
	pb_buffer__free(&inner);
}

/* A reader of the protobuf wire format, to check the profiles written. */
struct pb_field {
	uint32_t number;
	uint64_t value; /* varint */
	const uint8_t *data;
	size_t len; /* length-delimited */
	bool is_bytes;
};

static bool read_varint(const uint8_t *buf, size_t len, size_t *at, uint64_t *out)
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

static bool next_field(const uint8_t *buf, size_t len, size_t *at, struct pb_field *f)
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

static uint8_t *gunzip(const char *gz, size_t gz_len, size_t *out_len)
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

static void pprof_encoding(void **state)
{
	struct profile *p = fixture_profile(false);
	char *gz = NULL;
	size_t gz_len = 0, len, at = 0, i;
	FILE *out = open_memstream(&gz, &gz_len);
	struct output_opts opts = { 0 };
	const char *strings[128];
	size_t nr_strings = 0, nr_samples = 0, nr_locations = 0, nr_functions = 0;
	size_t nr_mappings = 0;
	uint64_t value_sum[2] = { 0, 0 };
	struct pb_field f, g;
	uint8_t *pb;
	bool saw_label_key = false;

	(void)state;
	p->start_time_ns = 1700000000000000000ULL;
	p->duration_ns = 5000000000ULL;
	assert_int_equal(output_pprof__write(out, p, &opts), 0);
	fclose(out);
	pb = gunzip(gz, gz_len, &len);
	while (next_field(pb, len, &at, &f)) {
		size_t inner = 0;

		switch (f.number) {
		case 2: /* sample: values are packed in field 2 */
			nr_samples++;
			while (next_field(f.data, f.len, &inner, &g)) {
				size_t v = 0, k = 0;
				uint64_t n;

				if (g.number != 2)
					continue;
				while (read_varint(g.data, g.len, &v, &n) && k < 2)
					value_sum[k++] += n;
			}
			break;
		case 3:
			nr_mappings++;
			break;
		case 4:
			nr_locations++;
			break;
		case 5:
			nr_functions++;
			break;
		case 6:
			assert_true(nr_strings < 128);
			strings[nr_strings++] = strndup((const char *)f.data, f.len);
			break;
		case 9:
			assert_int_equal(f.value, 1700000000000000000ULL);
			break;
		case 10:
			assert_int_equal(f.value, 5000000000ULL);
			break;
		}
	}
	assert_int_equal(at, len);
	assert_int_equal(nr_samples, 2);
	assert_int_equal(value_sum[0], 3);	   /* waits */
	assert_int_equal(value_sum[1], 100000000); /* nanoseconds, as the text report says */
	/* Kernel and app mappings; 4 kernel + 3 user locations; one function each. */
	assert_int_equal(nr_mappings, 2);
	assert_int_equal(nr_locations, 7);
	assert_int_equal(nr_functions, 7);
	assert_string_equal(strings[0], "");
	for (i = 0; i < nr_strings; i++) {
		if (!strcmp(strings[i], "thread.state"))
			saw_label_key = true;
	}
	assert_true(saw_label_key);
	for (i = 0; i < nr_strings; i++)
		free((char *)strings[i]);
	free(pb);
	free(gz);
	profile__free(p);
}

/*
 * Not strstr in a loop: ASan's strstr measures the whole rest of the text on
 * every call, minutes on a 100,000-frame SVG; strchr stops at its match.
 */
static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	for (text = strchr(text, needle[0]); text; text = strchr(text + 1, needle[0]))
		if (!strncmp(text, needle, len))
			n++;
	return n;
}

static void svg_flame_graph(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_svg__write, p);

	(void)state;
	assert_true(!strncmp(text, "<?xml", 5));
	assert_non_null(strstr(text, "data-total=\"100000000\""));
	/*
	 * all; sleep, its state and comm, 3 user and 2 kernel frames; lock,
	 * lock:futex, its state and comm, 2 kernel frames.
	 */
	assert_int_equal(count_of(text, "<g class=\"f\" data-"), 15);
	assert_non_null(
	    strstr(text, "data-s=\"0\" data-v=\"100000000\" data-n=\"3\" data-d=\"0\""));
	assert_non_null(
	    strstr(text, "<title>lock:futex\n50.000 ms off CPU, 50.00%, 1 wait</title>"));
	assert_non_null(strstr(text, "data-k=\"kernel\" data-c=\"sleep\"><title>do_nanosleep\n"));
	/* Self-contained: no external reference of any kind. */
	assert_null(strstr(text, "href"));
	assert_int_equal(count_of(text, "http"), 1); /* the SVG namespace */
	assert_non_null(strstr(text, "]]></script>\n</svg>\n"));
	free(text);
	profile__free(p);
}

/* 10,000 distinct stacks: narrow frames merge, and every nanosecond stays in the picture. */
static void svg_many_stacks_stay_readable(void **state)
{
	struct profile *p;
	struct wait w;
	struct frame frames[4];
	char name[32], *text, *root;
	unsigned int i;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	w = a_wait(p, "many", "io");
	w.state = OFFCPU_STATE_UNINTERRUPTIBLE;
	w.pid = w.tid = 7;
	for (i = 0; i < 10000; i++) {
		frames[0] = kframe(p, 0xffffffff81000000ULL + i, "io_schedule");
		snprintf(name, sizeof(name), "handler_%u", i);
		frames[1] = kframe(p, 0xffffffff82000000ULL + i, name);
		frames[2] = kframe(p, 0xffffffff83000000ULL, "vfs_read");
		frames[3] = kframe(p, 0xffffffff84000000ULL, "ksys_read");
		w.kernel_stack = profile__intern_stack(p, frames, 4);
		w.duration_ns = i < 10 ? 1000000000ULL : 1000 + i;
		assert_int_equal(profile__add(p, &w), 0);
	}
	text = render(output_svg__write, p);
	root = strstr(text, "data-d=\"0\"");
	assert_non_null(root);
	assert_non_null(strstr(text, "<title>all\n"));
	/* The ten wide stacks stay; the 9,990 narrow ones become one frame. */
	assert_true(count_of(text, "<g class=\"f\" data-") < 40);
	assert_non_null(strstr(text, "<title>[9990 narrow frames]\n"));
	snprintf(name, sizeof(name), "data-total=\"%llu\"", (unsigned long long)p->total_ns);
	assert_non_null(strstr(text, name));
	free(text);
	profile__free(p);
}

/* json -> report -> json gives the same waits and counters. */
static void recording_round_trip(void **state)
{
	struct profile *p = fixture_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	char *text, *again;

	(void)state;
	p->counters[OFFCPU_CNT_SWITCHES] = 42;
	/* A recording that does not say how long it ran, as before it did. */
	text = render(output_json__write, p);
	assert_null(strstr(text, "\"recording_duration_ns\""));
	back = read_back(text, &all, true);
	assert_int_equal(back->total_count, 3);
	assert_int_equal(back->total_ns, 100000000);
	assert_int_equal(back->counters[OFFCPU_CNT_SWITCHES], 42);
	/* From the earliest start (clamped at 0 here) to the last end. */
	assert_int_equal(back->duration_ns, 3000);
	assert_int_equal(back->start_time_ns, 0);
	profile__free(back);
	free(text);

	/* One that does, as tracing writes them: the same recording again. */
	p->start_time_ns = 1700000000123456789ULL;
	p->duration_ns = 5000000000ULL;
	text = render(output_json__write, p);
	assert_non_null(strstr(text, ",\"recording_start_ns\":1700000000123456789,"
				     "\"recording_duration_ns\":5000000000}\n"));
	back = read_back(text, &all, true);
	assert_int_equal(back->start_time_ns, 1700000000123456789ULL);
	assert_int_equal(back->duration_ns, 5000000000ULL);
	again = render(output_json__write, back);
	assert_string_equal(again, text);
	free(again);
	profile__free(back);

	/* --state and -m apply to a report as to tracing. */
	all.min_duration_ns = 30000000;
	back = read_back(text, &all, false);
	assert_int_equal(back->total_count, 2);
	profile__free(back);
	free(text);
	profile__free(p);
}

/*
 * --short sample: waits kept by chance weigh more than their duration;
 * every total is by weight, the estimated part and its variance beside it.
 */
static void weights_and_estimates(void **state)
{
	struct profile *p = fixture_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct thread_account a = { .pid = 100,
				    .tid = 101,
				    .tracked_ns = 1000,
				    .exit_ns = 11000,
				    .run_ns = 2000,
				    .startup_ns = 500,
				    .recorded_ns = 5000,
				    .dropped_ns = 1500,
				    .unseen_ns = 0 };
	struct profile_entry **entries;
	struct wait w = p->waits[0];
	char *text, *again;
	size_t nr;

	(void)state;
	/* Two short waits --short sample kept at -m 1ms: 100 us and 400 us, 1 ms each. */
	w.end_ts_ns = 4000;
	w.duration_ns = 100000;
	w.weight_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);
	w.end_ts_ns = 5000;
	w.duration_ns = 400000;
	assert_int_equal(profile__add(p, &w), 0);
	assert_int_equal(p->total_ns, 102000000);
	assert_int_equal(p->total_count, 5);
	assert_int_equal(p->estimated.ns, 2000000);
	assert_int_equal(p->estimated.kept, 2);
	/* sum of w (w - d): 1e6 * 9e5 + 1e6 * 6e5 */
	assert_true(p->estimated.variance == 1.5e12);
	assert_int_equal(profile__sorted_entries(p, &entries, &nr), 0);
	assert_int_equal(entries[0]->key.tid, 101);
	assert_int_equal(entries[0]->total_ns, 52000000);
	/* 2 exact waits, and 1e6/1e5 + 1e6/4e5 = 12.5 estimated */
	assert_true(profile__estimated_count(entries[0]) == 14.5);
	free(entries);

	text = render(output_folded__write, p);
	assert_non_null(strstr(text, " 52000000\n"));
	free(text);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "offcpu: 5 waits, 102.000 ms off CPU in total (2.000 ms "
				     "estimated, ±61.2%)\n"));
	assert_non_null(strstr(text, "estimated ±error"));
	free(text);

	/* weight_ns on every wait, and back; a thread's account too. */
	p->start_time_ns = 1700000000123456789ULL;
	p->duration_ns = 5000000000ULL;
	assert_int_equal(profile__add_thread(p, &a), 0);
	assert_int_equal(p->counters[OFFCPU_CNT_UNACCOUNTED_NS], 1000);
	text = render(output_text__write, p);
	assert_non_null(strstr(text, "Thread coverage"));
	assert_non_null(strstr(text, "  90.00% "));
	free(text);
	text = render(output_json__write, p);
	assert_non_null(strstr(text, "\"duration_ns\":30000000,\"weight_ns\":30000000,"));
	assert_non_null(strstr(text, "\"duration_ns\":100000,\"weight_ns\":1000000,"));
	assert_non_null(strstr(text, "{\"type\":\"thread\",\"pid\":100,\"tid\":101,"));
	back = read_back(text, &all, true);
	assert_int_equal(back->total_ns, 102000000);
	assert_int_equal(back->estimated.ns, 2000000);
	assert_int_equal(back->nr_threads, 1);
	assert_int_equal(back->threads[0].dropped_ns, 1500);
	assert_int_equal(back->counters[OFFCPU_CNT_UNACCOUNTED_NS], 1000);
	again = render(output_json__write, back);
	assert_string_equal(again, text);
	free(again);
	profile__free(back);
	free(text);
	profile__free(p);
}

static void recording_errors(void **state)
{
	static const char *const bad[] = {
		"\n",						 /* no stats record: cut short */
		"{\"type\":\"offcpu\"}\n{\"type\":\"stats\"}\n", /* fields missing */
		"not json\n",
		"{\"type\":\"stats\"}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"asleep\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"kernel_stack\":[{\"addr\":"
		"\"12\"}]}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"stats\",\"switches\":-1}\n",
		"{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\",\"state\":"
		"\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0,\"user_stack\":[{\"addr\":"
		"\"0x12\",\"module\":\"/a\",\"module_off\":\"0x2\"}]}\n{\"type\":\"stats\"}\n",
		"{\"type\":\"stats\",\"recording_duration_ns\":\"5s\"}\n",
	};
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		FILE *in = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		assert_int_equal(profile__new(false, &p), 0);
		if (recording__read(in, "bad", &all, p) != -EINVAL)
			fail_msg("accepted bad recording %zu: %s", i, bad[i]);
		fclose(in);
		profile__free(p);
	}
}

/* A stream that gives its text, then fails as a disk does: EIO. */
static ssize_t read_then_fail(void *cookie, char *buf, size_t size)
{
	const char **text = cookie;
	size_t n = strlen(*text);

	if (!n) {
		errno = EIO;
		return -1;
	}
	n = n < size ? n : size;
	memcpy(buf, *text, n);
	*text += n;
	return (ssize_t)n;
}

/*
 * A read that fails is no end of file: its errno comes back (the caller
 * says it, exit 1), not "no stats record". A directory is the wrong
 * argument: said here, -EINVAL (exit 2).
 */
static void recording_read_errors(void **state)
{
	const char *text = "{\"type\":\"offcpu\",\"ts_ns\":1,\"pid\":1,\"tid\":1,\"comm\":\"a\","
			   "\"state\":\"idle\",\"wait\":\"x\",\"duration_ns\":1,\"cpu\":0}\n";
	cookie_io_functions_t io = { .read = read_then_fail };
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	struct profile *p;
	FILE *in;

	(void)state;
	in = fopencookie(&text, "r", io);
	assert_non_null(in);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(recording__read(in, "disk", &all, p), -EIO);
	fclose(in);
	profile__free(p);

	in = fopen("/", "r");
	assert_non_null(in);
	assert_int_equal(profile__new(false, &p), 0);
	assert_int_equal(recording__read(in, "/", &all, p), -EINVAL);
	fclose(in);
	profile__free(p);
}

/*
 * Beside the fixture, what else a frame can carry: a kernel module, a
 * demangled symbol, a build ID, source lines and inlined functions, and
 * one code path in two processes at other addresses (ASLR).
 */
static struct profile *full_profile(bool keep_waits)
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

/* Each mapping's file name in order of the profile, and its memory limit. */
static size_t pprof_mappings(const char *main_binary, const char *names[8], uint64_t limits[8])
{
	struct profile *p = fixture_profile(false);
	struct output_opts opts = { 0 };
	char *gz = NULL;
	size_t gz_len = 0, len, at = 0, nr = 0, nr_strings = 0, i;
	FILE *out = open_memstream(&gz, &gz_len);
	uint64_t name_index[8];
	const char *strings[128];
	struct pb_field f, g;
	uint8_t *pb;

	if (main_binary)
		assert_int_equal(profile__set_main_binary(p, main_binary), 0);
	assert_int_equal(output_pprof__write(out, p, &opts), 0);
	fclose(out);
	pb = gunzip(gz, gz_len, &len);
	while (next_field(pb, len, &at, &f)) {
		size_t inner = 0;

		if (f.number == 6 && nr_strings < 128)
			strings[nr_strings++] = strndup((const char *)f.data, f.len);
		if (f.number != 3)
			continue;
		assert_true(nr < 8);
		limits[nr] = 0;
		while (next_field(f.data, f.len, &inner, &g)) {
			if (g.number == 1) /* IDs go 1, 2, ... in order */
				assert_int_equal(g.value, nr + 1);
			if (g.number == 3)
				limits[nr] = g.value;
			if (g.number == 5)
				name_index[nr] = g.value;
		}
		nr++;
	}
	for (i = 0; i < nr; i++)
		names[i] = strdup(strings[name_index[i]]);
	for (i = 0; i < nr_strings; i++)
		free((char *)strings[i]);
	free(pb);
	free(gz);
	profile__free(p);
	return nr;
}

/*
 * pprof takes the first mapping for the main binary ("File:"): the one
 * named, whether frames are in it (they keep their span) or not (it spans
 * nothing); without one, the first module met, the kernel's, leaf first.
 */
static void pprof_main_binary_is_the_first_mapping(void **state)
{
	const char *names[8];
	uint64_t limits[8];
	size_t nr, i;

	(void)state;
	nr = pprof_mappings("/usr/bin/app", names, limits);
	assert_int_equal(nr, 2);
	assert_string_equal(names[0], "/usr/bin/app");
	assert_true(limits[0] > 0);
	assert_string_equal(names[1], "[kernel.kallsyms]");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
	nr = pprof_mappings("/usr/sbin/offcpu", names, limits);
	assert_int_equal(nr, 3);
	assert_string_equal(names[0], "/usr/sbin/offcpu");
	assert_int_equal(limits[0], 0);
	assert_string_equal(names[1], "[kernel.kallsyms]");
	assert_string_equal(names[2], "/usr/bin/app");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
	nr = pprof_mappings(NULL, names, limits);
	assert_int_equal(nr, 2);
	assert_string_equal(names[0], "[kernel.kallsyms]");
	for (i = 0; i < nr; i++)
		free((char *)names[i]);
}

/* The frame fields beyond addr, sym, off and module: named as pprof and perf users know them. */
static void json_frames_place_the_code(void **state)
{
	struct profile *p = full_profile(true);
	char *text = render(output_json__write, p);

	(void)state;
	assert_non_null(strstr(
	    text,
	    "\"user_stack\":[{\"addr\":\"0x7f0000009100\",\"sym\":\"std::mutex::lock()\","
	    "\"mangled\":\"_ZNSt5mutex4lockEv\",\"off\":0,\"module\":\"/usr/lib/libcxx.so.1\","
	    "\"module_off\":37120,\"build_id\":\"0123456789abcdef0123456789abcdef01234567\","
	    "\"file\":\"mutex.h\",\"line\":42,\"inlined\":[{\"sym\":\"lock_inner\","
	    "\"file\":\"inner.h\",\"line\":7},{\"sym\":\"lock_outer\"}]},"));
	/* A kernel frame's offset is its address, not said again. */
	assert_non_null(strstr(text, "{\"addr\":\"0xffffffffc0001234\",\"sym\":\"nvme_poll\","
				     "\"off\":0,\"module\":\"[nvme]\"},"));
	free(text);
	profile__free(p);
}

static uint8_t *pprof_of(const struct profile *p, size_t *len)
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
 * offcpu report -f pprof of a json recording is the profile that tracing
 * with -f pprof writes of the same waits: the same mappings (file offsets,
 * build IDs), locations, functions, samples, time and comments.
 */
static void pprof_of_recording_is_the_live_one(void **state)
{
	struct profile *live = full_profile(false), *recorded = full_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	size_t live_len, back_len;
	uint8_t *live_pb, *back_pb;
	char *text;

	(void)state;
	/* The main binary too, which the stats record carries. */
	assert_int_equal(profile__set_main_binary(live, "/usr/bin/app"), 0);
	assert_int_equal(profile__set_main_binary(recorded, "/usr/bin/app"), 0);
	text = render(output_json__write, recorded);
	assert_non_null(strstr(text, "\"recording_main_binary\":\"/usr/bin/app\""));
	back = read_back(text, &all, false);
	assert_string_equal(back->main_binary, "/usr/bin/app");
	live_pb = pprof_of(live, &live_len);
	back_pb = pprof_of(back, &back_len);
	assert_int_equal(back_len, live_len);
	assert_memory_equal(back_pb, live_pb, live_len);
	free(live_pb);
	free(back_pb);
	free(text);
	profile__free(back);
	profile__free(recorded);
	profile__free(live);
}

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

static struct profile *hostile_profile(bool keep_waits)
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

/* Unicode's table of well-formed UTF-8 (3-7), written apart from lib/utf8.c. */
static bool well_formed_utf8(const char *text, size_t len)
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

/* Nothing a terminal takes for a command: C0 but newline, DEL, C1 (UTF-8 C2 80..9F). */
static void assert_no_terminal_controls(const char *text, size_t len)
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

static void hostile_names_in_text_and_folded(void **state)
{
	struct profile *p = hostile_profile(false);
	char *text = render(output_text__write, p), *line, *end;
	size_t lines = 0, semicolons, spaces;

	(void)state;
	assert_no_terminal_controls(text, strlen(text));
	assert_non_null(strstr(text, "  \\x1b]0;PWN\\x07\\x1b[2J       66       66  "));
	assert_non_null(strstr(text, "  lock:x\\x1b[31m;y z\\x0a1 2\\u2029  "));
	assert_non_null(
	    strstr(text, "  \xef\xbf\xbe" REPLACEMENT "                 66       67  "));
	assert_non_null(strstr(text, "      f\\x1b[2J<&>_" REPLACEMENT "\n"));
	free(text);
	text = render_by(output_text__write, p, GROUP_BY_TITLE);
	assert_no_terminal_controls(text, strlen(text));
	assert_non_null(strstr(
	    text,
	    "  t\\x0d;\"'<>& \\x7f\\x9b" REPLACEMENT REPLACEMENT REPLACEMENT REPLACEMENT REPLACEMENT
	    "\xef\xbf\xbf\\u2028"));
	free(text);

	/* Folded: a name cannot add a frame, a line or a value. */
	text = render(output_folded__write, p);
	assert_no_terminal_controls(text, strlen(text));
	for (line = text; *line; line = end + 1, lines++) {
		end = strchr(line, '\n');
		assert_non_null(end);
		semicolons = spaces = 0;
		for (const char *c = line; c < end; c++) {
			semicolons += *c == ';';
			spaces += *c == ' ';
		}
		assert_int_equal(spaces, 1);
		/* comm, state, class, one user frame (and its inlined one), one kernel frame */
		assert_int_equal(semicolons,
				 memmem(line, (size_t)(end - line), "in\\x9b", 6) ? 5 : 4);
	}
	assert_int_equal(lines, 2);
	assert_non_null(strstr(text,
			       "\\x1b]0_PWN\\x07\\x1b[2J;[interruptible];"
			       "[lock:x\\x1b[31m_y_z\\x0a1_2\\u2029];f\\x1b[2J<&>_" REPLACEMENT
			       ";do_nanosleep_[k] 20000000\n"));
	assert_non_null(strstr(text,
			       "\xef\xbf\xbe" REPLACEMENT ";[interruptible];[sleep];l" REPLACEMENT
			       "_b\\x07.so+0x1200;in\\x9b\\x01_x;do_nanosleep_[k] 10000000\n"));
	free(text);

	/* --lines: the source file's name too. */
	{
		struct output_opts opts = { .group_by = GROUP_BY_TID, .lines = true };
		char *buf = NULL;
		size_t size = 0;
		FILE *out = open_memstream(&buf, &size);

		assert_int_equal(output_text__write(out, p, &opts), 0);
		fclose(out);
		assert_no_terminal_controls(buf, size);
		assert_non_null(strstr(buf, " (\\x1b[2Jx.c:3)\n"));
		free(buf);
	}
	profile__free(p);
}

static void hostile_names_in_json(void **state)
{
	struct profile *p = hostile_profile(true);
	char *text = render(output_json__write, p);

	(void)state;
	assert_true(well_formed_utf8(text, strlen(text)));
	assert_non_null(strstr(text, "\"comm\":\"\\u001b]0;PWN\\u0007\\u001b[2J\","));
	assert_non_null(strstr(text,
			       "\"title\":\"t\\r;\\\"'<>& \\u007f\\u009b" REPLACEMENT REPLACEMENT
				   REPLACEMENT REPLACEMENT REPLACEMENT "\xef\xbf\xbf\\u2028\","));
	assert_non_null(strstr(text, "\"wait\":\"lock:x\\u001b[31m;y z\\n1 2\\u2029\","));
	assert_non_null(strstr(text, "\"sym\":\"f\\u001b[2J<&>;" REPLACEMENT "\","));
	assert_non_null(strstr(text, "\"comm\":\"\xef\xbf\xbe" REPLACEMENT "\","));
	assert_non_null(
	    strstr(text, "\"module\":\"/tmp/d" REPLACEMENT "/l" REPLACEMENT " b\\u0007.so\","));
	free(text);
	profile__free(p);
}

static void hostile_names_in_svg(void **state)
{
	struct profile *p = hostile_profile(false);
	char *text = render(output_svg__write, p);
	size_t len = strlen(text), i;

	(void)state;
	/* XML 1.0's Char: no C0 but tab, LF and CR, no U+FFFE or U+FFFF. */
	assert_true(well_formed_utf8(text, len));
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			fail_msg("C0 byte 0x%02x at %zu", c, i);
	}
	assert_null(strstr(text, "\xef\xbf\xbe"));
	assert_null(strstr(text, "\xef\xbf\xbf"));
	assert_non_null(strstr(text, "<title>\\x1b]0;PWN\\x07\\x1b[2J\n"));
	assert_non_null(strstr(text, "<title>f\\x1b[2J&lt;&amp;&gt;_" REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>lock:x\\x1b[31m;y z\\x0a1 2\\u2029\n"));
	assert_non_null(strstr(text, "<title>" REPLACEMENT REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>in\\x9b\\x01_x\n"));
	free(text);
	profile__free(p);
}

/* Every string of the profile: UTF-8 (profile.proto's string type) with no terminal control. */
static void hostile_names_in_pprof(void **state)
{
	struct profile *p = hostile_profile(false);
	size_t len, at = 0;
	uint8_t *pb = pprof_of(p, &len);
	struct pb_field f;
	bool comm = false, title = false, function = false;

	(void)state;
	while (next_field(pb, len, &at, &f)) {
		if (f.number != 6)
			continue;
		assert_no_terminal_controls((const char *)f.data, f.len);
		comm |= f.len == strlen("\\x1b]0;PWN\\x07\\x1b[2J") &&
			!memcmp(f.data, "\\x1b]0;PWN\\x07\\x1b[2J", f.len);
		title |= f.len == strlen("t\\x0d;\"'<>& \\x7f\\x9b") + 5 * 3 + 3 + 6 &&
			 !memcmp(f.data, "t\\x0d;\"'<>& \\x7f\\x9b" REPLACEMENT, 21);
		function |= f.len == strlen("f\\x1b[2J<&>;" REPLACEMENT) &&
			    !memcmp(f.data, "f\\x1b[2J<&>;" REPLACEMENT, f.len);
	}
	assert_true(comm && title && function);
	free(pb);
	profile__free(p);
}

/*
 * offcpu report of a recording of such names shows what tracing showed:
 * the JSON keeps every character (escaped), and what no format can hold,
 * bytes that are no character, is U+FFFD in the recording as in every
 * format written live.
 */
static void hostile_names_read_back_the_same(void **state)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_opts *) = {
		output_text__write,
		output_folded__write,
		output_svg__write,
		output_json__write,
	};
	struct profile *live = hostile_profile(true), *back;
	struct id_list none = { 0 };
	struct recording_filter all = { .pids = &none,
					.tids = &none,
					.max_duration_ns = UINT64_MAX };
	char *recording = render(output_json__write, live), *a, *b;
	size_t live_len, back_len, i;
	uint8_t *live_pb, *back_pb;
	FILE *in = fmemopen(recording, strlen(recording), "r");

	(void)state;
	assert_int_equal(profile__new(true, &back), 0);
	assert_int_equal(recording__read(in, "hostile", &all, back), 0);
	fclose(in);
	for (i = 0; i < ARRAY_SIZE(writers); i++) {
		a = render(writers[i], live);
		b = render(writers[i], back);
		assert_string_equal(b, a);
		free(a);
		free(b);
	}
	a = render_by(output_text__write, live, GROUP_BY_TITLE);
	b = render_by(output_text__write, back, GROUP_BY_TITLE);
	assert_string_equal(b, a);
	free(a);
	free(b);
	live_pb = pprof_of(live, &live_len);
	back_pb = pprof_of(back, &back_len);
	assert_int_equal(back_len, live_len);
	assert_memory_equal(back_pb, live_pb, live_len);
	free(live_pb);
	free(back_pb);
	free(recording);
	profile__free(back);
	profile__free(live);
}

/*
 * A stack as deep as a recording may say: 100,000 frames. No format walks
 * it by recursion (the SVG's tree did, and overflowed the stack); each
 * writes it whole.
 */
#define DEEP_FRAMES 100000

static void deep_stack_in_every_format(void **state)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_opts *) = {
		output_text__write, output_folded__write, output_svg__write,
		output_json__write, output_pprof__write,
	};
	struct frame *frames = calloc(DEEP_FRAMES, sizeof(*frames));
	struct profile *p;
	struct wait w;
	char name[32], *text;
	size_t i, len;

	(void)state;
	assert_non_null(frames);
	assert_int_equal(profile__new(true, &p), 0);
	for (i = 0; i < DEEP_FRAMES; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		frames[i] = uframe(p, 0x1000 + i, name);
	}
	w = a_wait(p, "deep", "sleep");
	w.pid = w.tid = 5;
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.user_stack = profile__intern_stack(p, frames, DEEP_FRAMES);
	w.duration_ns = 1000000;
	assert_int_equal(profile__add(p, &w), 0);
	for (i = 0; i < ARRAY_SIZE(writers); i++) {
		if (writers[i] == output_pprof__write) {
			uint8_t *pb = pprof_of(p, &len);

			/* A location and a function for every frame. */
			assert_true(len > 2 * DEEP_FRAMES);
			free(pb);
			continue;
		}
		text = render(writers[i], p);
		assert_true(strlen(text) > DEEP_FRAMES);
		if (writers[i] == output_svg__write) {
			/* all, sleep, [interruptible], deep and every frame */
			assert_int_equal(count_of(text, "<g class=\"f\" data-"), DEEP_FRAMES + 4);
			assert_non_null(strstr(text, "data-d=\"100003\""));
		}
		if (writers[i] == output_folded__write)
			assert_non_null(
			    strstr(text, "deep;[interruptible];[sleep];f99999;f99998;"));
		free(text);
	}
	free(frames);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aggregation),
		cmocka_unit_test(exited_processes_merge),
		cmocka_unit_test(exited_wakers_merge),
		cmocka_unit_test(folded_golden),
		cmocka_unit_test(json_golden),
		cmocka_unit_test(weights_and_estimates),
		cmocka_unit_test(text_report),
		cmocka_unit_test(text_group_by),
		cmocka_unit_test(json_escaping),
		cmocka_unit_test(classification),
		cmocka_unit_test(formats_by_name_and_extension),
		cmocka_unit_test(protobuf_wire_format),
		cmocka_unit_test(pprof_encoding),
		cmocka_unit_test(pprof_main_binary_is_the_first_mapping),
		cmocka_unit_test(svg_flame_graph),
		cmocka_unit_test(svg_many_stacks_stay_readable),
		cmocka_unit_test(recording_round_trip),
		cmocka_unit_test(recording_errors),
		cmocka_unit_test(recording_read_errors),
		cmocka_unit_test(json_frames_place_the_code),
		cmocka_unit_test(pprof_of_recording_is_the_live_one),
		cmocka_unit_test(hostile_names_in_text_and_folded),
		cmocka_unit_test(hostile_names_in_json),
		cmocka_unit_test(hostile_names_in_svg),
		cmocka_unit_test(hostile_names_in_pprof),
		cmocka_unit_test(hostile_names_read_back_the_same),
		cmocka_unit_test(deep_stack_in_every_format),
		cmocka_unit_test(strings_held_survive_a_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
