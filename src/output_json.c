// SPDX-License-Identifier: GPL-2.0
/* JSON Lines: one object per wait, then one stats object. */
#include <linux/types.h>

#include "counters.h"
#include "json_writer.h"
#include "output.h"
#include "states.h"

static void write_stack(struct json_writer *w, const struct stack *s)
{
	uint32_t i;

	json__begin_array(w);
	for (i = 0; s && i < s->nr; i++) {
		const struct frame *f = &s->frames[i];

		json__begin_object(w);
		json__key(w, "addr");
		json__hex(w, f->addr);
		if (f->sym) {
			json__key(w, "sym");
			json__string(w, f->sym);
			json__key(w, "off");
			json__u64(w, f->off);
		}
		if (f->module) {
			json__key(w, "module");
			json__string(w, f->module);
		}
		json__end_object(w);
	}
	json__end_array(w);
}

static void write_wait(struct json_writer *w, const struct wait *wait)
{
	json__begin_object(w);
	json__key(w, "type");
	json__string(w, "offcpu");
	json__key(w, "ts_ns");
	json__u64(w, wait->end_ts_ns);
	json__key(w, "pid");
	json__u64(w, wait->pid);
	json__key(w, "tid");
	json__u64(w, wait->tid);
	json__key(w, "comm");
	json__string(w, wait->comm);
	json__key(w, "state");
	json__string(w, state_name(wait->state));
	json__key(w, "wait");
	json__string(w, wait->wait_class);
	json__key(w, "duration_ns");
	json__u64(w, wait->duration_ns);
	json__key(w, "cpu");
	json__u64(w, wait->cpu);
	json__key(w, "kernel_stack");
	write_stack(w, wait->kernel_stack);
	json__key(w, "user_stack");
	write_stack(w, wait->user_stack);
	json__end_object(w);
}

int output_json_write(FILE *out, const struct profile *p)
{
	struct json_writer w;
	unsigned int i;
	size_t n;

	for (n = 0; n < p->nr_waits; n++) {
		json__init(&w, out);
		write_wait(&w, &p->waits[n]);
		fputc('\n', out);
	}
	json__init(&w, out);
	json__begin_object(&w);
	json__key(&w, "type");
	json__string(&w, "stats");
	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		json__key(&w, counter_name(i));
		json__u64(&w, p->counters[i]);
	}
	json__end_object(&w);
	fputc('\n', out);
	return 0;
}
