// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash_table.h"
#include "lib/log.h"
#include "offcpu.h"
#include "output/output.h"
#include "serve/metrics.h"
#include "serve/serve.h"
#include "serve/server.h"
#include "trace/counters.h"

/* The loop comes round at least this often: windows close and /metrics renders on time. */
#define POLL_INTERVAL_MS 50
/*
 * A window closes this long after its end: a wait that ended inside it
 * reaches user space within the reader's 50 ms poll (its user stack is
 * taken on the thread's way back to user space), with room for a loaded
 * machine.
 */
#define CLOSE_SLACK_NS 300000000ULL
/* Label values not shown yet get a free slot at most this often. */
#define PROMOTE_NS (10 * 1000000000ULL)
/*
 * The interned stacks start anew (a generation) past this many, or past
 * IDLE_ROTATE_STACKS while no window is open: only windows need stacks, so
 * memory follows the distinct stacks of the windows open, not of the run.
 * Measured system wide at -m 0 beside other sessions' builds: 600 MiB in
 * 150 s when they were kept (preempted compilers: a new stack at nearly
 * every preemption).
 */
#define ROTATE_STACKS 8192
#define IDLE_ROTATE_STACKS 1024

/* Freed memory is given back to the kernel at most this often (free_generations). */
#define TRIM_INTERVAL_NS 1000000000ULL

/*
 * The interned strings are swept (sweep_strings) once
 * they hold twice what the last sweep kept plus SWEEP_FLOOR_BYTES, at
 * most once a SWEEP_INTERVAL_NS: memory follows the strings still held,
 * not every title, comm, path and symbol name of the run. A sweep's time
 * is the marking of the stacks held: 17 ms for ROTATE_STACKS stacks of 24
 * frames on an idle core (profile__mark_frames); in bench/soak-serve beside
 * other sessions' tests, 14 to 45 ms at 500 to 940 stacks and 175 ms at
 * 14,900 (a generation retired under a window), before marking a run of
 * frames' module once. Once a SWEEP_INTERVAL_NS at most, so 2% of the loop
 * at the worst seen, however fast new strings come; the soak's came at
 * 1-2 KB/s, a sweep every one to three minutes.
 */
#define SWEEP_FLOOR_BYTES (256UL << 10)
#define SWEEP_INTERVAL_NS (10 * 1000000000ULL)

/* Stacks retired from the profile, freed once no window opened before it is open. */
struct generation {
	struct generation *next;
	struct hash_table *stacks;
	uint64_t seq;
};

/*
 * One profile request: the waits that end in [start_ns, end_ns) (not
 * PROFILE_CPU's), and the on-CPU samples taken in it (not PROFILE_OFF_CPU's).
 */
struct window {
	struct window *next;
	struct profile_request *request;
	enum profile_kind kind;
	struct profile *profile; /* sums only: stacks and strings are the base profile's */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t counters_at_start[OFFCPU_CNT_MAX];
	uint64_t generation; /* the stacks' generation when it opened */
	int err;
};

struct serve {
	const struct serve_opts *opts;
	struct output_opts view; /* what the windows and the metrics show */
	struct tracer *tracer;
	struct collector *collector;
	struct profile *base;
	struct symbolizer *symbolizer;
	struct metrics *metrics;
	struct server *server;
	struct window *windows;
	struct generation *retired;
	uint64_t generation;
	bool stacks_pinned; /* a collector that could not forget: never free a generation */
	size_t rotate_stacks, idle_rotate_stacks;
	uint64_t last_promote_ns;
	uint64_t start_time_s;
	uint64_t last_trim_ns;
	uint64_t memstats_ns; /* serve_opts.memstats_interval_ns */
	uint64_t last_memstats_ns;
	/* sweep_strings. */
	bool sweep_every_tick;	   /* serve_opts.sweep_every_tick */
	unsigned long swept_bytes; /* what the last sweep kept */
	uint64_t last_sweep_ns;
	unsigned long sweeps;
};

/* The health counters as of now: the BPF side's and the collector's. */
static void counters_now(struct serve *s, uint64_t *out)
{
	uint64_t bpf[OFFCPU_CNT_BPF_MAX];
	unsigned int i;

	memcpy(out, s->base->counters, OFFCPU_CNT_MAX * sizeof(*out));
	out[OFFCPU_CNT_FEATURES_MISSING] = tracer__features_missing(s->tracer);
	if (tracer__counters(s->tracer, bpf))
		return;
	for (i = 0; i < OFFCPU_CNT_BPF_MAX; i++)
		out[i] += bpf[i];
}

static bool in_window(const struct window *win, const struct wait *w)
{
	return !win->err && w->end_ts_ns >= win->start_ns && w->end_ts_ns < win->end_ns;
}

static int on_add(void *ctx, const struct wait *w)
{
	struct serve *s = ctx;
	struct window *win;

	for (win = s->windows; win; win = win->next) {
		if (win->kind != PROFILE_CPU && in_window(win, w))
			win->err = profile__add(win->profile, w);
	}
	/* As every view: kernel threads idling only when asked for. */
	if (!output__hides(&s->view, w))
		return metrics__add(s->metrics, w);
	metrics__add_hidden(s->metrics, w);
	return 0;
}

static int on_add_sample(void *ctx, const struct wait *sample)
{
	struct serve *s = ctx;
	struct window *win;

	for (win = s->windows; win; win = win->next) {
		if (win->kind != PROFILE_OFF_CPU && in_window(win, sample))
			win->err = profile__add_sample(win->profile, sample);
	}
	return metrics__add_sample(s->metrics, sample);
}

static uint64_t realtime_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

static void open_window(struct serve *s, struct profile_request *r, uint64_t now_ns)
{
	struct window *win = calloc(1, sizeof(*win));

	if (!win || profile__new(false, &win->profile) ||
	    (s->base->main_binary &&
	     profile__set_main_binary(win->profile, s->base->main_binary))) {
		if (win)
			profile__free(win->profile);
		free(win);
		profile_request__finish(r, NULL, 0, -ENOMEM);
		return;
	}
	win->request = r;
	win->kind = profile_request__kind(r);
	/* Typed as sampled even if no sample comes: its scraper reads cpu or wall. */
	if (win->kind != PROFILE_OFF_CPU)
		win->profile->oncpu.period_ns = s->opts->sample_period_ns;
	win->start_ns = now_ns;
	win->end_ns = now_ns + profile_request__seconds(r) * 1000000000ULL;
	win->profile->start_time_ns = realtime_ns();
	win->profile->duration_ns = win->end_ns - win->start_ns;
	/* A wait begun before the window adds only its time inside. */
	win->profile->window_start_ns = win->start_ns;
	counters_now(s, win->counters_at_start);
	win->generation = s->generation;
	win->next = s->windows;
	s->windows = win;
}

static void free_window(struct window *win)
{
	profile__free(win->profile);
	free(win);
}

static void resolve_stack(struct symbolizer *sym, const struct stack *st)
{
	uint32_t i;

	/* The base profile's stacks: only this thread reads or completes them. */
	for (i = 0; st && i < st->nr; i++)
		symbolizer__resolve_lines(sym, (struct frame *)&st->frames[i]);
}

static void resolve_entries(struct symbolizer *sym, const struct hash_table *entries)
{
	struct hash_table_iter it = { 0 };
	void *value;

	while (hash_table__next(entries, &it, NULL, &value)) {
		const struct profile_entry *e = value;

		resolve_stack(sym, e->key.kernel_stack);
		resolve_stack(sym, e->key.user_stack);
	}
}

/* The window's pprof bytes, with lines and the counters of its time; NULL and *err. */
static char *encode_window(struct serve *s, struct window *win, size_t *size, int *err)
{
	struct output_opts view = s->view;
	uint64_t now[OFFCPU_CNT_MAX];
	char *bytes = NULL;
	unsigned int i;
	FILE *out;

	resolve_entries(s->symbolizer, win->profile->entries);
	resolve_entries(s->symbolizer, win->profile->oncpu.entries);
	if (win->kind == PROFILE_CPU)
		view.pprof = OUTPUT_PPROF_CPU;
	counters_now(s, now);
	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		win->profile->counters[i] = now[i] - win->counters_at_start[i];
	out = open_memstream(&bytes, size);
	if (!out) {
		*err = -errno;
		return NULL;
	}
	*err = output_format__write(output_format__by_name("pprof"), out, win->profile, &view);
	if (fclose(out) && !*err)
		*err = -errno;
	if (*err) {
		free(bytes);
		return NULL;
	}
	return bytes;
}

/* Windows whose client left are dropped; windows past their end are handed over. */
static void close_windows(struct serve *s, uint64_t now_ns, bool all)
{
	struct window **link = &s->windows, *win;
	size_t size = 0;
	char *bytes;
	int err;

	while ((win = *link)) {
		if (all || profile_request__cancelled(win->request)) {
			*link = win->next;
			profile_request__finish(win->request, NULL, 0, -ECANCELED);
			free_window(win);
			continue;
		}
		if (now_ns < win->end_ns + CLOSE_SLACK_NS) {
			link = &win->next;
			continue;
		}
		*link = win->next;
		err = win->err;
		bytes = err ? NULL : encode_window(s, win, &size, &err);
		if (err)
			log__warn("cannot write a profile window: %s", strerror(-err));
		profile_request__finish(win->request, bytes, size, err);
		free_window(win);
	}
}

static void count_open_wait(void *ctx, const struct offcpu_open_wait *w)
{
	struct metrics_open_waits *o = ctx;
	uint64_t now = clock__monotonic_ns(), age;
	unsigned int state = w->state < OFFCPU_STATE_COUNT ? w->state : OFFCPU_STATE_OTHER;
	unsigned int kernel = w->kernel_thread ? 1 : 0;

	age = now > w->start_ts_ns ? now - w->start_ts_ns : 0;
	o->threads[state][kernel]++;
	if (age > o->longest_ns[state][kernel])
		o->longest_ns[state][kernel] = age;
}

static uint64_t rss_bytes(void)
{
	unsigned long long size, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void render_metrics(struct serve *s)
{
	uint64_t ticket = server__metrics_ticket(s->server), counters[OFFCPU_CNT_MAX];
	struct metrics_open_waits open = { 0 };
	struct metrics_now now = { .counters = counters };
	struct rusage ru;
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	counters_now(s, counters);
	if (!tracer__open_gauge(s->tracer, count_open_wait, &open))
		now.open_waits = &open;
	if (!getrusage(RUSAGE_SELF, &ru))
		now.cpu_ns =
		    ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
		    ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
	now.rss_bytes = rss_bytes();
	now.start_time_s = s->start_time_s;
	now.windows_open = server__windows_open(s->server);
	now.sampling = s->opts->sample_period_ns != 0;
	server__connection_drops(s->server, &now.connections_refused, &now.connections_cut);
	out = open_memstream(&text, &size);
	if (!out)
		return;
	metrics__write(out, s->metrics, &now);
	if (fclose(out)) {
		free(text);
		return;
	}
	server__set_metrics(s->server, text, size, ticket);
}

/*
 * Glibc keeps what was freed in its heap, so the RSS
 * stayed at the busiest window's peak: 153 MiB against 39 MiB in use
 * after a 10 s window under bench/soak-serve's load. malloc_trim gives
 * its free pages back (madvise): 1.5 ms (8 ms at most) with 80 MiB in
 * use there, so at most once a TRIM_INTERVAL_NS.
 */
static void give_back(struct serve *s)
{
	if (clock__monotonic_ns() - s->last_trim_ns < TRIM_INTERVAL_NS)
		return;
	malloc_trim(0);
	s->last_trim_ns = clock__monotonic_ns();
}

/* Generations that no open window may hold: those retired before the oldest window opened. */
static void free_generations(struct serve *s, bool all)
{
	struct generation **link = &s->retired, *g;
	uint64_t oldest = s->generation;
	struct window *win;
	bool freed = false;

	for (win = s->windows; win; win = win->next)
		if (win->generation < oldest)
			oldest = win->generation;
	while ((g = *link)) {
		if (!all && (s->stacks_pinned || g->seq >= oldest)) {
			link = &g->next;
			continue;
		}
		*link = g->next;
		profile__free_stacks(g->stacks);
		free(g);
		freed = true;
	}
	if (freed && !all)
		give_back(s);
}

static void rotate_stacks(struct serve *s)
{
	size_t nr = hash_table__size(s->base->stacks);
	struct generation *g;

	if (nr < (s->windows ? s->rotate_stacks : s->idle_rotate_stacks))
		return;
	g = calloc(1, sizeof(*g));
	if (!g)
		return;
	g->stacks = profile__take_stacks(s->base);
	if (!g->stacks) {
		free(g);
		return;
	}
	g->seq = s->generation++;
	g->next = s->retired;
	s->retired = g;
	/* Its caches may still point at the old stacks: keep every generation. */
	if (collector__forget_stacks(s->collector))
		s->stacks_pinned = true;
	free_generations(s, false);
}

static unsigned long retired_generations(const struct serve *s)
{
	const struct generation *g;
	unsigned long nr = 0;

	for (g = s->retired; g; g = g->next)
		nr++;
	return nr;
}

/*
 * test-only: what memory is held, to see what grows
 * over a run (processes, files, lines, strings, stacks, the heap).
 */
static void log_memstats(struct serve *s, uint64_t now_ns)
{
	struct symbolizer_stats st;
	unsigned long strings, bytes;
	struct mallinfo2 mi;

	if (!s->memstats_ns || now_ns - s->last_memstats_ns < s->memstats_ns)
		return;
	s->last_memstats_ns = now_ns;
	/* Only now: it walks the whole heap (a third of serve's CPU when taken every tick). */
	mi = mallinfo2();
	symbolizer__stats(s->symbolizer, &st);
	strpool__stats(s->base->strings, &strings, &bytes);
	fprintf(stderr,
		"memstats: processes %lu files %lu (%" PRIu64
		" filebytes) lines %lu (%lu dead) strings %lu (%lu bytes) "
		"stacks %zu retired %lu heap %zu mmap %zu rss %" PRIu64 " sweeps %lu\n",
		st.processes, st.files, st.file_bytes, st.lines, st.dead_lines, strings, bytes,
		hash_table__size(s->base->stacks), retired_generations(s), mi.uordblks, mi.hblkhd,
		rss_bytes(), s->sweeps);
}

/*
 * Every interned string still held, marked where it is
 * held (the list is in lib/strpool.h): the base profile's stacks, current
 * and retired, its label sets; the windows' entries; the metrics; the
 * collector's caches and parked waits; the symbolizer's. The inline
 * frames the stacks and lines hold are marked on the way.
 */
static void mark_strings(struct serve *s)
{
	struct strpool *strings = s->base->strings;
	struct inline_pool *inlines = s->base->inlines;
	struct generation *g;
	struct window *win;

	profile__mark_strings(s->base, strings, inlines);
	for (g = s->retired; g; g = g->next)
		profile__mark_stacks(g->stacks, strings, inlines);
	for (win = s->windows; win; win = win->next)
		profile__mark_strings(win->profile, strings, inlines);
	metrics__mark_strings(s->metrics, strings);
	collector__mark_strings(s->collector, strings);
	symbolizer__mark_strings(s->symbolizer, strings);
}

/* Between records, so that nothing but the holders mark_strings asks holds a string. */
static void sweep_strings(struct serve *s, uint64_t now_ns)
{
	unsigned long strings, bytes, freed, freed_bytes, inlines_freed;
	uint64_t started;

	strpool__stats(s->base->strings, &strings, &bytes);
	if (!s->sweep_every_tick && (bytes < 2 * s->swept_bytes + SWEEP_FLOOR_BYTES ||
				     now_ns - s->last_sweep_ns < SWEEP_INTERVAL_NS))
		return;
	started = clock__monotonic_ns();
	mark_strings(s);
	inlines_freed = inline_pool__sweep(s->base->inlines);
	strpool__sweep(s->base->strings, &freed, &freed_bytes);
	s->last_sweep_ns = clock__monotonic_ns();
	s->swept_bytes = bytes - freed_bytes;
	s->sweeps++;
	if (s->memstats_ns)
		fprintf(stderr,
			"sweep: strings %lu (%lu bytes) freed %lu (%lu bytes) inlines freed %lu "
			"stacks %zu retired %lu took %" PRIu64 " us\n",
			strings - freed, s->swept_bytes, freed, freed_bytes, inlines_freed,
			hash_table__size(s->base->stacks), retired_generations(s),
			(s->last_sweep_ns - started) / 1000);
	if (freed)
		give_back(s);
}

/* The files no process maps are freed, their lines kept for open windows. */
static void release_lines(struct serve *s)
{
	uint64_t oldest = UINT64_MAX;
	struct window *win;

	for (win = s->windows; win; win = win->next)
		if (win->start_ns < oldest)
			oldest = win->start_ns;
	symbolizer__lines_needed_since(s->symbolizer, oldest);
}

static void tick(struct serve *s, uint64_t now_ns)
{
	struct profile_request *r;

	server__alive(s->server, now_ns);
	while ((r = server__next_request(s->server)))
		open_window(s, r, now_ns);
	close_windows(s, now_ns, false);
	release_lines(s);
	rotate_stacks(s);
	free_generations(s, false);
	/* Before the sweep, which then frees their titles. */
	if (collector__reap(s->collector, now_ns))
		log__warn("cannot free the processes gone: out of memory");
	sweep_strings(s, now_ns);
	if (now_ns - s->last_promote_ns >= PROMOTE_NS) {
		s->last_promote_ns = now_ns;
		metrics__tick(s->metrics);
	}
	if (server__metrics_wanted(s->server))
		render_metrics(s);
	log_memstats(s, now_ns);
}

int serve__run(const struct serve_opts *o, struct tracer *t, struct collector *c,
	       struct profile *profile, struct symbolizer *symbolizer)
{
	uint64_t started_ns = clock__monotonic_ns(), deadline = 0, now;
	struct serve s = {
		.opts = o,
		.view = { .show_idle = o->show_idle },
		.tracer = t,
		.collector = c,
		.base = profile,
		.symbolizer = symbolizer,
		.last_promote_ns = started_ns,
		.start_time_s = realtime_ns() / 1000000000ULL,
	};
	int err;

	s.rotate_stacks = o->rotate_stacks ?: ROTATE_STACKS;
	s.idle_rotate_stacks = o->rotate_stacks ?: IDLE_ROTATE_STACKS;
	s.memstats_ns = o->memstats_interval_ns;
	s.sweep_every_tick = o->sweep_every_tick;
	s.last_sweep_ns = started_ns;
	if (o->duration_ns)
		deadline = o->duration_ns > UINT64_MAX - started_ns ? UINT64_MAX
								    : started_ns + o->duration_ns;
	err = metrics__new(&s.metrics);
	if (err) {
		close(o->listen_fd);
		log__error("cannot set up the metrics: %s", strerror(-err));
		return err;
	}
	/* The counters start at 0 with tracing: nothing waited before then is in them. */
	metrics__count_since(s.metrics, profile->window_start_ns);
	profile->on_add = on_add;
	profile->on_add_sample = on_add_sample;
	profile->on_add_ctx = &s;
	symbolizer__free_unmapped(symbolizer);
	err = server__start(o->listen_fd, o->verbose, o->sample_period_ns != 0, &s.server);
	if (err) {
		log__error("cannot start the HTTP server: %s", strerror(-err));
		metrics__free(s.metrics);
		return err;
	}
	/* The first rendering, so that /metrics answers at once. */
	render_metrics(&s);
	while (!*o->stop) {
		err = tracer__poll(t, symbolizer__poll_timeout_ms(symbolizer, POLL_INTERVAL_MS));
		if (err == -EINTR)
			err = 0;
		if (err) {
			log__error("reading trace records failed: %s", strerror(-err));
			break;
		}
		symbolizer__tick(symbolizer);
		now = clock__monotonic_ns();
		if (deadline && now >= deadline)
			break;
		tick(&s, now);
	}
	close_windows(&s, clock__monotonic_ns(), true);
	server__stop(s.server);
	/* The current generation stays the profile's, which main() frees. */
	free_generations(&s, true);
	if (o->stats) {
		uint64_t counters[OFFCPU_CNT_MAX];

		counters_now(&s, counters);
		fputs("offcpu health counters:\n", stderr);
		counters__print(stderr, counters, "  ");
	}
	profile->on_add = NULL;
	profile->on_add_sample = NULL;
	metrics__free(s.metrics);
	return err;
}
