// SPDX-License-Identifier: GPL-2.0
/* JSON Lines: one object per wait and per on-CPU sample, then one stats object. */
#include <linux/types.h>

#include "classify/states.h"
#include "lib/json_writer.h"
#include "output/output.h"
#include "profile/recording_schema.h"
#include "trace/counters.h"

/* The functions inlined at a frame, innermost first: each called from the next. */
static void write_inlined(struct json_writer *w, const struct frame_inline *in)
{
	json_writer__key(w, REC_INLINED);
	json_writer__begin_array(w);
	for (; in; in = in->caller) {
		json_writer__begin_object(w);
		json_writer__member_string(w, REC_SYM, in->function);
		if (in->file) {
			json_writer__member_string(w, REC_FILE, in->file);
			json_writer__member_u64(w, REC_LINE, in->line);
		}
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static void write_stack(struct json_writer *w, const struct stack *s)
{
	uint32_t i;

	json_writer__begin_array(w);
	for (i = 0; s && i < s->nr; i++) {
		const struct frame *f = &s->frames[i];
		uint64_t start;

		json_writer__begin_object(w);
		json_writer__key(w, REC_ADDR);
		json_writer__hex(w, f->addr);
		if (!f->kernel && unnamed_function__start(f->sym, f->module, &start)) {
			json_writer__key(w, REC_FUNC_START);
			json_writer__hex(w, start);
		} else if (f->sym) {
			json_writer__member_string(w, REC_SYM, f->sym);
			if (f->system_name)
				json_writer__member_string(w, REC_MANGLED, f->system_name);
			json_writer__member_u64(w, REC_OFF, f->off);
		}
		if (f->module) {
			json_writer__member_string(w, REC_MODULE, f->module);
			/* A kernel frame's offset is its address: said once is enough. */
			if (!f->kernel)
				json_writer__member_u64(w, REC_MODULE_OFF, f->module_off);
			if (f->build_id)
				json_writer__member_string(w, REC_BUILD_ID, f->build_id);
		}
		if (f->file) {
			json_writer__member_string(w, REC_FILE, f->file);
			json_writer__member_u64(w, REC_LINE, f->line);
		}
		if (f->inlined)
			write_inlined(w, f->inlined);
		if (f->kind)
			json_writer__member_string(w, REC_KIND, f->kind);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

/* A task's context is implied: only interrupts name theirs. */
static void write_waker(struct json_writer *w, const struct wait *wait)
{
	const struct waker *k = &wait->waker;

	json_writer__member_u64(w, REC_RUNQ_NS, wait->runq_ns);
	if (!output__waker_context(k->context))
		return;
	json_writer__key(w, REC_WAKER);
	json_writer__begin_object(w);
	if (k->context != OFFCPU_WAKER_TASK)
		json_writer__member_string(w, REC_CONTEXT, output__waker_context(k->context));
	json_writer__member_u64(w, REC_PID, k->pid);
	json_writer__member_u64(w, REC_TID, k->tid);
	json_writer__member_string(w, REC_COMM, k->comm ? k->comm : "");
	if (k->cpu != WAKER_CPU_UNKNOWN)
		json_writer__member_u64(w, REC_CPU, k->cpu);
	if (wait->waker_kernel_stack || wait->waker_user_stack) {
		json_writer__key(w, REC_KERNEL_STACK);
		write_stack(w, wait->waker_kernel_stack);
		json_writer__key(w, REC_USER_STACK);
		write_stack(w, wait->waker_user_stack);
	}
	json_writer__end_object(w);
}

static void write_object(struct json_writer *w, const struct wait_object *o)
{
	char addr[24];

	if (!o)
		return;
	json_writer__key(w, REC_OBJECT);
	json_writer__begin_object(w);
	json_writer__member_string(w, REC_KIND, o->kind);
	json_writer__member_string(w, REC_NAME, o->name);
	if (o->addr) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, o->addr);
		json_writer__member_string(w, REC_ADDR, addr);
	}
	if (o->holder_tid) {
		json_writer__key(w, REC_HOLDER);
		json_writer__begin_object(w);
		json_writer__member_u64(w, REC_PID, o->holder_pid);
		json_writer__member_u64(w, REC_TID, o->holder_tid);
		json_writer__member_string(w, REC_COMM, o->holder_comm ? o->holder_comm : "");
		json_writer__end_object(w);
	}
	json_writer__end_object(w);
}

/* What a wait and a sample both have first: when, whose; the object is left open. */
static void write_thread_of(struct json_writer *w, const char *type, const struct wait *wait)
{
	json_writer__begin_object(w);
	json_writer__member_string(w, REC_TYPE, type);
	json_writer__member_u64(w, REC_TS_NS, wait->end_ts_ns);
	json_writer__member_u64(w, REC_PID, wait->pid);
	json_writer__member_u64(w, REC_TID, wait->tid);
	json_writer__member_string(w, REC_COMM, wait->comm);
	if (wait->title)
		json_writer__member_string(w, REC_TITLE, wait->title);
	if (wait->cgroup)
		json_writer__member_string(w, REC_CGROUP, wait->cgroup);
}

/* What a wait and a sample both have last: labels and stacks. */
static void write_labels_and_stacks(struct json_writer *w, const struct wait *wait)
{
	if (wait->labels) {
		uint32_t i;

		json_writer__key(w, REC_LABELS);
		json_writer__begin_object(w);
		for (i = 0; i < wait->labels->nr; i++)
			json_writer__member_string(w, wait->labels->items[i].name,
						   wait->labels->items[i].value);
		json_writer__end_object(w);
	}
	json_writer__key(w, REC_KERNEL_STACK);
	write_stack(w, wait->kernel_stack);
	json_writer__key(w, REC_USER_STACK);
	write_stack(w, wait->user_stack);
}

/* window_start_ns: the profile's (profile.h); duration_ns is whole, weight_ns of the window. */
static void write_wait(struct json_writer *w, const struct wait *wait, uint64_t window_start_ns)
{
	struct wait_share share;

	profile__share(wait, window_start_ns, &share);
	write_thread_of(w, REC_TYPE_WAIT, wait);
	json_writer__member_string(w, REC_STATE, states__name(wait->state));
	json_writer__member_string(w, REC_WAIT, wait->wait_class);
	json_writer__member_u64(w, REC_DURATION_NS, wait->duration_ns);
	json_writer__member_u64(w, REC_WEIGHT_NS, share.weight_ns);
	json_writer__member_u64(w, REC_CPU, wait->cpu);
	if (profile__open_name(wait->open))
		json_writer__member_string(w, REC_OPEN, profile__open_name(wait->open));
	write_object(w, wait->object);
	write_labels_and_stacks(w, wait);
	write_waker(w, wait);
	json_writer__end_object(w);
}

/* An on-CPU sample: the CPU time it stands for is its weight. */
static void write_sample(struct json_writer *w, const struct wait *s)
{
	write_thread_of(w, REC_TYPE_ONCPU, s);
	json_writer__member_u64(w, REC_CPU, s->cpu);
	json_writer__member_u64(w, REC_WEIGHT_NS, s->duration_ns);
	write_labels_and_stacks(w, s);
	json_writer__end_object(w);
}

/* A thread's account (REC_TYPE_THREAD). */
static void write_thread(struct json_writer *w, const struct thread_account *a)
{
	json_writer__begin_object(w);
	json_writer__member_string(w, REC_TYPE, REC_TYPE_THREAD);
	json_writer__member_u64(w, REC_PID, a->pid);
	json_writer__member_u64(w, REC_TID, a->tid);
	json_writer__member_string(w, REC_COMM, a->comm ? a->comm : "");
	json_writer__member_u64(w, REC_START_NS, a->start_ns);
	json_writer__member_u64(w, REC_TRACKED_NS, a->tracked_ns);
	json_writer__member_u64(w, REC_EXIT_NS, a->exit_ns);
	json_writer__member_u64(w, REC_RUN_NS, a->run_ns);
	json_writer__member_u64(w, REC_STARTUP_NS, a->startup_ns);
	json_writer__member_u64(w, REC_RECORDED_NS, a->recorded_ns);
	json_writer__member_u64(w, REC_DROPPED_NS, a->dropped_ns);
	json_writer__member_u64(w, REC_KERNEL_RUN_NS, a->kernel_run_ns);
	json_writer__member_u64(w, REC_UNSEEN_NS, a->unseen_ns);
	json_writer__end_object(w);
}

int output_json__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	struct json_writer w;
	unsigned int i;
	size_t n, k;

	(void)opts;
	/*
	 * Waits and samples each come in the order they were read, about
	 * the order of their times: merged, so that a reader of the lines sees
	 * a thread's life in order.
	 */
	for (n = 0, k = 0; n < p->nr_waits || k < p->oncpu.nr;) {
		json_writer__init(&w, out);
		if (k == p->oncpu.nr ||
		    (n < p->nr_waits && p->waits[n].end_ts_ns <= p->oncpu.list[k].end_ts_ns))
			write_wait(&w, &p->waits[n++], p->window_start_ns);
		else
			write_sample(&w, &p->oncpu.list[k++]);
		fputc('\n', out);
	}
	for (n = 0; n < p->nr_threads; n++) {
		json_writer__init(&w, out);
		write_thread(&w, &p->threads[n]);
		fputc('\n', out);
	}
	json_writer__init(&w, out);
	json_writer__begin_object(&w);
	json_writer__member_string(&w, REC_TYPE, REC_TYPE_STATS);
	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		json_writer__member_u64(&w, counters__name(i), p->counters[i]);
	/* So that a report's pprof has the live one's time and duration. */
	if (p->start_time_ns)
		json_writer__member_u64(&w, REC_RECORDING_START_NS, p->start_time_ns);
	if (p->duration_ns)
		json_writer__member_u64(&w, REC_RECORDING_DURATION_NS, p->duration_ns);
	/* So that a report knows which part of each wait its weight_ns is. */
	if (p->window_start_ns)
		json_writer__member_u64(&w, REC_RECORDING_START_TS_NS, p->window_start_ns);
	if (p->main_binary)
		json_writer__member_string(&w, REC_RECORDING_MAIN_BINARY, p->main_binary);
	if (p->oncpu.period_ns)
		json_writer__member_u64(&w, REC_RECORDING_SAMPLE_PERIOD_NS, p->oncpu.period_ns);
	json_writer__end_object(&w);
	fputc('\n', out);
	return 0;
}
