// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline in the Trace Event Format, as Perfetto UI and
 * chrome://tracing open it: a track per thread, each wait a complete slice
 * on it, each wakeup a flow from the waker's track to the wait it ended,
 * and with -F each on-CPU sample an instant event on its thread's track.
 *
 * Perfetto's JSON importer sorts the events by time and then keeps, per
 * track, a stack of the slices open; what it does with them shapes this
 * file:
 * - a complete slice that starts inside another of its track and ends past
 *   it is dropped (slice_drop_overlapping_complete_event), so a slice
 *   nests or is disjoint, and two slices of a track never begin at the same
 *   nanosecond (which comes first would decide whether one is dropped);
 * - a flow's "s" binds to the slice on top of its track's stack, which is
 *   only popped when a later slice begins there: the waker, running at the
 *   wakeup, has no slice of its own then, so a short wakeup slice is drawn
 *   there for the "s" to bind to;
 * - the "f" ("bp":"e") binds to the top slice of the woken thread, the wait
 *   or its run-queue part, and must not come before its "s", or the flow
 *   has no start;
 * - at one ts, complete events sort before flow events;
 * - an instant event is a slice of no duration: drawn inside a wait or a
 *   wakeup slice, it would be the top slice a flow binds to. A sample is
 *   never taken inside its thread's wait but where the stamps of a wait
 *   dated at the start disagree with it, and may be inside a wakeup slice
 *   (a microsecond on a running thread): such a sample is left out, and
 *   counted.
 * DevTools' trace engine binds a flow event instead to the slice that
 * begins at its ts on its thread, with its cat: write_wakeups() serves both.
 * ts and dur are microseconds: written with three decimals, exact
 * nanoseconds, CLOCK_MONOTONIC as the recording's ts_ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "lib/json_writer.h"
#include "lib/u32_key.h"
#include "output/frame_names.h"
#include "output/output.h"
#include "trace/counters.h"

/* A wakeup slice on the waker's track lasts this long, or up to what comes next there. */
#define TRACE_WAKEUP_SLICE_NS 1000ULL
/*
 * Frames of each stack in a slice's args, leaf first: the rest is said as
 * a count. Perfetto keeps each distinct string once, but the file holds
 * them at every wait, most of its size (a wait of 12 kernel and 8 user
 * frames, with its slices and flow: 0.85 KB). The leaf's 16 say what a
 * timeline needs; the flame graph has the rest.
 */
#define TRACE_STACK_FRAMES 16
/*
 * Interrupts that woke a thread get a process of their own, a track per
 * CPU and context ("CPU 1 hardirq"), or per context where the recording
 * does not say the CPU: above PID_MAX_LIMIT (2^22), so no task's pid or
 * tid is theirs.
 */
#define TRACE_INTERRUPTS_PID 0x400001U
#define TRACE_INTERRUPT_CPUS_TID (TRACE_INTERRUPTS_PID + 4)

/*
 * The category of run-queue and wakeup slices and of the flows between
 * them: DevTools binds a flow event only to a slice of the same category.
 */
#define TRACE_SCHED_CAT "sched"

enum mark_kind {
	MARK_BEGIN, /* a wait's slice begins */
	MARK_RUNQ,  /* its run-queue slice begins */
	MARK_END,   /* both end */
	MARK_WAKEUP,
};

/*
 * Where slices of a track begin and end, and where its wakeups are: sorted,
 * they say how long each wakeup slice may be without crossing anything.
 */
struct mark {
	uint64_t ts;
	uint32_t tid; /* the track */
	uint32_t kind : 2;
	uint32_t wait : 30; /* MARK_WAKEUP: index of the wait it ended, in the profile */
};

struct named_thread {
	uint32_t tid;
};

/* Where a slice of a track is drawn, [start, end): no sample is drawn inside it. */
struct span {
	uint64_t start, end;
	uint32_t tid;
};

struct trace_writer {
	FILE *out;
	uint64_t start; /* where the recording began, CLOCK_MONOTONIC */
	struct json_writer w;
	const struct profile *p;
	const struct output_opts *opts;
	uint64_t lo, hi; /* what is drawn, CLOCK_MONOTONIC: the recording's, or the window's */
	struct hash_table *threads;	/* tids named so far */
	struct hash_table *processes;	/* pids named so far */
	struct hash_table *stack_texts; /* struct stack * -> its text */
	struct mark *marks;
	size_t nr_marks, marks_cap;
	/*
	 * Per wait, where the next wait of its thread begins (UINT64_MAX:
	 * none). A thread's waits do not overlap, but their stamps can: a wait
	 * dated from the kernel's stamps at the start overlapped the next one
	 * traced (qemu's main thread, preempted, then in ppoll 109 us after its
	 * "start"). The first is drawn up to the second.
	 */
	uint64_t *next_start;
	uint32_t *by_start; /* the waits drawn, by thread and start */
	size_t nr_by_start;
	struct span *spans;
	size_t nr_spans, spans_cap;
	uint64_t drawn, outside, hidden, cut, overlapped;
	uint64_t flows, flows_outside, flows_undrawn;
	uint64_t samples_drawn, samples_outside, samples_in_slices;
};

/* The part of a wait that is drawn, and where its wakeup goes. */
struct drawn_wait {
	uint64_t start, end;
	bool overlapped;     /* its end is the next wait's start (trace_writer::next_start) */
	uint64_t runq_start; /* 0: no run-queue slice */
	uint64_t wakeup;     /* 0: no flow */
};

static uint64_t hash_pointer(const void *key)
{
	return hash_table__hash_bytes(&key, sizeof(key), 0);
}

static bool equal_pointer(const void *a, const void *b)
{
	return a == b;
}

static void free_value(void *value)
{
	free(value);
}

/* Whether id is new to t, which then holds it; -ENOMEM. */
static int first_time(struct hash_table *t, uint32_t id, bool *added)
{
	return u32_key__find_or_add(t, id, sizeof(struct named_thread),
				    offsetof(struct named_thread, tid), added)
		   ? 0
		   : -ENOMEM;
}

static void begin_event(struct trace_writer *tw, const char *ph, const char *name, uint32_t pid,
			uint32_t tid)
{
	json_writer__begin_object(&tw->w);
	json_writer__member_string(&tw->w, "ph", ph);
	json_writer__member_string(&tw->w, "name", name);
	json_writer__member_u64(&tw->w, "pid", pid);
	json_writer__member_u64(&tw->w, "tid", tid);
}

static void metadata(struct trace_writer *tw, const char *kind, uint32_t pid, uint32_t tid,
		     const char *name)
{
	begin_event(tw, "M", kind, pid, tid);
	json_writer__key(&tw->w, "args");
	json_writer__begin_object(&tw->w);
	json_writer__member_string(&tw->w, "name", name);
	json_writer__end_object(&tw->w);
	json_writer__end_object(&tw->w);
	fputc('\n', tw->out);
}

/* thread_name and, the first time its process is seen, process_name. */
static int name_thread(struct trace_writer *tw, uint32_t pid, uint32_t tid, const char *comm,
		       const char *title)
{
	bool added;
	int err = first_time(tw->threads, tid, &added);

	if (err || !added)
		return err;
	metadata(tw, "thread_name", pid, tid, comm ? comm : "");
	err = first_time(tw->processes, pid, &added);
	if (!err && added)
		metadata(tw, "process_name", pid, tid, title ? title : comm ? comm : "");
	return err;
}

/* The waker's track: its thread's, or its interrupt context's on its CPU. */
static uint32_t waker_track(const struct waker *k)
{
	if (k->context == OFFCPU_WAKER_TASK)
		return k->tid;
	if (k->cpu == WAKER_CPU_UNKNOWN)
		return TRACE_INTERRUPTS_PID + k->context;
	return TRACE_INTERRUPT_CPUS_TID + 2 * k->cpu + (k->context == OFFCPU_WAKER_SOFTIRQ);
}

static int name_interrupts(struct trace_writer *tw, const struct waker *k)
{
	uint32_t tid = waker_track(k);
	char name[32];
	bool added;
	int err = first_time(tw->threads, tid, &added);

	if (err || !added)
		return err;
	if (k->cpu == WAKER_CPU_UNKNOWN)
		snprintf(name, sizeof(name), "%s", output__waker_context(k->context));
	else
		snprintf(name, sizeof(name), "CPU %u %s", k->cpu, output__waker_context(k->context));
	metadata(tw, "thread_name", TRACE_INTERRUPTS_PID, tid, name);
	err = first_time(tw->processes, TRACE_INTERRUPTS_PID, &added);
	if (!err && added)
		metadata(tw, "process_name", TRACE_INTERRUPTS_PID, tid, "interrupts");
	return err;
}

/* One frame a line, leaf first, cut at TRACE_STACK_FRAMES; made once per stack. */
static const char *stack_text(struct trace_writer *tw, const struct stack *s)
{
	char *text = hash_table__find(tw->stack_texts, s), name[512];
	size_t cap = 0;
	uint32_t i;
	FILE *f;

	if (text)
		return text;
	f = open_memstream(&text, &cap);
	if (!f)
		return NULL;
	for (i = 0; i < s->nr && i < TRACE_STACK_FRAMES; i++) {
		frame_names__frame(&s->frames[i], name, sizeof(name));
		fprintf(f, "%s%s", i ? "\n" : "", name);
	}
	if (s->nr > TRACE_STACK_FRAMES)
		fprintf(f, "\n... %" PRIu32 " more frames", s->nr - TRACE_STACK_FRAMES);
	if (fclose(f) || !text) {
		free(text);
		return NULL;
	}
	if (hash_table__insert(tw->stack_texts, s, text)) {
		free(text);
		return NULL;
	}
	return text;
}

static int member_stack(struct trace_writer *tw, const char *key, const struct stack *s)
{
	const char *text;

	if (!s || !s->nr)
		return 0;
	text = stack_text(tw, s);
	if (!text)
		return -ENOMEM;
	json_writer__member_string(&tw->w, key, text);
	return 0;
}

static void member_us(struct trace_writer *tw, const char *key, uint64_t ns)
{
	json_writer__key(&tw->w, key);
	json_writer__us(&tw->w, ns);
}

static uint64_t wait_start(const struct wait *w)
{
	return w->end_ts_ns > w->duration_ns ? w->end_ts_ns - w->duration_ns : 0;
}

static int compare_starts(const void *a, const void *b, void *ctx)
{
	const struct wait *waits = ctx, *x = &waits[*(const uint32_t *)a],
			  *y = &waits[*(const uint32_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (wait_start(x) != wait_start(y))
		return wait_start(x) < wait_start(y) ? -1 : 1;
	return x->end_ts_ns < y->end_ts_ns ? -1 : x->end_ts_ns > y->end_ts_ns;
}

/* trace_writer::next_start, of the waits drawn (idle loops may be hidden). */
static int find_next_starts(struct trace_writer *tw)
{
	size_t i, n = 0, nr = tw->p->nr_waits;
	uint32_t *order = malloc((nr ? nr : 1) * sizeof(*order));

	tw->by_start = order;
	tw->next_start = malloc((nr ? nr : 1) * sizeof(*tw->next_start));
	if (!order || !tw->next_start)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		tw->next_start[i] = UINT64_MAX;
		if (!output__hides(tw->opts, &tw->p->waits[i]))
			order[n++] = (uint32_t)i;
	}
	qsort_r(order, n, sizeof(*order), compare_starts, (void *)tw->p->waits);
	for (i = 0; i + 1 < n; i++) {
		if (tw->p->waits[order[i]].tid == tw->p->waits[order[i + 1]].tid)
			tw->next_start[order[i]] = wait_start(&tw->p->waits[order[i + 1]]);
	}
	tw->nr_by_start = n;
	return 0;
}

/* Where the wait of index i is drawn to, before the window cuts it. */
static uint64_t drawn_end(const struct trace_writer *tw, uint32_t i)
{
	uint64_t end = tw->p->waits[i].end_ts_ns;

	return tw->next_start[i] < end ? tw->next_start[i] : end;
}

/*
 * Where a task's wakeup of w is drawn on the waker's track. The wakeup
 * time is the switch-in less the run-queue time, which the kernel counts
 * from the enqueue; a thread of an idle CPU is enqueued there only when
 * that CPU takes the waker's IPI, up to 0.1 ms after the waker's futex
 * wake in a 2-CPU VM, and in 10 of 12 condvar handoffs the waker was in
 * a wait of its own by then. It woke w while it ran: the wakeup is moved
 * to just before that wait, TRACE_WAKEUP_SLICE_NS before it or halfway
 * back to where the waker began running, whichever is later.
 */
static uint64_t wakeup_while_running(const struct trace_writer *tw, const struct wait *w,
				     uint64_t wakeup)
{
	const struct wait *waits = tw->p->waits;
	uint32_t tid = w->waker.tid, k;
	size_t lo = 0, hi = tw->nr_by_start;
	uint64_t asleep, ran = wait_start(w), back;

	/* The waker's last wait that began by the wakeup. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct wait *x = &waits[tw->by_start[mid]];

		if (x->tid < tid || (x->tid == tid && wait_start(x) <= wakeup))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || waits[tw->by_start[lo - 1]].tid != tid)
		return wakeup;
	k = tw->by_start[lo - 1];
	asleep = wait_start(&waits[k]);
	if (drawn_end(tw, k) <= wakeup)
		return wakeup;
	if (lo >= 2 && waits[tw->by_start[lo - 2]].tid == tid &&
	    drawn_end(tw, tw->by_start[lo - 2]) > ran)
		ran = drawn_end(tw, tw->by_start[lo - 2]);
	if (asleep <= ran)
		return wakeup;
	back = (asleep - ran) / 2;
	if (back > TRACE_WAKEUP_SLICE_NS + 1)
		back = TRACE_WAKEUP_SLICE_NS + 1;
	/* Less leaves no room for the wakeup slice and its arrow: drawn from the waker's wait. */
	return back >= 4 ? asleep - back : wakeup;
}

static bool draw(const struct trace_writer *tw, size_t index, struct drawn_wait *d);

/* Room for the marks of every wait: counted first, not doubled into (half of it spare). */
static int alloc_marks(struct trace_writer *tw)
{
	struct drawn_wait d;
	size_t i, n = 0;

	for (i = 0; i < tw->p->nr_waits; i++) {
		const struct wait *w = &tw->p->waits[i];

		if (!output__hides(tw->opts, w) && draw(tw, i, &d))
			n += 2 + (d.runq_start != 0) + (d.wakeup != 0);
	}
	tw->marks = malloc((n ? n : 1) * sizeof(*tw->marks));
	tw->marks_cap = n;
	/* A span per wait drawn and per wakeup slice: fewer than its marks. */
	tw->spans = malloc((n ? n : 1) * sizeof(*tw->spans));
	tw->spans_cap = n;
	return tw->marks && tw->spans ? 0 : -ENOMEM;
}

static int add_span(struct trace_writer *tw, uint32_t tid, uint64_t start, uint64_t end)
{
	if (tw->nr_spans == tw->spans_cap)
		return -EOVERFLOW;
	tw->spans[tw->nr_spans++] = (struct span){ .start = start, .end = end, .tid = tid };
	return 0;
}

static int add_mark(struct trace_writer *tw, uint64_t ts, uint32_t tid, enum mark_kind kind,
		    size_t wait)
{
	if (tw->nr_marks == tw->marks_cap)
		return -EOVERFLOW;
	tw->marks[tw->nr_marks++] =
	    (struct mark){ .ts = ts, .tid = tid, .kind = kind, .wait = (uint32_t)wait };
	return 0;
}

/*
 * What of w falls in [lo, hi), and where its wakeup is drawn: moved, by
 * the few nanoseconds needed, to where a flow can end inside the slice
 * after it began (a wakeup at the switch-in, runq_ns 0, is 3 ns early).
 * false: nothing of it is drawn.
 */
static bool draw(const struct trace_writer *tw, size_t index, struct drawn_wait *d)
{
	const struct wait *w = &tw->p->waits[index];
	uint64_t start = wait_start(w), wakeup = w->end_ts_ns - w->runq_ns;

	memset(d, 0, sizeof(*d));
	d->start = start > tw->lo ? start : tw->lo;
	d->end = w->end_ts_ns < tw->hi ? w->end_ts_ns : tw->hi;
	if (tw->next_start[index] < d->end) {
		d->end = tw->next_start[index];
		d->overlapped = true;
	}
	if (d->end <= d->start && !(d->end == d->start && w->duration_ns == 0 && start >= tw->lo))
		return false;
	if (w->runq_ns && w->runq_ns < w->duration_ns && wakeup > d->start && wakeup < d->end)
		d->runq_start = wakeup;
	if (w->waker.context == OFFCPU_WAKER_TASK)
		wakeup = wakeup_while_running(tw, w, wakeup);
	if (output__waker_context(w->waker.context) && wakeup >= d->start && wakeup <= d->end &&
	    d->end - d->start >= 4) {
		if (wakeup < d->start + 1)
			wakeup = d->start + 1;
		if (wakeup > d->end - 3)
			wakeup = d->end - 3;
		d->wakeup = wakeup;
	}
	return true;
}

static int write_args(struct trace_writer *tw, const struct wait *w, const struct drawn_wait *d,
		      uint64_t start)
{
	const struct waker *k = &w->waker;
	bool edge_start, edge_end;
	uint32_t i;
	int err;

	json_writer__key(&tw->w, "args");
	json_writer__begin_object(&tw->w);
	json_writer__member_string(&tw->w, "state", states__name(w->state));
	json_writer__member_u64(&tw->w, "duration_ns", w->duration_ns);
	json_writer__member_u64(&tw->w, "blocked_ns", w->duration_ns - w->runq_ns);
	json_writer__member_u64(&tw->w, "runq_ns", w->runq_ns);
	if (w->weight_ns && w->weight_ns != w->duration_ns)
		json_writer__member_u64(&tw->w, "weight_ns", w->weight_ns);
	json_writer__member_u64(&tw->w, "cpu", w->cpu);
	if (profile__open_name(w->open))
		json_writer__member_string(&tw->w, "open", profile__open_name(w->open));
	edge_start = d->start > start;
	edge_end = !d->overlapped && d->end < w->end_ts_ns;
	if (edge_start || edge_end)
		json_writer__member_string(&tw->w, "drawn_to_edge",
					   edge_start && edge_end ? "both"
					   : edge_start		  ? "start"
								  : "end");
	if (d->overlapped)
		json_writer__member_u64(&tw->w, "overlaps_next_wait_ns", w->end_ts_ns - d->end);
	if (k->context == OFFCPU_WAKER_TASK) {
		json_writer__member_string(&tw->w, "waker", k->comm ? k->comm : "");
		json_writer__member_u64(&tw->w, "waker_tid", k->tid);
	} else if (output__waker_context(k->context)) {
		json_writer__member_string(&tw->w, "waker", output__waker_context(k->context));
		json_writer__member_string(&tw->w, "interrupted", k->comm ? k->comm : "");
		json_writer__member_u64(&tw->w, "interrupted_tid", k->tid);
		if (k->cpu != WAKER_CPU_UNKNOWN)
			json_writer__member_u64(&tw->w, "waker_cpu", k->cpu);
	}
	if (w->cgroup)
		json_writer__member_string(&tw->w, "cgroup", w->cgroup);
	if (w->object) {
		char object[512];

		output__object_name(w->object, object, sizeof(object));
		json_writer__member_string(&tw->w, "object", object);
		if (w->object->holder_tid) {
			json_writer__member_string(&tw->w, "holder", w->object->holder_comm ?: "");
			json_writer__member_u64(&tw->w, "holder_tid", w->object->holder_tid);
		}
	}
	if (w->labels) {
		json_writer__key(&tw->w, "labels");
		json_writer__begin_object(&tw->w);
		for (i = 0; i < w->labels->nr; i++)
			json_writer__member_string(&tw->w, w->labels->items[i].name,
						   w->labels->items[i].value);
		json_writer__end_object(&tw->w);
	}
	err = member_stack(tw, "kernel_stack", w->kernel_stack);
	err = err ?: member_stack(tw, "user_stack", w->user_stack);
	err = err ?: member_stack(tw, "waker_kernel_stack", w->waker_kernel_stack);
	err = err ?: member_stack(tw, "waker_user_stack", w->waker_user_stack);
	json_writer__end_object(&tw->w);
	return err;
}

/* The wait's slice, its run-queue part nested in it, and its marks. */
static int write_wait(struct trace_writer *tw, const struct wait *w, size_t index)
{
	uint64_t start = wait_start(w);
	struct drawn_wait d;
	int err;

	if (output__hides(tw->opts, w)) {
		tw->hidden++;
		return 0;
	}
	if (!draw(tw, index, &d)) {
		tw->outside++;
		return 0;
	}
	err = name_thread(tw, w->pid, w->tid, w->comm, w->title);
	if (err)
		return err;
	tw->drawn++;
	if (d.start > start || d.end < w->end_ts_ns)
		tw->cut++;
	tw->overlapped += d.overlapped;
	begin_event(tw, "X", w->wait_class, w->pid, w->tid);
	json_writer__member_string(&tw->w, "cat", w->open ? "wait,open" : "wait");
	member_us(tw, "ts", d.start);
	member_us(tw, "dur", d.end - d.start);
	err = write_args(tw, w, &d, start);
	json_writer__end_object(&tw->w);
	fputc('\n', tw->out);
	if (err)
		return err;
	if (d.runq_start) {
		begin_event(tw, "X", "runq", w->pid, w->tid);
		json_writer__member_string(&tw->w, "cat", TRACE_SCHED_CAT);
		member_us(tw, "ts", d.runq_start);
		member_us(tw, "dur", d.end - d.runq_start);
		json_writer__end_object(&tw->w);
		fputc('\n', tw->out);
	}
	err = add_mark(tw, d.start, w->tid, MARK_BEGIN, index);
	err = err ?: add_mark(tw, d.end, w->tid, MARK_END, index);
	err = err ?: add_span(tw, w->tid, d.start, d.end);
	if (!err && d.runq_start)
		err = add_mark(tw, d.runq_start, w->tid, MARK_RUNQ, index);
	if (err)
		return err;
	if (!output__waker_context(w->waker.context))
		return 0;
	if (!d.wakeup) {
		if (d.overlapped)
			tw->flows_undrawn++;
		else
			tw->flows_outside++;
		return 0;
	}
	return add_mark(tw, d.wakeup, waker_track(&w->waker), MARK_WAKEUP, index);
}

static int compare_marks(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* The short slice on the waker's track that the flows of a wakeup leave from. */
static int write_wakeup_slice(struct trace_writer *tw, const struct wait *w, uint64_t ts,
			      uint64_t dur, size_t count)
{
	const struct waker *k = &w->waker;
	bool task = k->context == OFFCPU_WAKER_TASK;
	uint32_t pid = task ? k->pid : TRACE_INTERRUPTS_PID;
	int err =
	    task ? name_thread(tw, k->pid, k->tid, k->comm, NULL) : name_interrupts(tw, k);

	if (err)
		return err;
	begin_event(tw, "X", "wakeup", pid, waker_track(k));
	json_writer__member_string(&tw->w, "cat", TRACE_SCHED_CAT);
	member_us(tw, "ts", ts);
	member_us(tw, "dur", dur);
	json_writer__key(&tw->w, "args");
	json_writer__begin_object(&tw->w);
	json_writer__member_string(&tw->w, "woke", w->comm);
	json_writer__member_u64(&tw->w, "woke_tid", w->tid);
	if (count > 1)
		json_writer__member_u64(&tw->w, "wakeups", count);
	if (!task) {
		json_writer__member_string(&tw->w, "interrupted", k->comm ? k->comm : "");
		json_writer__member_u64(&tw->w, "interrupted_tid", k->tid);
	}
	json_writer__end_object(&tw->w);
	json_writer__end_object(&tw->w);
	fputc('\n', tw->out);
	return 0;
}

static void write_flow(struct trace_writer *tw, const char *ph, uint32_t pid, uint32_t tid,
		       uint64_t ts, size_t id)
{
	begin_event(tw, ph, "wakeup", pid, tid);
	json_writer__member_string(&tw->w, "cat", TRACE_SCHED_CAT);
	json_writer__member_u64(&tw->w, "id", id);
	member_us(tw, "ts", ts);
	if (ph[0] == 'f')
		json_writer__member_string(&tw->w, "bp", "e");
	json_writer__end_object(&tw->w);
	fputc('\n', tw->out);
}

/*
 * The wakeups of one track at one time, marks[from, to): one slice for
 * them, lasting TRACE_WAKEUP_SLICE_NS or up to next (the track's next mark).
 * Where nothing of the track is at the nanosecond before (room_before),
 * the slice begins there, with each flow's "s", and the "f" is at the
 * wakeup, where the woken wait's run-queue slice begins: Perfetto sorts
 * a complete event before a flow event of the same ts (older versions
 * keep the file's order, slices first), and DevTools binds a flow event
 * to the slice of its thread, ts and cat, each of a flow at its own ts.
 * Otherwise (no run-queue slice, a wakeup moved to fit, a mark just
 * before) the slice begins at the wakeup, the "s" inside it and the "f" a
 * nanosecond later in the wait: Perfetto's arrow, not DevTools'.
 * A waker in a wait of its own then (its stamps and its wakee's disagree:
 * seen of kworkers woken by softirqs) gets no slice: one nested in its wait
 * would stay on top of its track's stack after it ended, and a flow ending
 * in that wait later would bind to it. Its "s" binds to the wait instead.
 */
static int write_wakeups(struct trace_writer *tw, size_t from, size_t to, uint64_t next,
			 bool inside, bool room_before)
{
	uint64_t ts = tw->marks[from].ts, start = room_before && !inside ? ts - 1 : ts;
	/*
	 * Up to the nanosecond before the next mark, which the next wakeup
	 * slice may begin at; at least one.
	 */
	uint64_t dur = next - start > 2 ? next - start - 1 : 1;
	bool sliced = false;
	size_t i;
	int err;

	if (dur > TRACE_WAKEUP_SLICE_NS)
		dur = TRACE_WAKEUP_SLICE_NS;
	for (i = from; i < to; i++) {
		const struct wait *w = &tw->p->waits[tw->marks[i].wait];
		uint64_t room, s_ts, f_ts, half;
		struct drawn_wait d;

		draw(tw, tw->marks[i].wait, &d);
		room = d.end - ts;
		half = dur / 2 < (room - 1) / 2 ? dur / 2 : (room - 1) / 2;
		if (start < ts && d.runq_start == ts) {
			s_ts = start;
			f_ts = ts;
		} else if (half >= 1 && ts + half < start + dur && half + 1 < room) {
			s_ts = ts + half;
			f_ts = s_ts + 1;
		} else {
			/* No room for the arrow: a wait shorter than 4 ns, or a mark 1 ns after. */
			tw->flows_undrawn++;
			continue;
		}
		if (!sliced && !inside) {
			err = write_wakeup_slice(tw, w, start, dur, to - from);
			err = err ?: add_span(tw, waker_track(&w->waker), start, start + dur);
			if (err)
				return err;
			sliced = true;
		}
		write_flow(tw, "s",
			   w->waker.context == OFFCPU_WAKER_TASK ? w->waker.pid
								 : TRACE_INTERRUPTS_PID,
			   waker_track(&w->waker), s_ts, (size_t)tw->marks[i].wait + 1);
		write_flow(tw, "f", w->pid, w->tid, f_ts, (size_t)tw->marks[i].wait + 1);
		tw->flows++;
	}
	return 0;
}

static int write_all_wakeups(struct trace_writer *tw)
{
	size_t i = 0, j, k;
	int err;

	/* Waits of the track open here: what ends here has ended, what begins has begun. */
	long open = 0;

	qsort(tw->marks, tw->nr_marks, sizeof(*tw->marks), compare_marks);
	while (i < tw->nr_marks) {
		const struct mark *m = &tw->marks[i];
		bool wakeups = false;
		uint64_t next = UINT64_MAX;

		if (i && tw->marks[i - 1].tid != m->tid)
			open = 0;
		for (j = i;
		     j < tw->nr_marks && tw->marks[j].tid == m->tid && tw->marks[j].ts == m->ts;
		     j++) {
			open += tw->marks[j].kind == MARK_BEGIN;
			open -= tw->marks[j].kind == MARK_END;
			wakeups |= tw->marks[j].kind == MARK_WAKEUP;
		}
		if (j < tw->nr_marks && tw->marks[j].tid == m->tid)
			next = tw->marks[j].ts;
		if (wakeups) {
			bool room_before = m->ts > 1 && (!i || tw->marks[i - 1].tid != m->tid ||
							 tw->marks[i - 1].ts < m->ts - 1);

			for (k = i; tw->marks[k].kind != MARK_WAKEUP; k++)
				;
			err = write_wakeups(tw, k, j, next, open > 0, room_before);
			if (err)
				return err;
		}
		i = j;
	}
	return 0;
}

static int compare_spans(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether ts is inside a slice drawn on track tid; the spans sorted, their ends carried. */
static bool in_a_slice(const struct trace_writer *tw, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = tw->nr_spans;

	/* The last span of the track that begins by ts. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct span *x = &tw->spans[mid];

		if (x->tid < tid || (x->tid == tid && x->start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && tw->spans[lo - 1].tid == tid && ts < tw->spans[lo - 1].end;
}

/* -F: each sample in the window an instant event, its stacks in its args. */
static int write_samples(struct trace_writer *tw)
{
	const struct profile_samples *samples = &tw->p->oncpu;
	size_t i;
	int err = 0;

	qsort(tw->spans, tw->nr_spans, sizeof(*tw->spans), compare_spans);
	/* Each span ends where the track's slices begun by then end: a nested one is inside. */
	for (i = 1; i < tw->nr_spans; i++) {
		if (tw->spans[i].tid == tw->spans[i - 1].tid &&
		    tw->spans[i].end < tw->spans[i - 1].end)
			tw->spans[i].end = tw->spans[i - 1].end;
	}
	for (i = 0; i < samples->nr && !err; i++) {
		const struct wait *s = &samples->list[i];

		if (s->end_ts_ns < tw->lo || s->end_ts_ns >= tw->hi) {
			tw->samples_outside++;
			continue;
		}
		if (in_a_slice(tw, s->tid, s->end_ts_ns)) {
			tw->samples_in_slices++;
			continue;
		}
		err = name_thread(tw, s->pid, s->tid, s->comm, s->title);
		if (err)
			break;
		tw->samples_drawn++;
		begin_event(tw, "i", "on-cpu", s->pid, s->tid);
		json_writer__member_string(&tw->w, "cat", "oncpu");
		json_writer__member_string(&tw->w, "s", "t");
		member_us(tw, "ts", s->end_ts_ns);
		json_writer__key(&tw->w, "args");
		json_writer__begin_object(&tw->w);
		json_writer__member_u64(&tw->w, "cpu", s->cpu);
		json_writer__member_u64(&tw->w, "weight_ns", s->duration_ns);
		if (s->cgroup)
			json_writer__member_string(&tw->w, "cgroup", s->cgroup);
		err = member_stack(tw, "kernel_stack", s->kernel_stack);
		err = err ?: member_stack(tw, "user_stack", s->user_stack);
		json_writer__end_object(&tw->w);
		json_writer__end_object(&tw->w);
		fputc('\n', tw->out);
	}
	return err;
}

/* Where the recording began: its window, else its first wait (recordings before the window). */
static uint64_t recording_start(const struct profile *p)
{
	uint64_t first = UINT64_MAX;
	size_t i;

	if (p->window_start_ns)
		return p->window_start_ns;
	for (i = 0; i < p->nr_waits; i++) {
		const struct wait *w = &p->waits[i];
		uint64_t start = wait_start(w);

		if (start < first)
			first = start;
	}
	return first == UINT64_MAX ? 0 : first;
}

/* What the trace says of itself, for a reader to know what it left out. */
static void write_other_data(struct trace_writer *tw)
{
	struct json_writer *w = &tw->w;
	unsigned int i;

	json_writer__key(w, "otherData");
	json_writer__begin_object(w);
	json_writer__member_string(w, "generator", "offcpu");
	json_writer__member_string(w, "clock", "CLOCK_MONOTONIC");
	json_writer__member_u64(w, "recording_start_ts_ns", tw->start);
	json_writer__member_u64(w, "drawn_from_ts_ns", tw->lo);
	if (tw->hi != UINT64_MAX)
		json_writer__member_u64(w, "drawn_to_ts_ns", tw->hi);
	json_writer__member_u64(w, "waits_drawn", tw->drawn);
	json_writer__member_u64(w, "waits_drawn_to_an_edge", tw->cut);
	json_writer__member_u64(w, "waits_cut_at_the_next", tw->overlapped);
	json_writer__member_u64(w, "waits_outside_the_window", tw->outside);
	json_writer__member_u64(w, "waits_hidden_idle", tw->hidden);
	json_writer__member_u64(w, "wakeup_flows", tw->flows);
	json_writer__member_u64(w, "wakeups_outside_the_window", tw->flows_outside);
	json_writer__member_u64(w, "wakeups_without_room_for_a_flow", tw->flows_undrawn);
	if (tw->p->oncpu.period_ns || tw->p->oncpu.nr) {
		json_writer__member_u64(w, "oncpu_samples_drawn", tw->samples_drawn);
		json_writer__member_u64(w, "oncpu_samples_outside_the_window",
					tw->samples_outside);
		json_writer__member_u64(w, "oncpu_samples_inside_a_slice", tw->samples_in_slices);
	}
	json_writer__key(w, "counters");
	json_writer__begin_object(w);
	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		json_writer__member_u64(w, counters__name(i), tw->p->counters[i]);
	json_writer__end_object(w);
	json_writer__end_object(w);
}

int output_trace__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct trace_writer tw = { .out = out, .p = p, .opts = opts };
	uint64_t start = recording_start(p);
	size_t i;
	int err = -ENOMEM;

	/* A mark holds a wait's index in 30 bits. */
	if (p->nr_waits >= (1U << 30))
		return -E2BIG;
	tw.start = start;
	/* A window past the clock's range (--from 300000000m) is the clock's end. */
	tw.lo = opts->from_ns > UINT64_MAX - start ? UINT64_MAX : start + opts->from_ns;
	tw.hi = !opts->to_ns || opts->to_ns > UINT64_MAX - start ? UINT64_MAX : start + opts->to_ns;
	tw.threads = hash_table__new(u32_key__hash, u32_key__equal);
	tw.processes = hash_table__new(u32_key__hash, u32_key__equal);
	tw.stack_texts = hash_table__new(hash_pointer, equal_pointer);
	if (!tw.threads || !tw.processes || !tw.stack_texts || find_next_starts(&tw) ||
	    alloc_marks(&tw))
		goto out;
	json_writer__init(&tw.w, out);
	json_writer__begin_object(&tw.w);
	json_writer__key(&tw.w, "traceEvents");
	json_writer__begin_array(&tw.w);
	fputc('\n', out);
	err = 0;
	for (i = 0; i < p->nr_waits && !err; i++)
		err = write_wait(&tw, &p->waits[i], i);
	err = err ?: write_all_wakeups(&tw);
	err = err ?: write_samples(&tw);
	if (err)
		goto out;
	json_writer__end_array(&tw.w);
	write_other_data(&tw);
	json_writer__end_object(&tw.w);
	fputc('\n', out);
out:
	hash_table__free_values(tw.threads, free_value);
	hash_table__free_values(tw.processes, free_value);
	hash_table__free_values(tw.stack_texts, free_value);
	free(tw.marks);
	free(tw.spans);
	free(tw.next_start);
	free(tw.by_start);
	return err;
}
