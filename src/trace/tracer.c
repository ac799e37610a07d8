// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "offcpu.h"
#include "offcpu.skel.h"
#include "trace/kernel_features.h"
#include "trace/tracer.h"

struct tracer {
	struct offcpu_bpf *skel;
	struct ring_buffer *ring;
	tracer_record_fn fn;
	void *ctx;
	struct timespec record_delay; /* tracer_opts.record_delay_us */
	uint64_t batch_end_ns;
	bool batch_cut;	 /* the last batch ran out of time: records may be left */
	bool counting;	 /* at stop, past STOP_DRAIN_NS: waits are counted, not read */
	uint64_t unread; /* waits left in the ring at stop */
	uint64_t unread_ns;
	uint64_t unread_samples; /* -F: samples left alike */
	uint64_t unread_samples_ns;
	struct offcpu_filter filter; /* the BPF side's, for the iterator's waits */
	struct bpf_program *open_waits; /* offcpu_open_waits, or its plain twin */
	bool snapshot;	    /* nothing attached */
	bool measure_clock; /* tracer_opts.measure_clock */
	void *open_record;  /* an open wait, 8-byte aligned for the collector */
	uint64_t python_added; /* processes given a Python layout (tracer__python_add) */
	unsigned int missing_features; /* KERNEL_FEATURE_* bits this run goes without */
	uint64_t features_said;	       /* those, and trusted task arguments: each said once, counted */
	struct bpf_link **sample_links; /* -F: the sampler on each CPU's clock event */
	int nr_sample_links;
};

/* The largest open-wait record (offcpu_open_waits: OPEN_COPY_MAX of stack copied). */
#define OPEN_RECORD_MAX                                                                            \
	(OFFCPU_WAIT_HEADER_SIZE + 2 * OFFCPU_MAX_STACK_DEPTH * 8 +                                \
	 sizeof(struct offcpu_user_copy) + OFFCPU_MAX_STACK_COPY)

/*
 * After sched_switch is detached, waits parked for their user stack reach
 * user space within microseconds; allow for a loaded machine.
 */
#define SETTLE_NS 50000000L

/*
 * ring_buffer__consume returns only once the ring is empty: under a flood
 * of records, or records slow to process, never, so -d, SIGINT and the
 * command's exit went unseen (seen: still running at 60 s for -d 5s). A
 * batch of reading ends after this long; the next tracer__poll reads on.
 */
#define BATCH_NS 20000000ULL

/*
 * At stop, what is left in the ring is read for at most this long, so
 * offcpu ends within a second of SIGINT whatever the load; the waits it
 * could not read in that time are counted in ringbuf_unread.
 */
#define STOP_DRAIN_NS 250000000ULL

/*
 * Ends libbpf's loop early: it moves past a record before calling back,
 * so the record was read. batch_cut tells it from the callback's errors.
 */
#define BATCH_END (-EAGAIN)

static const char *error_text(int err, char *buf, size_t size)
{
	/* libbpf's own codes (-4000 and below) are not errno values. */
	libbpf_strerror(err, buf, size);
	return buf;
}

/*
 * The one line for a step of setting up BPF that failed: the limits of
 * this machine that stop one, said as such, or the step and its error.
 */
static void report_setup_error(const char *step, int err)
{
	char text[128];

	if (err == -EPERM)
		log__error("not permitted to load BPF programs: run as root, or with CAP_BPF "
			   "and CAP_PERFMON");
	else if (err == -EACCES)
		log__error("this kernel's BPF verifier rejected offcpu's program (rerun with -v)");
	else if (err == -ENOMEM)
		log__error("not enough memory for offcpu's BPF maps and ring buffer (a memory "
			   "limit?); rerun with -v");
	else
		log__error("cannot %s: %s (rerun with -v)", step,
			   error_text(err, text, sizeof(text)));
}

/*
 * Attaches every program this run loaded, sched_switch first. A program of
 * the object missing from the list would be loaded and never attached, its
 * waits silently absent: an error naming it, before anything is attached.
 */
static int attach_core(struct offcpu_bpf *skel)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} core[] = {
		{ skel->progs.offcpu_sched_switch, &skel->links.offcpu_sched_switch },
		{ skel->progs.offcpu_sched_process_exit, &skel->links.offcpu_sched_process_exit },
		{ skel->progs.offcpu_sched_process_exec, &skel->links.offcpu_sched_process_exec },
		{ skel->progs.offcpu_sched_process_fork, &skel->links.offcpu_sched_process_fork },
		/* Loaded only when waits are parked for it (defer_user_stacks). */
		{ skel->progs.offcpu_rseq_update, &skel->links.offcpu_rseq_update },
		/* Runs only when read (tracer__open_gauge). */
		{ skel->progs.offcpu_open_gauge, &skel->links.offcpu_open_gauge },
		/* Iterators, run (not attached) by run_iterator(). */
		{ skel->progs.offcpu_open_at_start, NULL },
		{ skel->progs.offcpu_make_slots, NULL },
		{ skel->progs.offcpu_open_waits, NULL },
		{ skel->progs.offcpu_open_waits_plain, NULL },
		/* offcpu snapshot's, for a moment (pair_clocks()). */
		{ skel->progs.offcpu_pair_clocks, NULL },
		/* -F: on each CPU's clock event (attach_sampler()). */
		{ skel->progs.offcpu_sample, NULL },
		/* Who woke each wait; off only under wakeups = false. */
		{ skel->progs.offcpu_sched_waking, &skel->links.offcpu_sched_waking },
		/*
		 * Exits before entries: an interrupt entered with only the entry
		 * attached would leave its depth raised for good.
		 */
		{ skel->progs.offcpu_irq_exit, &skel->links.offcpu_irq_exit },
		{ skel->progs.offcpu_local_timer_exit, &skel->links.offcpu_local_timer_exit },
		{ skel->progs.offcpu_softirq_exit, &skel->links.offcpu_softirq_exit },
		{ skel->progs.offcpu_irq_entry, &skel->links.offcpu_irq_entry },
		{ skel->progs.offcpu_local_timer_entry, &skel->links.offcpu_local_timer_entry },
		{ skel->progs.offcpu_softirq_entry, &skel->links.offcpu_softirq_entry },
		{ skel->progs.offcpu_softirq_raise, &skel->links.offcpu_softirq_raise },
		/*
		 * Kernel locks as objects. The end first: a thread whose
		 * begin was seen before the end was attached would keep its
		 * lock for waits that have nothing to do with it.
		 */
		{ skel->progs.offcpu_contention_end, &skel->links.offcpu_contention_end },
		{ skel->progs.offcpu_contention_begin, &skel->links.offcpu_contention_begin },
	};
	struct bpf_program *prog;
	char text[128];
	size_t i;
	int err;

	bpf_object__for_each_program (prog, skel->obj) {
		for (i = 0; i < ARRAY_SIZE(core) && core[i].prog != prog; i++)
			;
		if (i == ARRAY_SIZE(core)) {
			log__error("BPF program %s is not in tracer.c's attach list: it would "
				   "never run",
				   bpf_program__name(prog));
			return -EINVAL;
		}
	}
	for (i = 0; i < ARRAY_SIZE(core); i++) {
		if (!core[i].link || !bpf_program__autoload(core[i].prog))
			continue;
		*core[i].link = bpf_program__attach(core[i].prog);
		if (!*core[i].link) {
			err = -errno;
			log__error("cannot attach BPF program %s: %s",
				   bpf_program__name(core[i].prog),
				   error_text(err, text, sizeof(text)));
			return err;
		}
	}
	return 0;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !log__is_verbose())
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * The tracepoint a program attaches to: its section's name after
 * "tp_btf/"; NULL for iterators and the sampler's perf event.
 */
static const char *program_tracepoint(const struct bpf_program *prog)
{
	const char *section = bpf_program__section_name(prog);
	const char *name = strchr(section, '/');

	if (!strncmp(section, "iter", 4) || !strcmp(section, "perf_event"))
		return NULL;
	return name ? name + 1 : section;
}

int tracer__each_tracepoint(kernel_features_tracepoint_fn fn, void *ctx)
{
	struct offcpu_bpf *skel = offcpu_bpf__open();
	struct bpf_program *prog, *before;
	const char *name;
	int err;

	if (!skel) {
		err = -errno;
		report_setup_error("open offcpu's BPF programs", err);
		return err;
	}
	bpf_object__for_each_program (prog, skel->obj) {
		name = program_tracepoint(prog);
		if (!name)
			continue;
		/* Once each: two programs may take turns on one tracepoint. */
		for (before = bpf_object__next_program(skel->obj, NULL); before != prog;
		     before = bpf_object__next_program(skel->obj, before)) {
			if (program_tracepoint(before) && !strcmp(program_tracepoint(before), name))
				break;
		}
		if (before == prog)
			fn(name, ctx);
	}
	offcpu_bpf__destroy(skel);
	return 0;
}

/* Every program this run loads ("tp_btf/NAME") has its tracepoint. */
static int check_tracepoints(struct offcpu_bpf *skel, const struct btf *vmlinux, const char *path)
{
	struct bpf_program *prog;
	const char *name;

	bpf_object__for_each_program (prog, skel->obj) {
		name = program_tracepoint(prog);
		if (!bpf_program__autoload(prog) || !name)
			continue;
		if (kernel_features__tracepoint_args(vmlinux, name) < 0) {
			log__error("this kernel has no %s tracepoint in its BTF (%s)", name, path);
			return -ENOENT;
		}
	}
	return 0;
}

/*
 * A ring buffer for dwarf mode's records, a few KiB each (6 KiB typically)
 * where fp mode's are a few hundred bytes: twice fp mode's 4 MiB, room for
 * 1,300 records of 6 KiB between two reads (50 ms apart at the most).
 * libbpf maps it twice, so each byte counts twice in offcpu's RSS. The copy
 * buffer (both modes copy at the SP): one per CPU, and with --wakers in
 * dwarf mode one more per CPU for the wakers' copies.
 */
#define DWARF_RING_BYTES (8U << 20)

static int size_stack_copies(struct offcpu_bpf *skel)
{
	int cpus, err;

	if (!skel->rodata->stack_copy_bytes && !skel->rodata->fix_leaf)
		return 0;
	cpus = libbpf_num_possible_cpus();
	if (cpus < 0) {
		report_setup_error("count the CPUs", cpus);
		return cpus;
	}
	err = bpf_map__set_max_entries(skel->maps.copy_bufs, (__u32)cpus);
	if (!err && skel->rodata->stack_copy_bytes && skel->rodata->want_waker_stacks)
		err = bpf_map__set_max_entries(skel->maps.waker_copy_bufs, (__u32)cpus);
	if (!err && skel->rodata->stack_copy_bytes)
		err = bpf_map__set_max_entries(skel->maps.events, DWARF_RING_BYTES);
	if (err)
		report_setup_error("size the user stack copies", err);
	return err;
}

/* -F: the sampler loaded, its period set and a buffer for each CPU. */
static int configure_sampler(struct offcpu_bpf *skel, const struct tracer_opts *o)
{
	int cpus, err;

	bpf_program__set_autoload(skel->progs.offcpu_sample, o->freq > 0);
	if (!o->freq)
		return 0;
	skel->rodata->sample_period_ns = 1000000000ULL / o->freq;
	cpus = libbpf_num_possible_cpus();
	if (cpus < 0) {
		report_setup_error("count the CPUs", cpus);
		return cpus;
	}
	err = bpf_map__set_max_entries(skel->maps.sample_bufs, (__u32)cpus);
	if (err)
		report_setup_error("size the on-CPU sampler's buffers", err);
	return err;
}

/*
 * -F: a software clock event on each CPU, its period in nanoseconds
 * (a cpu-clock event counts time), running the sampler at each. A CPU
 * that is offline has none (ENODEV): it runs nothing to sample.
 */
static int attach_sampler(struct tracer *t)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = t->skel->rodata->sample_period_ns,
	};
	int cpus = libbpf_num_possible_cpus(), cpu, fd, err;
	char text[128];

	if (!attr.sample_period)
		return 0;
	if (cpus < 0)
		return cpus;
	t->sample_links = calloc((size_t)cpus, sizeof(*t->sample_links));
	if (!t->sample_links)
		return -ENOMEM;
	for (cpu = 0; cpu < cpus; cpu++) {
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;
		if (fd < 0) {
			err = -errno;
			log__error("cannot open the on-CPU sampler's clock event on CPU %d: %s", cpu,
				   strerror(-err));
			return err;
		}
		/* The link owns fd from here: destroying it closes it. */
		t->sample_links[t->nr_sample_links] =
		    bpf_program__attach_perf_event(t->skel->progs.offcpu_sample, fd);
		if (!t->sample_links[t->nr_sample_links]) {
			err = -errno;
			close(fd);
			log__error("cannot attach BPF program offcpu_sample on CPU %d: %s", cpu,
				   error_text(err, text, sizeof(text)));
			return err;
		}
		t->nr_sample_links++;
	}
	return 0;
}

static void detach_sampler(struct tracer *t)
{
	int i;

	for (i = 0; i < t->nr_sample_links; i++)
		bpf_link__destroy(t->sample_links[i]);
	t->nr_sample_links = 0;
}

/*
 * sched_waking and the interrupt tracepoints that tell which
 * context a wakeup came from; the local timer's is x86's alone.
 */
static void set_wakeup_autoload(struct offcpu_bpf *skel, const struct btf *vmlinux, bool on)
{
	bool timer = on && kernel_features__tracepoint_args(vmlinux, "local_timer_entry") >= 0 &&
		     kernel_features__tracepoint_args(vmlinux, "local_timer_exit") >= 0;

	bpf_program__set_autoload(skel->progs.offcpu_sched_waking, on);
	bpf_program__set_autoload(skel->progs.offcpu_irq_entry, on);
	bpf_program__set_autoload(skel->progs.offcpu_irq_exit, on);
	bpf_program__set_autoload(skel->progs.offcpu_softirq_entry, on);
	bpf_program__set_autoload(skel->progs.offcpu_softirq_exit, on);
	bpf_program__set_autoload(skel->progs.offcpu_softirq_raise, on);
	bpf_program__set_autoload(skel->progs.offcpu_local_timer_entry, timer);
	bpf_program__set_autoload(skel->progs.offcpu_local_timer_exit, timer);
}

/*
 * Kernel locks as wait objects, where the kernel has lock:contention_begin
 * (5.19); their slab caches' names where it has bpf_get_kmem_cache() (6.13).
 * offcpu snapshot traces nothing: a blocked thread's lock is not known.
 */
static void set_kernel_lock_autoload(struct offcpu_bpf *skel, const struct btf *vmlinux, bool on)
{
	on = on && kernel_features__has(vmlinux, KERNEL_FEATURE_LOCK_CONTENTION);
	bpf_program__set_autoload(skel->progs.offcpu_contention_begin, on);
	bpf_program__set_autoload(skel->progs.offcpu_contention_end, on);
	skel->rodata->has_kmem_cache =
	    on && btf__find_by_name_kind(vmlinux, "bpf_get_kmem_cache", BTF_KIND_FUNC) > 0;
}

/* What this run would use and the kernel lacks: KERNEL_FEATURE_* bits. */
static unsigned int missing_features(const struct btf *vmlinux, const struct tracer_opts *o)
{
	unsigned int missing = 0;

	if (o->user_stack && !kernel_features__has(vmlinux, KERNEL_FEATURE_RSEQ_UPDATE))
		missing |= 1u << KERNEL_FEATURE_RSEQ_UPDATE;
	if (o->wakeups && !kernel_features__has(vmlinux, KERNEL_FEATURE_LOCAL_TIMER))
		missing |= 1u << KERNEL_FEATURE_LOCAL_TIMER;
	if (!o->snapshot && !kernel_features__has(vmlinux, KERNEL_FEATURE_SCHED_INFO))
		missing |= 1u << KERNEL_FEATURE_SCHED_INFO;
	if (!o->snapshot && !o->no_objects &&
	    !kernel_features__has(vmlinux, KERNEL_FEATURE_LOCK_CONTENTION))
		missing |= 1u << KERNEL_FEATURE_LOCK_CONTENTION;
	return missing;
}

static int configure(struct offcpu_bpf *skel, const struct tracer_opts *o, bool enriched,
		     unsigned int *missing)
{
	const char *path = o->btf_path ?: KERNEL_BTF_PATH;
	struct btf *vmlinux = kernel_features__load_btf(path);
	int switch_args, err;

	if (!vmlinux)
		return -ENOENT;
	*missing = missing_features(vmlinux, o);
	bpf_program__set_autoload(skel->progs.offcpu_open_waits, enriched);
	bpf_program__set_autoload(skel->progs.offcpu_open_waits_plain, !enriched);
	switch_args = kernel_features__tracepoint_args(vmlinux, "sched_switch");
	skel->rodata->has_prev_state_arg = switch_args >= 4;
	/*
	 * In every mode, filtered or not: at rseq_update the wait's duration is
	 * known, so only the waits that passed -m -M --sample-rate pay for the
	 * user stack (a copy of it in dwarf mode). Its cost for the threads
	 * nobody selected is one task storage lookup on their way to user
	 * space. Without rseq_update, user stacks are taken at switch-out.
	 */
	skel->rodata->defer_user_stacks =
	    o->user_stack && kernel_features__tracepoint_args(vmlinux, "rseq_update") >= 0;
	if (!skel->rodata->defer_user_stacks)
		bpf_program__set_autoload(skel->progs.offcpu_rseq_update, false);
	set_wakeup_autoload(skel, vmlinux, o->wakeups);
	set_kernel_lock_autoload(skel, vmlinux, !o->snapshot && !o->no_objects);
	skel->rodata->want_waker_stacks = o->wakeups && o->waker_stacks;
	err = check_tracepoints(skel, vmlinux, path);
	if (err)
		goto out;

	skel->rodata->state_mask = o->state_mask;
	skel->rodata->stack_depth = o->stack_depth;
	skel->rodata->stack_copy_bytes = o->user_stack ? o->stack_copy_bytes : 0;
	skel->rodata->fix_leaf = o->user_stack && !o->stack_copy_bytes;
	skel->rodata->want_kernel_stack = o->kernel_stack;
	/* Off only for bench/run and bench/kernel_leaf to compare; test_kernel_leaf.py fails then. */
	skel->rodata->take_kernel_leaf = !o->no_kernel_leaf;
	/* Off only for bench/run to compare; test_objects.py fails then. */
	skel->rodata->want_objects = !o->no_objects;
	skel->rodata->want_user_stack = o->user_stack;
	skel->rodata->user_threads_only = o->user_threads_only;
	skel->rodata->kernel_threads_only = o->kernel_threads_only;
	skel->rodata->follow_forks = o->follow_forks;
	skel->rodata->account_threads = o->follow_forks && !o->tids->nr && !o->nr_comms &&
					!o->filter_cgroup && !o->user_threads_only &&
					!o->kernel_threads_only && !o->state_mask;
	skel->rodata->filter_pids = o->pids->nr > 0;
	skel->rodata->filter_tids = o->tids->nr > 0;
	skel->rodata->filter_comms = o->nr_comms > 0;
	skel->rodata->filter_cgroup = o->filter_cgroup;
	skel->rodata->self_tgid = getpid();
	skel->rodata->any_filter = o->pids->nr || o->tids->nr || o->nr_comms || o->filter_cgroup ||
				   o->user_threads_only || o->kernel_threads_only || o->state_mask;

	skel->rodata->max_slots = o->max_entries;
	skel->rodata->alloc_in_scheduler = !kernel_features__preempt_rt() && !o->slots_ahead;
	if (o->filter_cgroup) {
		struct stat st;

		/* A cgroup v2 directory's inode number is its cgroup ID (kernfs). */
		if (fstat(o->cgroup_fd, &st)) {
			err = -errno;
			report_setup_error("read the --cgroup directory", err);
			goto out;
		}
		skel->rodata->cgroup_id = st.st_ino;
	}
	skel->rodata->measure_clock = o->measure_clock;
	err = bpf_map__set_max_entries(skel->maps.comms, o->nr_comms ?: 1);
	if (err) {
		report_setup_error("size the -c map", err);
		goto out;
	}
	/* A preallocated hash: 65,536 processes cost 6 MiB of kernel memory, paid only if used. */
	err = bpf_map__set_max_entries(skel->maps.reads_by_pid, o->label_reads ? 65536 : 1);
	if (err) {
		report_setup_error("size the map of processes read", err);
		goto out;
	}
	err = size_stack_copies(skel);
	if (!err)
		err = configure_sampler(skel, o);
out:
	btf__free(vmlinux);
	return err;
}

static int fill_filters(struct offcpu_bpf *skel, const struct tracer_opts *o)
{
	__u32 zero = 0, fd = o->cgroup_fd;
	__u8 one = 1;
	size_t i;
	int err;

	/* .bss is mapped into this process: no system call per ID. */
	for (i = 0; i < o->pids->nr; i++)
		skel->bss->pid_bits[OFFCPU_ID_WORD(o->pids->ids[i])] |=
		    OFFCPU_ID_BIT(o->pids->ids[i]);
	for (i = 0; i < o->tids->nr; i++)
		skel->bss->tid_bits[OFFCPU_ID_WORD(o->tids->ids[i])] |=
		    OFFCPU_ID_BIT(o->tids->ids[i]);
	for (i = 0; i < o->nr_comms; i++) {
		char key[OFFCPU_COMM_LEN] = { 0 };

		strncpy(key, o->comms[i], sizeof(key) - 1);
		err = bpf_map__update_elem(skel->maps.comms, key, sizeof(key), &one, sizeof(one),
					   BPF_ANY);
		if (err) {
			report_setup_error("fill the -c map", err);
			return err;
		}
	}
	if (o->filter_cgroup) {
		/* The map takes a reference to the cgroup: the caller may close fd. */
		err = bpf_map__update_elem(skel->maps.cgroup, &zero, sizeof(zero), &fd, sizeof(fd),
					   BPF_ANY);
		if (err) {
			report_setup_error("select the --cgroup cgroup", err);
			return err;
		}
	}
	return 0;
}

static void count_unread(struct tracer *t, const void *data, size_t size)
{
	const struct offcpu_wait_record *r = data;

	if (size < OFFCPU_WAIT_HEADER_SIZE)
		return;
	if (r->type == OFFCPU_RECORD_WAIT) {
		t->unread++;
		t->unread_ns += r->duration_ns;
	} else if (r->type == OFFCPU_RECORD_ONCPU) {
		t->unread_samples++;
		t->unread_samples_ns += r->duration_ns;
	}
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	int err;

	if (t->counting) {
		count_unread(t, data, size);
		return 0;
	}
	if (t->record_delay.tv_nsec)
		nanosleep(&t->record_delay, NULL);
	err = t->fn(t->ctx, data, size);
	if (err < 0)
		return err;
	/* A clock read per record: 19 ns here, against microseconds of collecting. */
	if (clock__monotonic_ns() >= t->batch_end_ns) {
		t->batch_cut = true;
		return BATCH_END;
	}
	return 0;
}

/*
 * A CPU's clock pair is taken at its first switch after
 * attaching (keep_clock_pair). offcpu moves itself onto each CPU it may
 * run on, which switches every one within microseconds: sleeping 20 ms
 * for them to switch instead left 77 threads undated, switched in
 * meanwhile (no_start, one run system wide). A CPU outside offcpu's
 * affinity converts with the pair of the CPU the iterator runs on.
 */
static void visit_cpus(void)
{
	cpu_set_t saved, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	sched_setaffinity(0, sizeof(saved), &saved);
}

/* offcpu snapshot: each CPU's clock pair, without recording a wait. */
static int pair_clocks(struct offcpu_bpf *skel)
{
	struct bpf_link *link = bpf_program__attach(skel->progs.offcpu_pair_clocks);
	char text[128];
	int err;

	if (!link) {
		err = -errno;
		log__error("cannot attach BPF program %s: %s",
			   bpf_program__name(skel->progs.offcpu_pair_clocks),
			   error_text(err, text, sizeof(text)));
		return err;
	}
	visit_cpus();
	bpf_link__destroy(link);
	return 0;
}

/*
 * Runs a task iterator once; what it wrote into *buf (malloc'd, *len
 * bytes), or nowhere when buf is NULL. 0 or -errno.
 */
static int run_iterator(struct bpf_program *prog, char **buf, size_t *len)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, NULL);
	size_t cap = 0, n = 0;
	char *data = NULL, *grown, sink[4096];
	ssize_t got;
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bpf_link__destroy(link);
		return err;
	}
	for (;;) {
		if (buf && cap - n < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			grown = realloc(data, cap);
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			data = grown;
		}
		got = buf ? read(fd, data + n, cap - n) : read(fd, sink, sizeof(sink));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;
		if (buf)
			n += (size_t)got;
	}
	close(fd);
	bpf_link__destroy(link);
	if (err || !buf) {
		free(data);
		return err;
	}
	*buf = data;
	*len = n;
	return 0;
}

static int malformed(uint32_t size, const char *what)
{
	log__error("malformed open-wait record: %u bytes, not %s", size, what);
	return -EINVAL;
}

/*
 * The next record the open-wait iterator wrote in buf, after its struct
 * offcpu_open_header, at *off: 1 and its *size bytes before the new *off,
 * 0 at the end, or -EINVAL (said).
 */
static int next_open_record(const char *buf, size_t len, size_t *off, uint32_t *size)
{
	struct offcpu_open_header h;

	if (len - *off < sizeof(h))
		return 0;
	memcpy(&h, buf + *off, sizeof(h));
	*off += sizeof(h);
	if (h.size > len - *off || h.size < sizeof(__u32) || h.size > OPEN_RECORD_MAX) {
		log__error("malformed open-wait record: %u bytes of %zu", h.size, len - *off);
		return -EINVAL;
	}
	*size = h.size;
	*off += h.size;
	return 1;
}

/*
 * The Python frames of the open wait that follows, to fn as the ring's
 * come; counted here as the BPF side counts the ring's, since a record
 * the seq file had no room for is written again by the next read.
 */
static int pass_open_python(const void *data, uint32_t size, tracer_record_fn fn, void *ctx,
			    uint64_t *counters)
{
	const struct offcpu_python_record *py = data;

	if (size < OFFCPU_PYTHON_HEADER_SIZE || size > sizeof(*py) ||
	    size < OFFCPU_PYTHON_HEADER_SIZE + py->frames * sizeof(py->frame[0]))
		return malformed(size, "a wait's Python frames");
	if (py->cut_short)
		counters[OFFCPU_CNT_PY_CUT_SHORT]++;
	return fn(ctx, data, size);
}

/*
 * Whether the filter keeps an open or recovered wait, its verdict
 * counted as wait_kept() counts one in BPF: a recovered wait ended, and is
 * judged as a switch-in's; an open one is never drawn (offcpu_filter__judge).
 */
static bool kept(const struct tracer *t, const struct offcpu_wait_record *r, uint64_t *counters)
{
	uint64_t start_ns = r->end_ts_ns - r->duration_ns;
	uint32_t v = offcpu_filter__judge(&t->filter, r->duration_ns, r->tid, start_ns, r->flags);
	uint64_t inside_ns =
	    offcpu_inside_ns(t->skel->bss->recording_start_ns, start_ns, r->duration_ns);

	if (v & OFFCPU_VERDICT_BELOW_MIN) {
		counters[OFFCPU_CNT_BELOW_MIN]++;
		counters[OFFCPU_CNT_BELOW_MIN_NS] += inside_ns;
	}
	if (v & OFFCPU_VERDICT_SHORT_SAMPLED) {
		counters[OFFCPU_CNT_SHORT_SAMPLED]++;
		counters[OFFCPU_CNT_SHORT_SAMPLED_NS] += t->filter.min_duration_ns;
	}
	if (v & OFFCPU_VERDICT_ABOVE_MAX) {
		counters[OFFCPU_CNT_ABOVE_MAX]++;
		counters[OFFCPU_CNT_ABOVE_MAX_NS] += inside_ns;
	}
	if (v & OFFCPU_VERDICT_SAMPLED_OUT) {
		counters[OFFCPU_CNT_SAMPLED_OUT]++;
		counters[OFFCPU_CNT_SAMPLED_OUT_NS] += inside_ns;
	}
	return !(v & OFFCPU_VERDICT_DROPPED);
}

/*
 * The open waits the iterator wrote (and the Python frames of some, right
 * before them) to fn; those the filter drops counted (kept()), and at the
 * stop every one: open, or recovered (its switch-in hidden).
 */
static int pass_open_waits(struct tracer *t, const char *buf, size_t len, bool at_stop,
			   tracer_record_fn fn, void *ctx, uint64_t *counters)
{
	struct offcpu_wait_record *r = t->open_record;
	size_t off = 0;
	uint32_t size;
	int err;

	while ((err = next_open_record(buf, len, &off, &size)) > 0) {
		memcpy(r, buf + off - size, size);
		if (r->type == OFFCPU_RECORD_PYTHON) {
			err = pass_open_python(r, size, fn, ctx, counters);
			if (err < 0)
				return err;
			continue;
		}
		if (size < OFFCPU_WAIT_HEADER_SIZE)
			return malformed(size, "a wait");
		if (r->flags & OFFCPU_WAIT_PYTHON_FAILED)
			counters[OFFCPU_CNT_PY_FAIL]++;
		if (at_stop)
			counters[r->flags & OFFCPU_WAIT_RECOVERED ? OFFCPU_CNT_SWITCH_RECOVERED
								  : OFFCPU_CNT_OPEN_AT_STOP]++;
		/* Counted here, not in BPF: a record the seq file had no room for is read twice. */
		if (r->flags & OFFCPU_WAIT_STACKS_RACED)
			counters[OFFCPU_CNT_OPEN_STACKS_RACED]++;
		if (!kept(t, r, counters))
			continue;
		err = fn(ctx, r, size);
		if (err < 0)
			return err;
		counters[OFFCPU_CNT_EMITTED]++;
	}
	return err;
}

/* The open-wait iterator's records, into *buf (*len bytes). */
static int read_open_waits(struct tracer *t, enum offcpu_open_mode mode, char **buf, size_t *len)
{
	int err;

	t->skel->bss->open_mode = mode;
	err = run_iterator(t->open_waits, buf, len);
	if (err)
		report_setup_error("read the threads off CPU", err);
	return err;
}

/*
 * The processes of the open waits in buf, to fn as OFFCPU_RECORD_RUNNING
 * records, once each in a row: a snapshot's collector has seen none of
 * them, and looks for CPython in each.
 */
static int pass_processes(const char *buf, size_t len, tracer_record_fn fn, void *ctx)
{
	struct offcpu_task_record r = { .type = OFFCPU_RECORD_RUNNING };
	struct offcpu_wait_record w;
	size_t off = 0;
	uint32_t size;
	int err;

	while ((err = next_open_record(buf, len, &off, &size)) > 0) {
		if (size < OFFCPU_WAIT_HEADER_SIZE)
			continue;
		memcpy(&w, buf + off - size, OFFCPU_WAIT_HEADER_SIZE);
		if (w.type != OFFCPU_RECORD_WAIT || w.pid == r.pid)
			continue;
		r.pid = w.pid;
		err = fn(ctx, &r, sizeof(r));
		if (err < 0)
			return err;
	}
	return err;
}

int tracer__open_waits(struct tracer *t, tracer_record_fn fn, void *ctx, uint64_t *counters)
{
	uint64_t python_added = t->python_added;
	size_t len = 0;
	char *buf = NULL;
	int err = read_open_waits(t, OFFCPU_OPEN_NOW, &buf, &len);

	if (err)
		return err;
	/*
	 * A snapshot knows its processes from this look only: where it found
	 * CPython, it looks again, with those processes' Python frames walked
	 * (a hung Python service is what a snapshot is for). Only then: the
	 * second look costs the first's and the walks (bench/open_python).
	 */
	if (t->snapshot) {
		err = pass_processes(buf, len, fn, ctx);
		if (!err && t->python_added != python_added) {
			free(buf);
			buf = NULL;
			err = read_open_waits(t, OFFCPU_OPEN_NOW, &buf, &len);
		}
		if (err) {
			free(buf);
			return err;
		}
	}
	err = pass_open_waits(t, buf, len, false, fn, ctx, counters);
	free(buf);
	return err;
}

/*
 * The start's iterator dates the waits open at the start and writes the
 * process of each (a __u32 per thread), handed on as an
 * OFFCPU_RECORD_RUNNING.
 */
static int date_open_waits(struct tracer *t)
{
	struct offcpu_task_record r = { .type = OFFCPU_RECORD_RUNNING };
	size_t len = 0, i;
	char *buf = NULL;
	uint32_t pid;
	int err;

	err = run_iterator(t->skel->progs.offcpu_open_at_start, &buf, &len);
	for (i = 0; !err && i + sizeof(pid) <= len; i += sizeof(pid)) {
		memcpy(&pid, buf + i, sizeof(pid));
		/* Threads of a process mostly come in a row (tid order); a repeat re-reads. */
		if (i && pid == r.pid)
			continue;
		r.pid = pid;
		err = t->fn(t->ctx, &r, sizeof(r));
	}
	free(buf);
	return err < 0 ? err : 0;
}

static void say_clock_errors(struct tracer *t)
{
	static const char *const kinds[OFFCPU_CLOCK_ERR_KINDS] = {
		[OFFCPU_CLOCK_ERR_ARRIVAL] = "switch-in from last_arrival",
		[OFFCPU_CLOCK_ERR_DEPARTURE] = "switch-out from last_arrival + run",
		[OFFCPU_CLOCK_ERR_EXEC_START] = "switch-out from exec_start",
	};
	const struct offcpu_clock_error *e = t->skel->bss->clock_errors;
	int i;

	for (i = 0; i < OFFCPU_CLOCK_ERR_KINDS; i++)
		fprintf(stderr,
			"offcpu: clock error, %s: n %llu mean |e| %llu ns max |e| %llu ns "
			"mean e %lld ns, waits %llu ns, over 1 ms %llu, over 10 ms %llu (worst: "
			"tid %llu)\n",
			kinds[i], (unsigned long long)e[i].n,
			(unsigned long long)(e[i].n ? e[i].sum_abs_ns / e[i].n : 0),
			(unsigned long long)e[i].max_abs_ns,
			(long long)(e[i].n ? (long long)e[i].sum_ns / (long long)e[i].n : 0),
			(unsigned long long)e[i].sum_wait_ns, (unsigned long long)e[i].over_1ms,
			(unsigned long long)e[i].over_10ms, (unsigned long long)e[i].worst_tid);
}

/*
 * The BPF object opened, configured and loaded into t->skel; enriched: the
 * open waits' iterator with their Python frames and labels. Errors said
 * only when not enriched: an enriched load the verifier refuses is tried
 * again plain.
 */
static int open_and_load(struct tracer *t, const struct tracer_opts *opts, bool enriched)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = opts->btf_path);
	int err;

	t->skel = offcpu_bpf__open_opts(&open_opts);
	if (!t->skel) {
		err = -errno;
		report_setup_error("open offcpu's BPF object", err);
		return err;
	}
	err = configure(t->skel, opts, enriched, &t->missing_features);
	if (err)
		return err;
	/* One filter for both sides: the waits the iterator writes are judged here. */
	t->skel->rodata->duration_filter = t->filter;
	err = offcpu_bpf__load(t->skel);
	if (err && !(enriched && (err == -EINVAL || err == -EACCES)))
		report_setup_error("load offcpu's BPF programs", err);
	t->open_waits = enriched ? t->skel->progs.offcpu_open_waits
				 : t->skel->progs.offcpu_open_waits_plain;
	return err;
}

static void say_missing_features(struct tracer *t)
{
	unsigned int i;

	for (i = 0; i < KERNEL_FEATURE_COUNT; i++) {
		if (t->missing_features & (1u << i)) {
			kernel_features__say_missing(i);
			t->features_said++;
		}
	}
}

int tracer__new(const struct tracer_opts *opts, tracer_record_fn fn, void *ctx, struct tracer **out)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t) {
		/* Said as main.c says the setup steps before it. */
		log__error("cannot set up the tracer: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	t->fn = fn;
	t->ctx = ctx;
	t->filter.min_duration_ns = opts->min_duration_ns;
	t->filter.max_duration_ns = opts->max_duration_ns;
	t->filter.sample_rate = opts->sample_rate;
	t->filter.short_sample = opts->short_sample && opts->min_duration_ns;
	/* The coin multiplies min by a 32-bit number: min >> shift must fit 32 bits. */
	while (opts->min_duration_ns >> t->filter.short_shift > UINT32_MAX)
		t->filter.short_shift++;
	t->snapshot = opts->snapshot;
	t->measure_clock = opts->measure_clock;
	if (opts->record_delay_us < 1000000)
		t->record_delay.tv_nsec = (long)opts->record_delay_us * 1000;
	t->open_record = malloc(OPEN_RECORD_MAX);
	if (!t->open_record) {
		free(t);
		log__error("cannot set up the tracer: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	libbpf_set_print(libbpf_log);
	err = open_and_load(t, opts, true);
	if (err == -EINVAL || err == -EACCES) {
		/* The verifier's refusal: the twin without global functions. */
		offcpu_bpf__destroy(t->skel);
		t->skel = NULL;
		err = open_and_load(t, opts, false);
		if (!err) {
			log__warn("this kernel's verifier does not trust a global function's task "
				  "argument (6.8): waits still open come without Python frames, "
				  "rule packs' labels and, begun before tracing, their objects");
			t->features_said++;
		}
	}
	if (err)
		goto fail;
	say_missing_features(t);
	err = fill_filters(t->skel, opts);
	if (err)
		goto fail;
	t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_record, t, NULL);
	if (!t->ring) {
		err = -errno;
		report_setup_error("read offcpu's ring buffer", err);
		goto fail;
	}
	if (opts->before_attach)
		opts->before_attach(opts->before_attach_ctx, t);
	if (opts->snapshot) {
		err = pair_clocks(t->skel);
		if (err)
			goto fail;
		*out = t;
		return 0;
	}
	t->skel->bss->recording_start_ns = clock__monotonic_ns();
	err = attach_core(t->skel);
	err = err ?: attach_sampler(t);
	if (err)
		goto fail;
	/* After the fork program is attached, which makes the slots of threads forked since. */
	if (!t->skel->rodata->alloc_in_scheduler) {
		err = run_iterator(t->skel->progs.offcpu_make_slots, NULL, NULL);
		if (err) {
			report_setup_error("make the threads' slots ahead of the scheduler", err);
			goto fail;
		}
	}
	/* After sched_switch is attached: a thread it has not seen leave is dated now. */
	if (opts->date_open_waits) {
		visit_cpus();
		err = date_open_waits(t);
		if (err) {
			report_setup_error("date the waits open at the start", err);
			goto fail;
		}
	}
	*out = t;
	return 0;
fail:
	tracer__free(t);
	return err;
}

/* Reads records for about budget_ns at most: 0, or the callback's error. */
static int consume(struct tracer *t, uint64_t budget_ns)
{
	int n;

	t->batch_cut = false;
	t->batch_end_ns = clock__monotonic_ns() + budget_ns;
	n = ring_buffer__consume(t->ring);
	return n < 0 && !t->batch_cut ? n : 0;
}

int tracer__poll(struct tracer *t, int timeout_ms)
{
	struct epoll_event event;

	/*
	 * Records left by the last batch are read at once. Otherwise wait;
	 * records submitted without a wake-up leave epoll silent, so the wait
	 * may end on its timeout with records there: read them either way.
	 */
	if (!t->batch_cut && epoll_wait(ring_buffer__epoll_fd(t->ring), &event, 1, timeout_ms) < 0)
		return -errno;
	return consume(t, BATCH_NS);
}

/* What is left in the ring at the stop: read for STOP_DRAIN_NS, the rest counted. */
static int drain(struct tracer *t, uint64_t *counters)
{
	int n;

	n = consume(t, STOP_DRAIN_NS);
	if (n || !t->batch_cut)
		return n;
	/* Counting is 5 ns a record here: a full ring (32,000 waits) took 0.15 ms. */
	t->counting = true;
	n = ring_buffer__consume(t->ring);
	t->counting = false;
	counters[OFFCPU_CNT_RINGBUF_UNREAD] += t->unread;
	counters[OFFCPU_CNT_RINGBUF_UNREAD_NS] += t->unread_ns;
	counters[OFFCPU_CNT_ONCPU_UNREAD] += t->unread_samples;
	counters[OFFCPU_CNT_ONCPU_UNREAD_NS] += t->unread_samples_ns;
	return n < 0 ? n : 0;
}

int tracer__stop(struct tracer *t, uint64_t *counters)
{
	struct timespec settle = { 0, SETTLE_NS };
	size_t open_len = 0;
	char *open_buf = NULL;
	int err;

	counters[OFFCPU_CNT_FEATURES_MISSING] = t->features_said;
	bpf_link__destroy(t->skel->links.offcpu_sched_switch);
	t->skel->links.offcpu_sched_switch = NULL;
	/* Samples after the switches' last one would be outside the recording. */
	detach_sampler(t);
	/* The end of the waits still open: the last switch sched_switch could see. */
	t->skel->bss->open_stop_ts_ns = clock__monotonic_ns();
	/*
	 * The open waits are read at once, while their threads still wait
	 * (a wait that ends before its thread is visited has lost its stacks:
	 * read after the settling below, a thread sleeping 20 ms in a loop
	 * always had), and handed on after the ring's records, which come
	 * first for each thread.
	 */
	if (!t->snapshot) {
		err = read_open_waits(t, OFFCPU_OPEN_AT_STOP, &open_buf, &open_len);
		if (err)
			return err;
	}
	nanosleep(&settle, NULL);
	/*
	 * No program writes records from here on, so the ring holds all there
	 * is (but for one still running when detached, preempted in the
	 * middle: its record would come after the count). Waits still parked
	 * stay counted in user_stack_pending.
	 */
	offcpu_bpf__detach(t->skel);
	err = drain(t, counters);
	if (t->measure_clock)
		say_clock_errors(t);
	if (!err && open_buf)
		err = pass_open_waits(t, open_buf, open_len, true, t->fn, t->ctx, counters);
	free(open_buf);
	return err;
}

int tracer__python_add(struct tracer *t, uint32_t pid, const struct offcpu_python_layout *l)
{
	int err = bpf_map__update_elem(t->skel->maps.python_procs, &pid, sizeof(pid), l, sizeof(*l),
				       BPF_ANY);

	if (!err)
		t->python_added++;
	return err;
}

int tracer__set_reads(struct tracer *t, uint32_t pid, const struct offcpu_reads *reads)
{
	int fd = bpf_map__fd(t->skel->maps.reads_by_pid);
	int err;

	if (!reads)
		err = bpf_map_delete_elem(fd, &pid);
	else
		err = bpf_map_update_elem(fd, &pid, reads, BPF_ANY);
	return err ? -errno : 0;
}

uint64_t tracer__features_missing(const struct tracer *t)
{
	return t->features_said;
}

uint64_t tracer__start_ns(const struct tracer *t)
{
	return t->skel->bss->recording_start_ns;
}

int tracer__counters(struct tracer *t, uint64_t *out)
{
	int nr_cpus = libbpf_num_possible_cpus();
	struct offcpu_counters *per_cpu;
	__u32 zero = 0;
	int cpu, i, err;

	if (nr_cpus <= 0)
		return nr_cpus ?: -EINVAL;
	per_cpu = calloc(nr_cpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(t->skel->maps.counters, &zero, sizeof(zero), per_cpu,
				   nr_cpus * sizeof(*per_cpu), 0);
	if (!err) {
		memset(out, 0, OFFCPU_CNT_BPF_MAX * sizeof(*out));
		/* Unsigned sums: parts that went below zero wrap back. */
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			for (i = 0; i < OFFCPU_CNT_BPF_MAX; i++)
				out[i] += per_cpu[cpu].value[i];
		}
	}
	free(per_cpu);
	return err;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	detach_sampler(t);
	free(t->sample_links);
	ring_buffer__free(t->ring);
	offcpu_bpf__destroy(t->skel);
	free(t->open_record);
	free(t);
}

/* The open_gauge iterator read through, one record at a time. */
int tracer__open_gauge(struct tracer *t, tracer_open_wait_fn fn, void *ctx)
{
	struct offcpu_open_wait w[64];
	ssize_t n, i;
	int fd, err = 0;

	if (!t->skel->links.offcpu_open_gauge)
		return -ENOENT;
	fd = bpf_iter_create(bpf_link__fd(t->skel->links.offcpu_open_gauge));
	if (fd < 0)
		return -errno;
	while ((n = read(fd, w, sizeof(w))) > 0) {
		for (i = 0; i < n / (ssize_t)sizeof(w[0]); i++)
			fn(ctx, &w[i]);
	}
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}
