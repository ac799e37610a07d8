// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "classify/states.h"
#include "lib/json_reader.h"
#include "lib/log.h"
#include "profile/recording_schema.h"
#include "trace/counters.h"
#include "trace/recording.h"
#include "unwind/stack_end.h"

struct reader {
	const char *name;
	size_t line;
	struct profile *profile;
	const struct recording_filter *filter;
	struct frame *frames; /* room for one stack */
	size_t frames_cap;
	uint64_t first_start_ns;
	uint64_t last_end_ns;
	uint64_t recorded_duration_ns; /* 0: the recording does not say */
	bool saw_wait;
	bool saw_stats;
	/*
	 * The waits begun before the recording, added once the stats record
	 * says where its window began: their weight_ns are of the part inside.
	 * One per thread off CPU at the start at most, and the rare wait the
	 * kernel's stamps end as the window began.
	 */
	struct held_wait *held;
	size_t nr_held;
	size_t held_cap;
};

struct held_wait {
	struct wait w;
	size_t line;
	size_t at; /* the profile's waits listed before it: where it goes back */
};

static int bad(struct reader *r, const char *why)
{
	log__error("%s:%zu: %s", r->name, r->line, why);
	return -EINVAL;
}

static const char *string_member(const struct json_value *v, const char *key)
{
	const struct json_value *m = json_value__member(v, key);

	return m && m->type == JSON_STRING ? m->string : NULL;
}

static int u64_member(const struct json_value *v, const char *key, uint64_t *out)
{
	const struct json_value *m = json_value__member(v, key);

	if (!m || m->type != JSON_NUMBER || !m->is_u64)
		return -EINVAL;
	*out = m->u64;
	return 0;
}

/* Like u64_member, but absent is fine: *out keeps its value. */
static int optional_u64_member(const struct json_value *v, const char *key, uint64_t *out)
{
	return json_value__member(v, key) ? u64_member(v, key, out) : 0;
}

static const char *intern(struct reader *r, const char *s)
{
	return s ? strpool__intern(r->profile->strings, s) : NULL;
}

/* REC_INLINED: [{REC_SYM, REC_FILE, REC_LINE}...], innermost first. */
static int read_inlined(struct reader *r, const struct json_value *list, struct frame *f)
{
	const struct frame_inline *caller = NULL;
	size_t i;

	if (!list)
		return 0;
	if (list->type != JSON_ARRAY)
		return bad(r, "a frame's \"" REC_INLINED "\" is not an array");
	/* Interned from the outermost in, each pointing at its caller. */
	for (i = list->nr; i > 0; i--) {
		const struct json_value *in = &list->items[i - 1];
		const char *function = in->type == JSON_OBJECT ? string_member(in, REC_SYM) : NULL;
		uint64_t line = 0;

		if (!function)
			return bad(r, "an inlined frame without its \"" REC_SYM "\"");
		u64_member(in, REC_LINE, &line);
		caller = inline_pool__intern(r->profile->inlines, intern(r, function),
					     intern(r, string_member(in, REC_FILE)),
					     line <= UINT32_MAX ? (uint32_t)line : 0, caller);
		if (!caller)
			return -ENOMEM;
	}
	f->inlined = caller;
	return 0;
}

/* REC_FUNC_START, on a frame without REC_SYM: named as the live profile named it. */
static int read_func_start(struct reader *r, const struct json_value *v, struct frame *f)
{
	const char *start = string_member(v, REC_FUNC_START);
	char name[160];
	uint64_t vaddr;
	char *end;

	if (!start)
		return 0;
	if (f->sym || !f->module)
		return bad(r, "a frame's \"" REC_FUNC_START "\" comes without \"" REC_MODULE
			      "\" or with \"" REC_SYM "\"");
	errno = 0;
	vaddr = strncmp(start, "0x", 2) ? 0 : strtoull(start + 2, &end, 16);
	if (strncmp(start, "0x", 2) || errno || *end || end == start + 2)
		return bad(r, "a frame's \"" REC_FUNC_START "\" is not a hexadecimal address");
	unnamed_function__name(f->module, vaddr, name, sizeof(name));
	f->sym = intern(r, name);
	return f->sym ? 0 : -ENOMEM;
}

static int read_frame(struct reader *r, const struct json_value *v, bool kernel, struct frame *f)
{
	const char *addr = string_member(v, REC_ADDR);
	char *end;
	int err;

	memset(f, 0, sizeof(*f));
	if (!addr || strncmp(addr, "0x", 2))
		return bad(r, "a frame's \"" REC_ADDR "\" is not a \"0x...\" string");
	errno = 0;
	f->addr = strtoull(addr + 2, &end, 16);
	if (errno || *end || end == addr + 2)
		return bad(r, "a frame's \"" REC_ADDR "\" is not a hexadecimal address");
	f->kernel = kernel;
	f->sym = intern(r, string_member(v, REC_SYM));
	f->system_name = intern(r, string_member(v, REC_MANGLED));
	f->module = intern(r, string_member(v, REC_MODULE));
	f->build_id = intern(r, string_member(v, REC_BUILD_ID));
	f->file = intern(r, string_member(v, REC_FILE));
	f->kind = intern(r, string_member(v, REC_KIND));
	/* Absent in the kernel, where it is the address, and in recordings older than it. */
	f->module_off = f->addr;
	if (optional_u64_member(v, REC_MODULE_OFF, &f->module_off))
		return bad(r, "a frame's \"" REC_MODULE_OFF "\" is not a number");
	if (f->sym && u64_member(v, REC_OFF, &f->off))
		return bad(r, "a frame with \"" REC_SYM "\" has no numeric \"" REC_OFF "\"");
	err = read_func_start(r, v, f);
	if (err)
		return err;
	if (f->file) {
		uint64_t line;

		if (!u64_member(v, REC_LINE, &line) && line <= UINT32_MAX)
			f->line = (uint32_t)line;
	}
	if ((string_member(v, REC_SYM) && !f->sym) ||
	    (string_member(v, REC_MANGLED) && !f->system_name) ||
	    (string_member(v, REC_MODULE) && !f->module) ||
	    (string_member(v, REC_BUILD_ID) && !f->build_id) ||
	    (string_member(v, REC_FILE) && !f->file) || (string_member(v, REC_KIND) && !f->kind))
		return -ENOMEM;
	return read_inlined(r, json_value__member(v, REC_INLINED), f);
}

static int read_stack(struct reader *r, const struct json_value *wait, const char *key, bool kernel,
		      const struct stack **out)
{
	const struct json_value *list = json_value__member(wait, key);
	size_t i;
	int err;

	*out = NULL;
	if (!list)
		return 0;
	if (list->type != JSON_ARRAY)
		return bad(r, kernel ? "\"" REC_KERNEL_STACK "\" is not an array"
				     : "\"" REC_USER_STACK "\" is not an array");
	if (!list->nr)
		return 0;
	if (list->nr > r->frames_cap) {
		struct frame *grown = realloc(r->frames, list->nr * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->frames = grown;
		r->frames_cap = list->nr;
	}
	for (i = 0; i < list->nr; i++) {
		if (list->items[i].type != JSON_OBJECT)
			return bad(r, "a stack frame is not an object");
		err = read_frame(r, &list->items[i], kernel, &r->frames[i]);
		if (err)
			return err;
	}
	*out = profile__intern_stack(r->profile, r->frames, list->nr);
	return *out ? 0 : -ENOMEM;
}

static bool id_listed(const struct id_list *list, uint32_t id)
{
	size_t i;

	for (i = 0; i < list->nr; i++) {
		if (list->ids[i] == id)
			return true;
	}
	return false;
}

static bool passes(const struct recording_filter *f, const struct wait *w)
{
	size_t i;

	if (f->pids->nr && !id_listed(f->pids, w->pid))
		return false;
	if (f->tids->nr && !id_listed(f->tids, w->tid))
		return false;
	if (f->state_mask && !(f->state_mask & (1u << w->state)))
		return false;
	if (w->duration_ns < f->min_duration_ns || w->duration_ns > f->max_duration_ns)
		return false;
	for (i = 0; i < f->nr_comms; i++) {
		if (!strcmp(f->comms[i], w->comm))
			return true;
	}
	return f->nr_comms == 0;
}

/* "labels":{"NAME":"VALUE",...}; absent is none. */
static int read_labels(struct reader *r, const struct json_value *v, const struct labels **out)
{
	const struct json_value *m = json_value__member(v, REC_LABELS);
	struct label items[16];
	size_t i;
	int err;

	*out = NULL;
	if (!m)
		return 0;
	if (m->type != JSON_OBJECT || m->nr > 16)
		return bad(r, "a wait's \"" REC_LABELS "\" is not an object of at most 16 strings");
	for (i = 0; i < m->nr; i++) {
		if (m->items[i].type != JSON_STRING || !*m->keys[i])
			return bad(r, "a wait's \"" REC_LABELS "\" is not an object of at most 16 "
				      "strings");
		items[i].name = m->keys[i];
		items[i].value = m->items[i].string;
	}
	*out = profile__intern_labels(r->profile, items, m->nr, &err);
	return err;
}

/* A hexadecimal "0x..." string member; absent is 0. */
static int hex_member(struct reader *r, const struct json_value *v, const char *key, uint64_t *out)
{
	const char *text = string_member(v, key);
	char *end;

	*out = 0;
	if (!json_value__member(v, key))
		return 0;
	errno = 0;
	if (text && !strncmp(text, "0x", 2))
		*out = strtoull(text + 2, &end, 16);
	if (!text || strncmp(text, "0x", 2) || errno || *end || end == text + 2)
		return bad(r, "a wait's \"" REC_OBJECT "\" has an \"" REC_ADDR
			      "\" that is not a hexadecimal address");
	return 0;
}

/* What it waited on; absent in recordings before objects were named, and where unknown. */
static int read_object(struct reader *r, const struct json_value *v, struct wait *w)
{
	const struct json_value *m = json_value__member(v, REC_OBJECT), *h;
	struct wait_object o = { 0 };
	uint64_t pid = 0, tid = 0;
	int err;

	if (!m)
		return 0;
	o.kind = m->type == JSON_OBJECT ? string_member(m, REC_KIND) : NULL;
	o.name = m->type == JSON_OBJECT ? string_member(m, REC_NAME) : NULL;
	if (!o.kind || !*o.kind || !o.name)
		return bad(r, "a wait's \"" REC_OBJECT "\" lacks its \"" REC_KIND
			      "\" or \"" REC_NAME "\" string");
	err = hex_member(r, m, REC_ADDR, &o.addr);
	if (err)
		return err;
	h = json_value__member(m, REC_HOLDER);
	if (h) {
		o.holder_comm = h->type == JSON_OBJECT ? string_member(h, REC_COMM) : NULL;
		if (!o.holder_comm || u64_member(h, REC_PID, &pid) ||
		    u64_member(h, REC_TID, &tid) || pid > UINT32_MAX || !tid || tid > UINT32_MAX)
			return bad(r, "an object's \"" REC_HOLDER "\" lacks a numeric " REC_PID
				      " or " REC_TID ", or its " REC_COMM);
		o.holder_pid = (uint32_t)pid;
		o.holder_tid = (uint32_t)tid;
	}
	w->object = profile__intern_object(r->profile, &o, &err);
	return err;
}

/* runq_ns and the waker; absent in older recordings. */
static int read_wakeup(struct reader *r, const struct json_value *v, struct wait *w)
{
	const struct json_value *k = json_value__member(v, REC_WAKER);
	const char *context, *comm;
	uint64_t pid, tid, cpu;
	int err;

	if (optional_u64_member(v, REC_RUNQ_NS, &w->runq_ns) || w->runq_ns > w->duration_ns)
		return bad(r, "a wait's \"" REC_RUNQ_NS
			      "\" is not a number up to its " REC_DURATION_NS);
	if (!k)
		return 0;
	if (k->type != JSON_OBJECT)
		return bad(r, "a wait's \"" REC_WAKER "\" is not an object");
	context = string_member(k, REC_CONTEXT);
	comm = string_member(k, REC_COMM);
	if (!context)
		w->waker.context = OFFCPU_WAKER_TASK;
	else if (!strcmp(context, "hardirq"))
		w->waker.context = OFFCPU_WAKER_HARDIRQ;
	else if (!strcmp(context, "softirq"))
		w->waker.context = OFFCPU_WAKER_SOFTIRQ;
	else
		return bad(r, "a waker's \"" REC_CONTEXT "\" is neither hardirq nor softirq");
	if (u64_member(k, REC_PID, &pid) || u64_member(k, REC_TID, &tid) || pid > UINT32_MAX ||
	    tid > UINT32_MAX || !comm)
		return bad(r,
			   "a waker lacks a numeric " REC_PID " or " REC_TID ", or its " REC_COMM);
	w->waker.pid = (uint32_t)pid;
	w->waker.tid = (uint32_t)tid;
	/* Recordings before the waker's CPU was kept have none. */
	cpu = WAKER_CPU_UNKNOWN;
	if (optional_u64_member(k, REC_CPU, &cpu) || cpu > WAKER_CPU_UNKNOWN)
		return bad(r, "a waker's \"" REC_CPU "\" is not a CPU number");
	w->waker.cpu = (uint32_t)cpu;
	w->waker.comm = intern(r, comm);
	if (!w->waker.comm)
		return -ENOMEM;
	err = read_stack(r, k, REC_KERNEL_STACK, true, &w->waker_kernel_stack);
	return err ?: read_stack(r, k, REC_USER_STACK, false, &w->waker_user_stack);
}

/*
 * A Go M's stack ends at runtime.mcall, past which the
 * goroutine it parked was (not recorded): what it parked for is the class
 * recorded, kept unless the user's rules say otherwise.
 */
static const char *parked_class(const struct wait *w, const char *recorded)
{
	const struct stack *u = w->user_stack;

	return u && u->nr && stack_end__is_goroutine_switch(&u->frames[u->nr - 1]) ? recorded
										      : NULL;
}

static int add_wait(struct reader *r, const struct wait *w)
{
	int err = profile__add(r->profile, w);

	if (err == -EOVERFLOW)
		return bad(r, "its waits' duration_ns add up to more than 2^64 ns (584 years): "
			      "one of them is wrong");
	return err;
}

static int hold(struct reader *r, const struct wait *w)
{
	if (r->nr_held == r->held_cap) {
		size_t cap = r->held_cap ? r->held_cap * 2 : 64;
		struct held_wait *grown = realloc(r->held, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->held = grown;
		r->held_cap = cap;
	}
	r->held[r->nr_held].w = *w;
	r->held[r->nr_held].line = r->line;
	r->held[r->nr_held++].at = r->profile->nr_waits;
	return 0;
}

/*
 * A wait begun before the window, its weight_ns (of the part inside) made
 * the whole wait's again, rounded up: the profile's share of it, rounded
 * down, is then that weight_ns exactly, as the live profile had it.
 */
static int add_held(struct reader *r, struct held_wait *h, uint64_t window_start_ns)
{
	struct wait *w = &h->w;
	struct wait whole = *w;
	struct wait_share share;
	unsigned __int128 weight;

	r->line = h->line;
	whole.weight_ns = 0;
	profile__share(&whole, window_start_ns, &share);
	if (w->weight_ns && w->weight_ns < share.inside_ns)
		return bad(r, "a wait's \"" REC_WEIGHT_NS "\" is less than its time inside the "
			      "recording's window");
	/* Ended as the window began, it adds nothing, whatever its weight. */
	if (w->weight_ns && share.inside_ns && share.inside_ns < w->duration_ns) {
		weight = ((unsigned __int128)w->weight_ns * w->duration_ns + share.inside_ns - 1) /
			 share.inside_ns;
		if (weight > UINT64_MAX)
			return bad(r, "a wait's \"" REC_WEIGHT_NS "\" is past 2^64 ns once whole");
		w->weight_ns = (uint64_t)weight;
	}
	return add_wait(r, w);
}

/*
 * The waits held, added last, go back among the others where the
 * recording had them: a json report of a recording is the recording.
 */
static void restore_order(struct reader *r, size_t first_held)
{
	struct wait *waits = r->profile->waits;
	size_t n = first_held, h = r->nr_held, to = first_held + r->nr_held;

	while (h > 0) {
		h--;
		while (n > r->held[h].at)
			waits[--to] = waits[--n];
		waits[--to] = r->held[h].w;
	}
}

/* At the stats record: the waits held, in the window it says. */
static int add_held_waits(struct reader *r, uint64_t window_start_ns)
{
	size_t line = r->line, first_held = r->profile->nr_waits, i;
	int err = 0;

	r->profile->window_start_ns = window_start_ns;
	for (i = 0; i < r->nr_held && !err; i++)
		err = add_held(r, &r->held[i], window_start_ns);
	if (!err && r->profile->keep_waits)
		restore_order(r, first_held);
	r->nr_held = 0;
	r->line = line;
	return err;
}

static int read_wait(struct reader *r, const struct json_value *v)
{
	const char *comm = string_member(v, REC_COMM), *wait_class = string_member(v, REC_WAIT),
		   *state;
	struct wait w = { 0 };
	uint64_t pid, tid, cpu, start_ns;
	int err;

	if (u64_member(v, REC_TS_NS, &w.end_ts_ns) ||
	    u64_member(v, REC_DURATION_NS, &w.duration_ns) || u64_member(v, REC_PID, &pid) ||
	    u64_member(v, REC_TID, &tid) || u64_member(v, REC_CPU, &cpu) || pid > UINT32_MAX ||
	    tid > UINT32_MAX || cpu > UINT32_MAX)
		return bad(r, "a wait lacks a numeric " REC_TS_NS ", " REC_DURATION_NS ", " REC_PID
			      ", " REC_TID " or " REC_CPU);
	if (!comm || !wait_class || !*wait_class)
		return bad(r, "a wait lacks its \"" REC_COMM "\" or \"" REC_WAIT "\" string");
	state = string_member(v, REC_STATE);
	if (!state || states__from_name(state, &w.state))
		return bad(r, "a wait's \"" REC_STATE "\" is not a thread state name");
	if (string_member(v, REC_OPEN) &&
	    profile__open_from_name(string_member(v, REC_OPEN), &w.open))
		return bad(r, "a wait's \"" REC_OPEN "\" is not \"before\", \"after\" or \"both\"");
	/*
	 * Recordings before weight_ns weigh every wait its duration. One
	 * begun before the recording weighs its part inside the window,
	 * checked once the stats record says where that began.
	 */
	if (optional_u64_member(v, REC_WEIGHT_NS, &w.weight_ns) ||
	    (w.weight_ns && w.weight_ns < w.duration_ns && !(w.open & OFFCPU_WAIT_OPEN_BEFORE)))
		return bad(r, "a wait's \"" REC_WEIGHT_NS "\" is not a number of at least its "
			      "\"" REC_DURATION_NS "\"");
	w.pid = (uint32_t)pid;
	w.tid = (uint32_t)tid;
	w.cpu = (uint32_t)cpu;
	w.comm = intern(r, comm);
	if (!passes(r->filter, &w))
		return 0;
	w.title = intern(r, string_member(v, REC_TITLE));
	w.cgroup = intern(r, string_member(v, REC_CGROUP));
	err = read_stack(r, v, REC_KERNEL_STACK, true, &w.kernel_stack);
	err = err ?: read_stack(r, v, REC_USER_STACK, false, &w.user_stack);
	err = err ?: read_labels(r, v, &w.labels);
	err = err ?: read_object(r, v, &w);
	err = err ?: read_wakeup(r, v, &w);
	if (err)
		return err;
	if (r->filter->rules && r->filter->rules->nr) {
		const char *by_labels = classify__from_labels(r->filter->rules, w.state, w.labels);

		wait_class =
		    by_labels
			?: classify__wait_parked(r->filter->rules, w.state,
						 w.kernel_stack ? w.kernel_stack->frames : NULL,
						 w.kernel_stack ? w.kernel_stack->nr : 0,
						 w.user_stack ? w.user_stack->frames : NULL,
						 w.user_stack ? w.user_stack->nr : 0,
						 parked_class(&w, wait_class));
	}
	w.wait_class = intern(r, wait_class);
	if (!w.comm || !w.wait_class)
		return -ENOMEM;
	start_ns = w.end_ts_ns > w.duration_ns ? w.end_ts_ns - w.duration_ns : 0;
	if (!r->saw_wait || start_ns < r->first_start_ns)
		r->first_start_ns = start_ns;
	if (w.end_ts_ns > r->last_end_ns)
		r->last_end_ns = w.end_ts_ns;
	r->saw_wait = true;
	/*
	 * Added at the stats record, which says the window: a wait begun
	 * before it, and one with none of its time in it (weight_ns 0, not
	 * absent).
	 */
	if ((w.open & OFFCPU_WAIT_OPEN_BEFORE) ||
	    (json_value__member(v, REC_WEIGHT_NS) && !w.weight_ns && w.duration_ns))
		return hold(r, &w);
	return add_wait(r, &w);
}

/*
 * An on-CPU sample: -p, -t and -c select it as they select waits; --state,
 * -m and -M are about waits, not about CPU time.
 */
static int read_sample(struct reader *r, const struct json_value *v)
{
	const char *comm = string_member(v, REC_COMM);
	struct recording_filter threads = *r->filter;
	struct wait s = { .state = OFFCPU_STATE_RUNNING };
	uint64_t pid, tid, cpu;
	int err;

	if (u64_member(v, REC_TS_NS, &s.end_ts_ns) ||
	    u64_member(v, REC_WEIGHT_NS, &s.duration_ns) || u64_member(v, REC_PID, &pid) ||
	    u64_member(v, REC_TID, &tid) || u64_member(v, REC_CPU, &cpu) || pid > UINT32_MAX ||
	    tid > UINT32_MAX || cpu > UINT32_MAX || !s.duration_ns)
		return bad(r, "an on-CPU sample lacks a numeric " REC_TS_NS ", " REC_PID ", " REC_TID
			      ", " REC_CPU " or a " REC_WEIGHT_NS " above 0");
	if (!comm)
		return bad(r, "an on-CPU sample lacks its \"" REC_COMM "\" string");
	s.pid = (uint32_t)pid;
	s.tid = (uint32_t)tid;
	s.cpu = (uint32_t)cpu;
	s.comm = intern(r, comm);
	if (!s.comm)
		return -ENOMEM;
	threads.state_mask = 0;
	threads.min_duration_ns = 0;
	threads.max_duration_ns = UINT64_MAX;
	if (!passes(&threads, &s))
		return 0;
	s.title = intern(r, string_member(v, REC_TITLE));
	s.cgroup = intern(r, string_member(v, REC_CGROUP));
	err = read_stack(r, v, REC_KERNEL_STACK, true, &s.kernel_stack);
	err = err ?: read_stack(r, v, REC_USER_STACK, false, &s.user_stack);
	err = err ?: read_labels(r, v, &s.labels);
	if (err)
		return err;
	if (!r->profile->oncpu.period_ns)
		r->profile->oncpu.period_ns = s.duration_ns;
	err = profile__add_sample(r->profile, &s);
	if (err == -EOVERFLOW)
		return bad(r, "its on-CPU samples' weight_ns add up to more than 2^64 ns: one of "
			      "them is wrong");
	return err;
}

static int read_stats(struct reader *r, const struct json_value *v)
{
	const struct json_value *main_binary = json_value__member(v, REC_RECORDING_MAIN_BINARY);
	uint64_t window_start_ns = 0;
	unsigned int i;

	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		if (optional_u64_member(v, counters__name(i), &r->profile->counters[i]))
			return bad(r, "a counter of the stats record is not a number");
	}
	if (optional_u64_member(v, REC_RECORDING_START_NS, &r->profile->start_time_ns) ||
	    optional_u64_member(v, REC_RECORDING_DURATION_NS, &r->recorded_duration_ns) ||
	    optional_u64_member(v, REC_RECORDING_START_TS_NS, &window_start_ns) ||
	    optional_u64_member(v, REC_RECORDING_SAMPLE_PERIOD_NS, &r->profile->oncpu.period_ns))
		return bad(r, "the stats record's \"" REC_RECORDING_START_NS
			      "\", \"" REC_RECORDING_DURATION_NS "\", \"" REC_RECORDING_START_TS_NS
			      "\" or \"" REC_RECORDING_SAMPLE_PERIOD_NS "\" is not a number");
	if (main_binary && main_binary->type != JSON_STRING)
		return bad(r, "the stats record's \"" REC_RECORDING_MAIN_BINARY "\" is not a string");
	if (main_binary && profile__set_main_binary(r->profile, main_binary->string))
		return -ENOMEM;
	r->saw_stats = true;
	return add_held_waits(r, window_start_ns);
}

/* -p, -t and -c select threads' accounts as they do waits; --state, -m, -M not. */
static bool passes_thread(const struct recording_filter *f, const struct thread_account *a)
{
	size_t i;

	if (f->pids->nr && !id_listed(f->pids, a->pid))
		return false;
	if (f->tids->nr && !id_listed(f->tids, a->tid))
		return false;
	for (i = 0; i < f->nr_comms; i++) {
		if (!strcmp(f->comms[i], a->comm))
			return true;
	}
	return f->nr_comms == 0;
}

static int read_thread(struct reader *r, const struct json_value *v)
{
	const char *comm = string_member(v, REC_COMM);
	struct thread_account a = { 0 };
	uint64_t pid, tid;

	if (u64_member(v, REC_PID, &pid) || u64_member(v, REC_TID, &tid) || pid > UINT32_MAX ||
	    tid > UINT32_MAX || !comm || u64_member(v, REC_START_NS, &a.start_ns) ||
	    u64_member(v, REC_TRACKED_NS, &a.tracked_ns) ||
	    u64_member(v, REC_EXIT_NS, &a.exit_ns) || u64_member(v, REC_RUN_NS, &a.run_ns) ||
	    u64_member(v, REC_STARTUP_NS, &a.startup_ns) ||
	    u64_member(v, REC_RECORDED_NS, &a.recorded_ns) ||
	    u64_member(v, REC_DROPPED_NS, &a.dropped_ns) ||
	    u64_member(v, REC_KERNEL_RUN_NS, &a.kernel_run_ns) ||
	    u64_member(v, REC_UNSEEN_NS, &a.unseen_ns))
		return bad(r, "a thread record lacks a numeric field or its \"" REC_COMM "\"");
	a.pid = (uint32_t)pid;
	a.tid = (uint32_t)tid;
	a.comm = intern(r, comm);
	if (!a.comm)
		return -ENOMEM;
	if (!passes_thread(r->filter, &a))
		return 0;
	return profile__add_thread(r->profile, &a);
}

static int read_line(struct reader *r, const char *text, size_t len)
{
	struct json_value v;
	const char *type, *why;
	size_t at;
	int err;

	err = json_reader__parse(text, len, &v, &why, &at);
	/* Out of memory says nothing about the recording: not a bad line. */
	if (err == -ENOMEM)
		return err;
	if (err) {
		log__error("%s:%zu: not JSON (%s at column %zu)", r->name, r->line, why, at + 1);
		return -EINVAL;
	}
	type = string_member(&v, REC_TYPE);
	if (!type)
		err = bad(r, "a record without a \"" REC_TYPE "\"");
	else if (r->saw_stats)
		err = bad(r, "a record after the stats record");
	else if (!strcmp(type, REC_TYPE_WAIT))
		err = read_wait(r, &v);
	else if (!strcmp(type, REC_TYPE_STATS))
		err = read_stats(r, &v);
	else if (!strcmp(type, REC_TYPE_THREAD))
		err = read_thread(r, &v);
	else if (!strcmp(type, REC_TYPE_ONCPU))
		err = read_sample(r, &v);
	else
		err = 0; /* a record type of a later version: not ours to judge */
	json_value__free(&v);
	return err;
}

/*
 * Why getline() returned no line, errno as it left it: the end, or a
 * failure that must not pass for the end (the stats record would then be
 * "missing" from a recording that has one). A directory is the wrong
 * argument, like a missing file: -EINVAL, said here. Anything else (EIO,
 * ENOMEM for a line larger than memory) is the machine's: its errno, for
 * the caller to say.
 */
static int end_of_lines(struct reader *r, FILE *in)
{
	int err = errno ?: EIO;

	if (feof(in) && !ferror(in))
		return 0;
	if (err == EISDIR) {
		log__error("%s: is a directory, not a recording", r->name);
		return -EINVAL;
	}
	return -err;
}

/*
 * getline() with a cap: the line without its '\n' in *line (NUL-terminated,
 * NULs inside kept), its length, or -1 at the end or a failure (errno).
 * -E2BIG for a line longer than RECORDING_MAX_LINE, the rest unread.
 */
static ssize_t next_line(FILE *in, char **line, size_t *cap)
{
	size_t len = 0;
	char *grown;
	int c;

	for (;;) {
		c = getc_unlocked(in);
		if (len == RECORDING_MAX_LINE && c != EOF && c != '\n')
			return -E2BIG;
		/* Room for c or the NUL: an empty line too has its NUL. */
		if (len + 1 >= *cap) {
			size_t want = *cap ? *cap * 2 : 4096;

			if (want > RECORDING_MAX_LINE + 1)
				want = RECORDING_MAX_LINE + 1;
			grown = realloc(*line, want);
			if (!grown) {
				errno = ENOMEM;
				return -1;
			}
			*line = grown;
			*cap = want;
		}
		if (c == EOF || c == '\n')
			break;
		(*line)[len++] = (char)c;
	}
	if (c == EOF && !len)
		return -1;
	(*line)[len] = '\0';
	return (ssize_t)len;
}

int recording__read(FILE *in, const char *name, const struct recording_filter *filter,
		    struct profile *p)
{
	struct reader r = { .name = name, .profile = p, .filter = filter };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	while (!err) {
		errno = 0;
		len = next_line(in, &line, &cap);
		if (len == -E2BIG) {
			log__error("%s:%zu: a line longer than %u MiB: not an offcpu recording",
				   name, r.line + 1, RECORDING_MAX_LINE >> 20);
			err = -EINVAL;
			break;
		}
		if (len < 0) {
			err = end_of_lines(&r, in);
			break;
		}
		r.line++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len)
			err = read_line(&r, line, (size_t)len);
	}
	if (!err && !r.saw_stats) {
		/* offcpu writes the stats record last: without it the file was cut short. */
		log__error("%s: no stats record at the end: not a complete offcpu recording", name);
		err = -EINVAL;
	}
	/* Recordings older than recording_duration_ns: from the first wait to the last. */
	if (!err)
		p->duration_ns = r.recorded_duration_ns;
	if (!err && !p->duration_ns && r.saw_wait)
		p->duration_ns = r.last_end_ns - r.first_start_ns;
	free(line);
	free(r.frames);
	free(r.held);
	return err;
}
