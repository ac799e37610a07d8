// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "output/frame_names.h"
#include "serve/metrics.h"
#include "trace/counters.h"

/* Not shown under their own name: the label value of the rest. */
static const char other[] = "other";

/* Values seen but not shown, at most this many tracked by their time. */
#define MAX_CANDIDATES 4096

struct label_value {
	const char *value; /* interned in the profile's strings */
	uint64_t ns;
};

struct label_values {
	struct hash_table *shown;      /* value -> label_value */
	struct hash_table *candidates; /* value -> label_value, not shown */
};

struct series {
	bool on_cpu; /* an on-CPU sample's: no state, no wait class */
	unsigned int state;
	const char *wait_class;
	const char *comm; /* a shown value or other */
	const char *cgroup;
	uint64_t ns;
	uint64_t count;
};

struct metrics {
	struct hash_table *series;
	struct label_values comms;
	struct label_values cgroups;
	uint64_t runq_ns;
	uint64_t hidden_ns; /* metrics__add_hidden */
	uint64_t window_start_ns; /* metrics__count_since */
};

static uint64_t hash_pointer(const void *key)
{
	return hash_table__hash_bytes(key, sizeof(const char *), 0);
}

static bool equal_pointer(const void *a, const void *b)
{
	return *(const char *const *)a == *(const char *const *)b;
}

static uint64_t hash_series(const void *key)
{
	const struct series *s = key;
	const void *parts[3] = { s->wait_class, s->comm, s->cgroup };

	return hash_table__hash_bytes(parts, sizeof(parts), s->state | (uint64_t)s->on_cpu << 32);
}

static bool equal_series(const void *a, const void *b)
{
	const struct series *x = a, *y = b;

	return x->on_cpu == y->on_cpu && x->state == y->state && x->wait_class == y->wait_class &&
	       x->comm == y->comm && x->cgroup == y->cgroup;
}

int metrics__new(struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->series = hash_table__new(hash_series, equal_series);
	m->comms.shown = hash_table__new(hash_pointer, equal_pointer);
	m->comms.candidates = hash_table__new(hash_pointer, equal_pointer);
	m->cgroups.shown = hash_table__new(hash_pointer, equal_pointer);
	m->cgroups.candidates = hash_table__new(hash_pointer, equal_pointer);
	if (!m->series || !m->comms.shown || !m->comms.candidates || !m->cgroups.shown ||
	    !m->cgroups.candidates) {
		metrics__free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	hash_table__free_values(m->series, free);
	hash_table__free_values(m->comms.shown, free);
	hash_table__free_values(m->comms.candidates, free);
	hash_table__free_values(m->cgroups.shown, free);
	hash_table__free_values(m->cgroups.candidates, free);
	free(m);
}

static struct label_value *new_value(struct hash_table *into, const char *value)
{
	struct label_value *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->value = value;
	if (hash_table__insert(into, &v->value, v)) {
		free(v);
		return NULL;
	}
	return v;
}

/* The label value a wait's value is counted under; NULL: out of memory. */
static const char *label_of(struct label_values *l, const char *value, uint64_t ns)
{
	struct label_value *v;

	if (!value)
		value = "";
	v = hash_table__find(l->shown, &value);
	if (v)
		return v->value;
	/* The first half go in as they come: most machines never fill it. */
	if (hash_table__size(l->shown) < METRICS_LABEL_VALUES / 2)
		return new_value(l->shown, value) ? value : NULL;
	v = hash_table__find(l->candidates, &value);
	if (!v && hash_table__size(l->candidates) < MAX_CANDIDATES)
		v = new_value(l->candidates, value);
	if (v)
		v->ns += ns;
	return other;
}

/* The candidate with the most time gets a free slot. */
static void promote(struct label_values *l)
{
	struct hash_table_iter it = { 0 };
	struct label_value *best = NULL;
	void *value;

	if (hash_table__size(l->shown) >= METRICS_LABEL_VALUES)
		return;
	while (hash_table__next(l->candidates, &it, NULL, &value)) {
		struct label_value *v = value;

		if (!best || v->ns > best->ns)
			best = v;
	}
	if (!best)
		return;
	hash_table__remove(l->candidates, &best->value);
	if (hash_table__insert(l->shown, &best->value, best))
		free(best);
}

void metrics__tick(struct metrics *m)
{
	promote(&m->comms);
	promote(&m->cgroups);
}

void metrics__count_since(struct metrics *m, uint64_t start_ns)
{
	m->window_start_ns = start_ns;
}

/* Adds ns to key's series by w's comm and cgroup (or "other", past the bounds). */
static int add_to_series(struct metrics *m, struct series key, const struct wait *w, uint64_t ns)
{
	struct series *s;

	key.comm = label_of(&m->comms, w->comm, ns);
	key.cgroup = label_of(&m->cgroups, w->cgroup, ns);
	if (!key.comm || !key.cgroup)
		return -ENOMEM;
	s = hash_table__find(m->series, &key);
	if (!s && hash_table__size(m->series) >= METRICS_MAX_SERIES) {
		key.comm = other;
		key.cgroup = other;
		s = hash_table__find(m->series, &key);
	}
	if (!s) {
		s = malloc(sizeof(*s));
		if (!s)
			return -ENOMEM;
		*s = key;
		if (hash_table__insert(m->series, s, s)) {
			free(s);
			return -ENOMEM;
		}
	}
	s->ns += ns;
	s->count++;
	return 0;
}

int metrics__add(struct metrics *m, const struct wait *w)
{
	struct series key = { .state = w->state, .wait_class = w->wait_class };
	struct wait_share share;
	int err;

	/*
	 * What it adds to totals, a sampled wait's estimate
	 * included; and only since counting began, so that a counter's rate
	 * does not jump by the sleep of every thread when serve restarts.
	 */
	profile__share(w, m->window_start_ns, &share);
	err = add_to_series(m, key, w, share.weight_ns);
	/* Runnable, waiting for a CPU (all of a preempted wait), weighted alike. */
	if (!err)
		m->runq_ns += share.runq_ns;
	return err;
}

int metrics__add_sample(struct metrics *m, const struct wait *s)
{
	struct series key = { .on_cpu = true };

	/* An instant: counted whole once counting began, as a window counts it. */
	if (s->end_ts_ns < m->window_start_ns)
		return 0;
	return add_to_series(m, key, s, s->duration_ns);
}

void metrics__add_hidden(struct metrics *m, const struct wait *w)
{
	struct wait_share share;

	/* Since counting began, as every series. */
	profile__share(w, m->window_start_ns, &share);
	m->hidden_ns += share.weight_ns;
}

static void mark_values(const struct hash_table *values, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;

	while (hash_table__next(values, &it, NULL, &value))
		strpool__mark(strings, ((const struct label_value *)value)->value);
}

/* "other" and "" are not the pool's: strpool__mark leaves them alone. */
void metrics__mark_strings(const struct metrics *m, struct strpool *strings)
{
	struct hash_table_iter it = { 0 };
	void *value;

	mark_values(m->comms.shown, strings);
	mark_values(m->comms.candidates, strings);
	mark_values(m->cgroups.shown, strings);
	mark_values(m->cgroups.candidates, strings);
	while (hash_table__next(m->series, &it, NULL, &value)) {
		const struct series *s = value;

		strpool__mark(strings, s->wait_class);
		strpool__mark(strings, s->comm);
		strpool__mark(strings, s->cgroup);
	}
}

/* A label value as the exposition format quotes it: printable UTF-8, \ " and newline escaped. */
static void write_label(FILE *out, const char *name, const char *value, bool first)
{
	char printable[1024];
	const char *c;

	frame_names__printable(value, printable, sizeof(printable));
	fprintf(out, "%s%s=\"", first ? "" : ",", name);
	for (c = printable; *c; c++) {
		if (*c == '\\' || *c == '"')
			fputc('\\', out);
		if (*c == '\n')
			fputs("\\n", out);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static void write_header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void write_seconds(FILE *out, uint64_t ns)
{
	fprintf(out, " %llu.%09llu\n", (unsigned long long)(ns / 1000000000ULL),
		(unsigned long long)(ns % 1000000000ULL));
}

static void write_series(FILE *out, const struct metrics *m, bool seconds)
{
	struct hash_table_iter it = { 0 };
	void *value;

	while (hash_table__next(m->series, &it, NULL, &value)) {
		const struct series *s = value;

		if (s->on_cpu)
			continue;
		fputs(seconds ? "offcpu_off_cpu_seconds_total{" : "offcpu_waits_total{", out);
		write_label(out, "state", states__name(s->state), true);
		write_label(out, "wait", s->wait_class, false);
		write_label(out, "comm", s->comm, false);
		write_label(out, "cgroup", s->cgroup, false);
		fputc('}', out);
		if (seconds)
			write_seconds(out, s->ns);
		else
			fprintf(out, " %llu\n", (unsigned long long)s->count);
	}
}

static void write_on_cpu(FILE *out, const struct metrics *m)
{
	struct hash_table_iter it = { 0 };
	void *value;

	write_header(out, "offcpu_on_cpu_seconds_total", "counter",
		     "Time threads were sampled on CPU (-F), by command name and cgroup.");
	while (hash_table__next(m->series, &it, NULL, &value)) {
		const struct series *s = value;

		if (!s->on_cpu)
			continue;
		fputs("offcpu_on_cpu_seconds_total{", out);
		write_label(out, "comm", s->comm, true);
		write_label(out, "cgroup", s->cgroup, false);
		fputc('}', out);
		write_seconds(out, s->ns);
	}
}

static void write_open_waits(FILE *out, const struct metrics_open_waits *o)
{
	static const char *const kinds[2] = { "user", "kernel" };
	unsigned int state, k;

	write_header(out, "offcpu_threads_off_cpu", "gauge",
		     "Selected threads off CPU now, by the state they left in and kind.");
	for (state = 0; state < OFFCPU_STATE_COUNT; state++) {
		for (k = 0; k < 2; k++) {
			fputs("offcpu_threads_off_cpu{", out);
			write_label(out, "state", states__name(state), true);
			write_label(out, "thread", kinds[k], false);
			fprintf(out, "} %llu\n", (unsigned long long)o->threads[state][k]);
		}
	}
	write_header(out, "offcpu_longest_open_wait_seconds", "gauge",
		     "How long the longest wait not ended yet has lasted so far (0: none).");
	for (state = 0; state < OFFCPU_STATE_COUNT; state++) {
		for (k = 0; k < 2; k++) {
			fputs("offcpu_longest_open_wait_seconds{", out);
			write_label(out, "state", states__name(state), true);
			write_label(out, "thread", kinds[k], false);
			fputc('}', out);
			write_seconds(out, o->longest_ns[state][k]);
		}
	}
}

void metrics__write(FILE *out, const struct metrics *m, const struct metrics_now *now)
{
	char name[128], help[160];
	unsigned int i;

	write_header(out, "offcpu_off_cpu_seconds_total", "counter",
		     "Time threads spent off CPU in waits that ended, by thread state, wait "
		     "class, command name and cgroup.");
	write_series(out, m, true);
	write_header(out, "offcpu_waits_total", "counter",
		     "Waits that ended, by thread state, wait class, command name and cgroup.");
	write_series(out, m, false);
	if (now->sampling)
		write_on_cpu(out, m);
	write_header(out, "offcpu_runqueue_seconds_total", "counter",
		     "Time threads were runnable but waited for a CPU.");
	fputs("offcpu_runqueue_seconds_total", out);
	write_seconds(out, m->runq_ns);
	write_header(out, "offcpu_hidden_idle_seconds_total", "counter",
		     "Time of kernel threads idling (wait class idle), in no series above; "
		     "offcpu serve -k shows them.");
	fputs("offcpu_hidden_idle_seconds_total", out);
	write_seconds(out, m->hidden_ns);
	if (now->open_waits)
		write_open_waits(out, now->open_waits);
	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		snprintf(name, sizeof(name), "offcpu_%s_total", counters__name(i));
		snprintf(help, sizeof(help), "Health counter %s (offcpu(1), HEALTH COUNTERS).",
			 counters__name(i));
		write_header(out, name, "counter", help);
		fprintf(out, "%s %llu\n", name, (unsigned long long)now->counters[i]);
	}
	write_header(out, "offcpu_profile_windows_open", "gauge",
		     "Profile requests being recorded (/debug/pprof/offcpu, profile, wall).");
	fprintf(out, "offcpu_profile_windows_open %u\n", now->windows_open);
	write_header(out, "offcpu_http_connections_refused_total", "counter",
		     "Connections answered 429 at accept, past their client's cap.");
	fprintf(out, "offcpu_http_connections_refused_total %llu\n",
		(unsigned long long)now->connections_refused);
	write_header(
	    out, "offcpu_http_connections_cut_total", "counter",
	    "Connections cut: headers not in within 5 s, or an answer not out within 10 s.");
	fprintf(out, "offcpu_http_connections_cut_total %llu\n",
		(unsigned long long)now->connections_cut);
	write_header(out, "process_cpu_seconds_total", "counter",
		     "User and system CPU time offcpu has used.");
	fputs("process_cpu_seconds_total", out);
	write_seconds(out, now->cpu_ns);
	write_header(out, "process_resident_memory_bytes", "gauge", "offcpu's resident memory.");
	fprintf(out, "process_resident_memory_bytes %llu\n", (unsigned long long)now->rss_bytes);
	write_header(out, "process_start_time_seconds", "gauge",
		     "When offcpu started, in seconds since the epoch.");
	fprintf(out, "process_start_time_seconds %llu\n", (unsigned long long)now->start_time_s);
}
