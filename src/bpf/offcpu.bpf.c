// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu's kernel side.
 *
 * sched_switch is the only hook a wait needs: the switch-out of a thread
 * records when and in which state it left (a store into its task local
 * storage, nothing else, since most waits end below the threshold); its next
 * switch-in computes the exact duration, applies the duration bounds and the
 * sampling, and only for the waits that pass takes the kernel stack of the
 * blocked thread with bpf_get_task_stack(next): it has not run since it
 * blocked, so that is the stack at block time.
 *
 * The user stack can only be read by the thread itself. A thread with rseq
 * registered (glibc 2.35 and later registers every thread) passes the
 * rseq_update tracepoint on its way back to user space after every switch:
 * a wait that passed the filters is parked in its task local storage and
 * sent from there, before any user code has run since the block, with the
 * user stack: the kernel's frame-pointer walk (--call-graph fp), or the
 * user registers and a copy of the top of the user stack for user space to
 * unwind with CFI (dwarf). So in every mode, -p -t -c --cgroup included,
 * only the waits that passed -m -M --sample-rate pay for it; threads
 * nobody selected pay one task storage lookup per return to user space.
 * Threads without rseq (Go, musl; the alternative, sys_exit, would cost
 * every system call on the machine) have their user stack walked by frame
 * pointers at their switch-out instead, by themselves, counted
 * (user_stack_at_switch_out).
 *
 * The in-flight start lives with the task, not in a per-CPU map: a thread
 * that blocks on one CPU and wakes on another finds its own start.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "offcpu.h"
#include "bpf/states.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Set by user space between open and load: tracer__new sets every one. The
 * defaults of -m and --max-entries are options.h's (OPTIONS_DEFAULT_*): 0
 * here, not a third copy.
 */
const volatile __u64 min_duration_ns;
const volatile __u64 max_duration_ns = ~0ULL;
const volatile __u32 sample_rate = 1;
/*
 * --short sample: a wait below -m is kept with probability
 * duration/min, as Go's block profile keeps an event shorter than its
 * rate, and user space weighs it min: totals stay unbiased. The coin
 * compares without a division: keep when r * (min >> shift) < (d >> shift)
 * << 32 for a random 32-bit r; short_shift brings min below 2^32 (-m of
 * 4.3 s and more), so the product cannot overflow.
 */
const volatile bool short_sample;
const volatile __u32 short_shift;
/*
 * Coverage: -- COMMAND without other filters (with one, a
 * thread's switches are not all timed): its threads are timed from their
 * fork and sent at their exit.
 */
const volatile bool account_threads;
const volatile __u32 state_mask; /* bit per enum offcpu_state; 0: all */
const volatile bool filter_pids;
const volatile bool filter_tids;
const volatile bool filter_comms;
const volatile bool filter_cgroup;
const volatile bool user_threads_only;
const volatile bool kernel_threads_only;
const volatile bool follow_forks;
const volatile bool has_prev_state_arg = true;
const volatile bool want_kernel_stack = true;
const volatile bool want_user_stack = true;
const volatile __u32 stack_depth = OFFCPU_MAX_STACK_DEPTH;
/* offcpu itself: its own polling is not what anyone is profiling. */
const volatile __u32 self_tgid;
/* Park waits for rseq_update: this kernel has it, and no -p -t -c --cgroup. */
const volatile bool defer_user_stacks;
/*
 * --call-graph dwarf,SIZE: bytes of user stack rseq_update copies; 0: fp,
 * the kernel's frame-pointer walk (bpf_get_stack).
 */
const volatile __u32 stack_copy_bytes;
/* fp mode: a few words at the user SP too, for the leaf's caller (OFFCPU_USTACK_TAKEN_LEAF). */
const volatile bool fix_leaf;
/* Any of -p -t -c --cgroup -u -k --state. */
const volatile bool any_filter;

/* --max-entries: threads that can hold an in-flight slot at once. */
const volatile __u64 max_slots;
/*
 * Whether programs inside the scheduler (sched_switch holds the run
 * queue's lock, sched_waking the wakee's pi_lock, interrupts off) may
 * create task storage. Creating it allocates, and on PREEMPT_RT an
 * allocation's locks are sleeping locks: one found held there schedules
 * inside __schedule(), and the CPU spins on its own run queue's lock with
 * interrupts off, for good (a Debian 6.1 rt guest, about one boot in four:
 * the crng's lock, rt_spin_lock() from crng_make_state()). There the
 * slots are made ahead (make_slots()).
 */
const volatile bool alloc_in_scheduler = true;

/* The flags of a task storage get inside the scheduler: see alloc_in_scheduler. */
static __always_inline __u64 scheduler_get_flags(void)
{
	return alloc_in_scheduler ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0;
}

/* --wakers: the waker's stacks at wakeups of waits already past -m. */
const volatile bool want_waker_stacks;

/* --cgroup's ID (its inode), for the iterators, which do not run as the task. */
const volatile __u64 cgroup_id;
/* OFFCPU_TEST_MEASURE_CLOCK: measure the clock conversion (clock_errors). */
const volatile bool measure_clock;

/* task_struct::flags bit of kernel threads. */
#define PF_KTHREAD 0x00200000
/* Set by exit_signals(), early in do_exit(), before sched_process_exit. */
#define PF_EXITING 0x00000004

/* A thread's in-flight slot, in its task local storage; start_ts_ns 0: none. */
struct wait_start {
	__u64 start_ts_ns;
	__u32 prev_state;
	__u32 preempt;
	__u32 flags; /* enum offcpu_wait_flags: OPEN_BEFORE when dated at start */
	__u32 reserved;
	__u64 switch_in_ts_ns; /* measure_clock only: its last traced switch-in */
	/* The first wakeup of the wait in flight (wakeup_start()). */
	__u64 run_delay_ns; /* the thread's sched_info.run_delay when it left */
	__u32 waker_pid;
	__u32 waker_tid;
	char waker_comm[OFFCPU_COMM_LEN];
	__u8 waker;	  /* enum offcpu_waker: NONE until the first wakeup */
	__u8 waker_stack; /* waker_stacks holds the stacks of that wakeup */
	__u8 waker_early; /* enum offcpu_waker of one before the switch-out (woken_early()) */
	__u32 waker_cpu;  /* where that wakeup ran: an interrupt's CPU */
	/*
	 * Coverage: the thread's life as these switches time it,
	 * sent at its exit under -- COMMAND (struct offcpu_thread_record).
	 * Adds on a slot already loaded, next to the clock already read.
	 */
	__u64 on_cpu_since; /* its last switch-in; 0: not seen */
	__u64 run_ns;
	__u64 dropped_ns;
	__u64 startup_ns;
	__u64 tracked_ns;
	__u64 unseen_ns; /* from a start whose switch-in never came to what showed it running */
	__u32 first_run; /* created at its fork: the next switch-in is its first */
	__u32 made_ahead; /* by make_slots(): its first switch-out is still to come */
};

/*
 * The in-flight table: a slot in each selected thread's task local storage,
 * found from the task itself on any CPU. Measured here with bpf_stats, a
 * task storage get adds 20 ns to a program, a hash lookup alone 38 ns (and
 * a hash table needs an update and a delete besides). A thread keeps its
 * slot until it exits; slots_in_use bounds their number.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wait_start);
} inflight SEC(".maps");

__u64 slots_in_use;

/* Filled by user space before attaching; -- COMMAND's forks are added here. */
__u64 pid_bits[OFFCPU_ID_BITMAP_WORDS];
__u64 tid_bits[OFFCPU_ID_BITMAP_WORDS];

struct comm_key {
	char name[OFFCPU_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct comm_key);
	__type(value, __u8);
} comms SEC(".maps");

/*
 * --cgroup: slot 0 holds the cgroup directory user space opened. The
 * kernel answers from the cgroup itself, so neither the path nor a cgroup
 * namespace around offcpu matters.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} cgroup SEC(".maps");

/* A completed wait waiting for its thread to return to user space. */
struct pending_wait {
	struct offcpu_wait_record record;
	__u64 user_ip; /* user registers when it was parked */
	__u64 user_sp;
	__u32 armed;
	__u32 flushing; /* a preemptible program is sending the record */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending_wait);
} pending SEC(".maps");

/* User stacks of threads without rseq, taken at their switch-out. */
struct switch_out_stack {
	__s32 frames; /* < 0: it could not be taken */
	__u64 ips[OFFCPU_MAX_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct switch_out_stack);
} switch_out_stacks SEC(".maps");

/*
 * The kernel leaf. bpf_get_task_stack() of a task that is
 * not running walks it with stack_trace_save_tsk(), which drops every return
 * address in .sched.text (kernel/stacktrace.c,
 * stack_trace_consume_entry_nosched): do_nanosleep,
 * schedule_hrtimeout_range_clock, schedule_timeout, mutex_lock... are
 * __sched, so the caller that decided to sleep was lost. They are found
 * again, for the waits that passed only, in the blocked task's own stack
 * memory: see kernel_leaf(). Walking prev's stack at every selected
 * switch-out instead (bpf_get_stack, 16 frames; prev is current, so nothing
 * is dropped) cost 1890 ns a switch against 305 without it (bench/run, -m 1ms).
 */
#define LEAF_WORDS 128	       /* of the blocked task's stack read from its saved SP */
#define LEAF_MAX_FRAMES 8      /* __sched frames put back, __schedule included */
#define LEAF_FUNCTION_MAX 8192 /* bytes from a function's start to a return address in it */
/*
 * x86-64's THREAD_SIZE (PAGE_SIZE << THREAD_SIZE_ORDER, 2 without KASAN):
 * no BTF has it. A larger stack only means a shorter read than could be.
 */
#define KERNEL_STACK_SIZE 16384
#define X86_CALL_REL32 0xe8
extern const void __sched_text_start __ksym __weak;
extern const void __sched_text_end __ksym __weak;
/* Test and bench override (OFFCPU_TEST_NO_KERNEL_LEAF): bpf_get_task_stack alone. */
const volatile bool take_kernel_leaf = true;

struct leaf_scan {
	__u64 words[LEAF_WORDS];
	__u64 frames[LEAF_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leaf_scan);
} leaf_scans SEC(".maps");

/*
 * The open-wait iterator's own: it is sleepable, so preemptible, and the
 * sched_switch program that runs on its CPU meanwhile took the same
 * per-CPU leaf_scans for the thread it switched in, rewriting the words
 * the iterator was scanning. The leaf went missing for about one
 * nanosleep wait in twelve of test_open_race's snapshots, stacks intact
 * otherwise (hrtimer_nanosleep first, do_nanosleep not put back).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leaf_scan);
} open_leaf_scans SEC(".maps");

/* Too large for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_wait_record);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_counters);
} counters SEC(".maps");

/*
 * A dwarf-mode record is built here before it is output with the length
 * copied: the wait's header and kernel frames, the user registers, the
 * stack. The copy's offsets are masks, which the verifier bounds, hence a
 * page of slack. Too large for a per-CPU array's 32 KiB values: one entry
 * per CPU (tracer__new sizes it), used by rseq_update alone, which the
 * kernel never runs twice at once on one CPU.
 */
#define COPY_PAGE 4096
#define COPY_USER_OFF (OFFCPU_WAIT_HEADER_SIZE + 2 * OFFCPU_MAX_STACK_DEPTH * 8)
#define COPY_DATA_OFF (sizeof(struct offcpu_user_copy))

struct copy_buf {
	__u8 bytes[COPY_USER_OFF + sizeof(struct offcpu_user_copy) + OFFCPU_MAX_STACK_COPY +
		   COPY_PAGE];
};

_Static_assert((OFFCPU_MAX_STACK_COPY & (OFFCPU_MAX_STACK_COPY - 1)) == 0,
	       "OFFCPU_MAX_STACK_COPY is used as a mask: it must be a power of 2");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} copy_bufs SEC(".maps");

/*
 * --wakers with --call-graph dwarf: a waker's record with the copy of its
 * user stack, built in sched_waking and sent from there; one per CPU
 * (tracer__new sizes it), for sched_waking alone, which runs with
 * interrupts off and never twice at once on one CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} waker_copy_bufs SEC(".maps");

_Static_assert(OFFCPU_WAKER_HEADER_SIZE <= OFFCPU_WAIT_HEADER_SIZE,
	       "a waker record's copy must fit where a wait record's does");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

/* task_struct::rseq as a pointer to the registered area (4.18 and later). */
struct task_struct___rseq_ptr {
	void *rseq;
} __attribute__((preserve_access_index));

/* Before 5.14 (commit 2f064a59a11f, "sched: Change task_struct::state"). */
struct task_struct___pre_5_14 {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline bool has_rseq(struct task_struct *t)
{
	struct task_struct___rseq_ptr *r = (void *)t;

	return bpf_core_field_exists(r->rseq) && r->rseq;
}

static __always_inline struct offcpu_counters *counters_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

/*
 * The counters are per CPU. Which programs touch a CPU's slot:
 *
 *   sched_switch         every counter
 *   rseq_update          EMITTED, RINGBUF_FULL(_NS), USTACK_FAIL, USTACK_PENDING
 *   sched_process_exit   EMITTED, RINGBUF_FULL(_NS), USTACK_LOST, USTACK_PENDING,
 *                        SWITCH_UNSEEN
 *   sched_process_exec   EMITTED, RINGBUF_FULL(_NS), USTACK_LOST, USTACK_PENDING
 *   sched_process_fork   RINGBUF_FULL, TABLE_FULL
 *
 * sched_switch runs in __schedule() with the runqueue lock held and
 * interrupts off, and a tracepoint program does not nest with itself on one
 * CPU: nothing else runs on its CPU in the middle of its increment, which is
 * a plain load and store. The other four run preemptible: sched_switch, or
 * any of them for another thread, can run on the same CPU between a load and
 * its store, so they add atomically, in one instruction that sched_switch
 * cannot split. The caller says which it is; a constant at every call site,
 * so the choice costs nothing.
 */
enum counting {
	IN_SWITCH,
	PREEMPTIBLE,
};

static __always_inline void add(struct offcpu_counters *c, int idx, __u64 n, enum counting how)
{
	if (!c || idx < 0 || idx >= OFFCPU_CNT_BPF_MAX)
		return;
	if (how == IN_SWITCH)
		c->value[idx] += n;
	else
		__sync_fetch_and_add(&c->value[idx], n);
}

static __always_inline void count(struct offcpu_counters *c, int idx, enum counting how)
{
	add(c, idx, 1, how);
}

/*
 * Task pointers of tp_btf programs are trusted: plain loads (with CO-RE
 * relocations from vmlinux.h) instead of bpf_probe_read_kernel calls.
 */
static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___pre_5_14 *)t)->state;
}

/*
 * The -p -t -c --cgroup -u -k filters; each costs nothing when unset. t is
 * the thread switching out, which is still current: that is the only task
 * bpf_current_task_under_cgroup() answers for, and it does so on every
 * kernel offcpu supports, whatever cgroup namespace offcpu runs in. Reading
 * cgroup::ancestors[] instead needs 6.1 (older verifiers refuse the
 * program) and the cgroup's level, which a path in a namespace hides.
 */
/*
 * Whether t is in --cgroup, for the iterators, which run as
 * offcpu, not as t: its default-hierarchy cgroup or one of its parents
 * (the css parent chain; at most 32 levels deep here) has cgroup_id.
 */
static __always_inline bool task_in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	int i;

	for (i = 0; i < 32 && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == cgroup_id)
			return true;
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

/* in_switch: t is current, switching out; otherwise an iterator looks at it. */
static __always_inline bool task_selected(struct task_struct *t, bool in_switch)
{
	if (t->tgid == self_tgid)
		return false;
	if (user_threads_only || kernel_threads_only) {
		bool kthread = t->flags & PF_KTHREAD;

		if (user_threads_only && kthread)
			return false;
		if (kernel_threads_only && !kthread)
			return false;
	}
	if (filter_pids && !(pid_bits[OFFCPU_ID_WORD(t->tgid)] & OFFCPU_ID_BIT(t->tgid)))
		return false;
	if (filter_tids && !(tid_bits[OFFCPU_ID_WORD(t->pid)] & OFFCPU_ID_BIT(t->pid)))
		return false;
	if (filter_comms) {
		struct comm_key key = {};

		bpf_probe_read_kernel_str(key.name, sizeof(key.name), t->comm);
		if (!bpf_map_lookup_elem(&comms, &key))
			return false;
	}
	if (filter_cgroup && in_switch && bpf_current_task_under_cgroup(&cgroup, 0) != 1)
		return false;
	if (filter_cgroup && !in_switch && !task_in_cgroup(t))
		return false;
	return true;
}

/*
 * Waking the reader for every record made it switch 20,000 times a second
 * at 20,000 waits a second (a third of its CPU time, measured with perf):
 * wake it once this much is pending; its poll timeout bounds the latency.
 */
#define WAKEUP_BYTES (64 << 10)

/*
 * Processes that exec'd and have not emitted a wait since. Their first wait
 * wakes the reader at once: by then the dynamic loader has mapped the
 * libraries, which the snapshot taken at exec lacks, and a short-lived
 * process may be gone by the next poll (seen: a 50 ms command lost its
 * libc frames one run in three).
 */
__u64 young_bits[OFFCPU_ID_BITMAP_WORDS];

/*
 * Outputs size bytes at data, a wait record of pid's lasting duration_ns
 * (with a stack copy, or not), waking the reader as WAKEUP_BYTES and
 * young_bits say; counted emitted, or lost with its duration.
 */
static __always_inline void output_wait(struct offcpu_counters *c, void *data, __u64 size,
					__u32 pid, __u64 duration_ns, enum counting how)
{
	__u64 bit = OFFCPU_ID_BIT(pid), flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKEUP_BYTES ||
	    ((young_bits[OFFCPU_ID_WORD(pid)] & bit) &&
	     (__sync_fetch_and_and(&young_bits[OFFCPU_ID_WORD(pid)], ~bit) & bit)))
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, data, size, flags)) {
		count(c, OFFCPU_CNT_RINGBUF_FULL, how);
		add(c, OFFCPU_CNT_RINGBUF_FULL_NS, duration_ns, how);
	} else
		count(c, OFFCPU_CNT_EMITTED, how);
}

static __always_inline void submit(struct offcpu_counters *c, struct offcpu_wait_record *r,
				   enum counting how)
{
	__u64 frames = (__u64)r->kernel_frames + r->user_frames;

	if (frames > 2 * OFFCPU_MAX_STACK_DEPTH)
		frames = 2 * OFFCPU_MAX_STACK_DEPTH;
	output_wait(c, r, OFFCPU_WAIT_HEADER_SIZE + frames * sizeof(__u64), r->pid, r->duration_ns,
		    how);
}

/*
 * The pending-wait protocol. A thread whose user stack rseq_update takes
 * has its completed wait parked in its task local storage:
 *
 *   park_slot()    at its switch-in, claims the thread's pending slot; a
 *                  wait still parked there never reached user space and
 *                  is sent first, without a user stack (send_parked());
 *   fill_record()  writes the new wait into the slot;
 *   park()         arms it: the record is now rseq_update's to send, with
 *                  the user stack (send_with_user_stack()), or the exit or
 *                  exec program's, without (send_parked()).
 *
 * rseq_update and the exit and exec programs run with preemption on. If
 * their own thread is preempted while they send its parked record, its
 * next switch-in must not rewrite that record under them: park_slot()
 * sees the flag set_flushing() raised and the wait goes without parking.
 * The thread stays on this CPU while a program runs, and sched_switch runs
 * with interrupts off, so program order is all it takes; the barrier keeps
 * the compiler to it.
 */
static __always_inline void set_flushing(struct pending_wait *p, __u32 on)
{
	asm volatile("" ::: "memory");
	*(volatile __u32 *)&p->flushing = on;
	asm volatile("" ::: "memory");
}

static __always_inline void park(struct offcpu_counters *c, struct pending_wait *p)
{
	p->armed = 1;
	count(c, OFFCPU_CNT_USTACK_PENDING, IN_SWITCH);
}

static __always_inline void disarm(struct offcpu_counters *c, struct pending_wait *p,
				   enum counting how)
{
	p->armed = 0;
	/* Per-CPU parts may wrap; their sum is the number still parked. */
	add(c, OFFCPU_CNT_USTACK_PENDING, -1, how);
}

/* Sends a parked wait without a user stack of its own; why says why. */
static __always_inline void send_parked(struct offcpu_counters *c, struct pending_wait *p,
					enum offcpu_user_stack why, enum counting how)
{
	if (!p->armed)
		return;
	disarm(c, p, how);
	p->record.user_frames = 0;
	p->record.user_stack = why;
	if (why == OFFCPU_USTACK_NONE)
		count(c, OFFCPU_CNT_USTACK_LOST, how);
	submit(c, &p->record, how);
}

/*
 * The user registers in DWARF order. Entered from user space by a system
 * call or an interrupt, the kernel saved all of them in pt_regs.
 */
static __always_inline void task_user_regs(struct task_struct *t, __u64 *out)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct pt_regs r;

	if (bpf_probe_read_kernel(&r, sizeof(r), regs))
		__builtin_memset(&r, 0, sizeof(r));
	out[0] = r.ax;
	out[1] = r.dx;
	out[2] = r.cx;
	out[3] = r.bx;
	out[4] = r.si;
	out[5] = r.di;
	out[6] = r.bp;
	out[7] = r.sp;
	out[8] = r.r8;
	out[9] = r.r9;
	out[10] = r.r10;
	out[11] = r.r11;
	out[12] = r.r12;
	out[13] = r.r13;
	out[14] = r.r14;
	out[15] = r.r15;
	out[16] = r.ip;
}

static __always_inline void user_regs(__u64 *out)
{
	task_user_regs(bpf_get_current_task_btf(), out);
}

/*
 * The current thread's user registers and up to size bytes of its user
 * stack from the SP, as a struct offcpu_user_copy at b->bytes[user_off],
 * page by page: the first page that cannot be read (the top of the stack's
 * mapping, a page never touched) ends the copy, which is never failed
 * whole. Returns the bytes of stack copied.
 */
static __always_inline __u64 copy_user_stack(struct copy_buf *b, __u32 user_off, __u64 size)
{
	struct offcpu_user_copy *u = (void *)&b->bytes[user_off];
	__u64 len = 0, chunk, sp;
	int i;

	user_regs(u->regs);
	sp = u->regs[7];
	chunk = COPY_PAGE - (sp & (COPY_PAGE - 1));
	for (i = 0; i < OFFCPU_MAX_STACK_COPY / COPY_PAGE + 1; i++) {
		if (len + chunk > size)
			chunk = size - len;
		if (chunk == 0 || chunk > COPY_PAGE)
			break;
		if (bpf_probe_read_user(
			&b->bytes[user_off + COPY_DATA_OFF + (len & (OFFCPU_MAX_STACK_COPY - 1))],
			chunk, (void *)(sp + len)))
			break;
		len += chunk;
		chunk = COPY_PAGE;
	}
	u->size = len;
	return len;
}

/*
 * Sends the parked wait with the user registers and up to stack_copy_bytes
 * of user stack from the SP (copy_user_stack()). Only as long as what was
 * copied.
 */
static __always_inline void send_with_stack_copy(struct offcpu_counters *c, struct pending_wait *p,
						 __u32 frames, __u64 size,
						 enum offcpu_user_stack kind)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct copy_buf *b;
	__u64 len, total;
	__u32 user_off;

	b = bpf_map_lookup_elem(&copy_bufs, &cpu);
	/* At most 2 * OFFCPU_MAX_STACK_DEPTH: a kernel and a user stack. */
	frames &= 2 * OFFCPU_MAX_STACK_DEPTH + 1;
	if (frames > 2 * OFFCPU_MAX_STACK_DEPTH)
		frames = 2 * OFFCPU_MAX_STACK_DEPTH;
	user_off = OFFCPU_WAIT_HEADER_SIZE + frames * 8;
	if (!b || size > OFFCPU_MAX_STACK_COPY ||
	    bpf_probe_read_kernel(b->bytes, user_off, &p->record)) {
		if (kind == OFFCPU_USTACK_COPIED) {
			count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
			p->record.user_frames = 0;
		}
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	((struct offcpu_wait_record *)b->bytes)->user_stack = kind;
	len = copy_user_stack(b, user_off, size);
	if (!len && kind == OFFCPU_USTACK_COPIED)
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
	total = user_off + COPY_DATA_OFF + len;
	/* Never true (the buffer has a page of slack), but the verifier needs the bound. */
	if (total > sizeof(*b)) {
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	output_wait(c, b, total, p->record.pid, p->record.duration_ns, PREEMPTIBLE);
}

/*
 * A global function's argument the verifier takes as a trusted pointer
 * (kernel 6.8); libbpf 1.3's bpf_helpers.h names it so, Debian 12's 1.1
 * does not.
 */
#ifndef __arg_trusted
#define __arg_trusted __attribute__((btf_decl_tag("arg:trusted")))
#endif

/*
 * len bytes at addr in the memory of task, or of the current thread when
 * task is NULL (a constant there: the sleepable helper is compiled out of
 * the tracepoints, which may not call it). The open-wait iterator reads a
 * blocked thread that is not current, and may fault its pages in.
 */
static __always_inline long read_user(void *dst, __u32 len, __u64 addr, struct task_struct *task)
{
	if (task)
		return bpf_copy_from_user_task(dst, len, (void *)addr, task, 0);
	return bpf_probe_read_user(dst, len, (void *)addr);
}

#include "bpf/python.bpf.h"
/*
 * The processes a rule pack's `read` lines matched, each with
 * what to read (user space resolved the symbols in the process's own ELF
 * file and load base). Looked up only for a wait about to be sent from
 * rseq_update, in the blocked thread's own context: PostgreSQL clears its
 * wait event only after returning to user space, so it still holds the
 * event it blocked under. Other processes pay nothing more per switch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* tracer.c sizes it: 65,536 with a pack's reads */
	__type(key, __u32);
	__type(value, struct offcpu_reads);
} reads_by_pid SEC(".maps");

/*
 * A C string at addr in task's memory, as bpf_probe_read_user_str() reads
 * the current thread's (there is no such helper for another task): its
 * OFFCPU_READ_STR_LEN bytes, or, when they run into a page that cannot be
 * read, those up to the end of addr's page. Whether it holds a character.
 */
static __always_inline bool read_task_str(char *dst, __u64 addr, struct task_struct *task)
{
	__u32 first;

	if (bpf_copy_from_user_task(dst, OFFCPU_READ_STR_LEN, (void *)addr, task, 0)) {
		first = COPY_PAGE - (addr & (COPY_PAGE - 1));
		if (first >= OFFCPU_READ_STR_LEN ||
		    bpf_copy_from_user_task(dst, first, (void *)addr, task, 0))
			return false;
		dst[first] = '\0';
	}
	dst[OFFCPU_READ_STR_LEN - 1] = '\0';
	return dst[0] != '\0';
}

/* In task's memory (read_user()); NULL: the current thread's. */
static __always_inline void read_one(struct offcpu_wait_record *r, const struct offcpu_reads *spec,
				     int i, struct task_struct *task)
{
	__u64 addr = spec->addr[i], value = 0;
	__u32 width = spec->width[i];
	bool read;
	long err;

	if (!width || width > 8)
		return;
	if (spec->deref[i] && (read_user(&addr, sizeof(addr), addr, task) || !addr))
		return;
	if (spec->string[i]) {
		/* Only with --read-data: the first bytes of a C string (a statement). */
		if (task)
			read = read_task_str(r->read_str, addr, task);
		else
			read = bpf_probe_read_user_str(r->read_str, sizeof(r->read_str),
						       (void *)addr) > 1;
		if (read)
			r->read_mask |= 1u << i;
		return;
	}
	/* Little-endian: the low bytes of value are the width-byte integer. */
	switch (width) {
	case 1:
		err = read_user(&value, 1, addr, task);
		break;
	case 2:
		err = read_user(&value, 2, addr, task);
		break;
	case 4:
		err = read_user(&value, 4, addr, task);
		break;
	default:
		err = read_user(&value, 8, addr, task);
		break;
	}
	if (err)
		return;
	r->read_values[i] = value;
	r->read_mask |= 1u << i;
}

/*
 * Process tgid's declared values, into the wait's record, read in task's
 * memory (NULL: the current thread's, which is tgid's).
 */
static __always_inline void take_reads_of(struct offcpu_wait_record *r, __u32 tgid,
					  struct task_struct *task)
{
	const struct offcpu_reads *spec = bpf_map_lookup_elem(&reads_by_pid, &tgid);
	int i;

	if (!spec)
		return;
	for (i = 0; i < OFFCPU_MAX_READS; i++)
		read_one(r, spec, i, task);
}

static __always_inline void take_reads(struct offcpu_wait_record *r)
{
	take_reads_of(r, bpf_get_current_pid_tgid() >> 32, NULL);
}

/*
 * The open-wait iterator's: t's process's values, read in t's memory. A
 * global function, verified apart: the iterator's own stack, with the
 * Python walk's beside it, would pass the verifier's 512 bytes.
 */
__noinline int take_open_reads(struct task_struct *t __arg_trusted, struct offcpu_wait_record *r)
{
	if (r)
		take_reads_of(r, t->tgid, t);
	return 0;
}

/* A fork without exec (a PostgreSQL backend) runs the same image: same addresses. */
static __always_inline void inherit_reads(__u32 parent_tgid, __u32 child_tgid)
{
	const struct offcpu_reads *spec = bpf_map_lookup_elem(&reads_by_pid, &parent_tgid);

	if (spec)
		bpf_map_update_elem(&reads_by_pid, &child_tgid, spec, BPF_ANY);
}

/* End of the rule packs' reads. */

/* The current thread is about to run user code: its stack is as it blocked. */
static __always_inline void send_with_user_stack(void *ctx, struct offcpu_counters *c,
						 struct pending_wait *p)
{
	__u32 kernel_frames = p->record.kernel_frames;
	long n;

	disarm(c, p, PREEMPTIBLE);
	python_send_frames(c, &p->record);
	take_reads(&p->record);
	if (stack_copy_bytes) {
		p->record.user_frames = 0;
		send_with_stack_copy(c, p, kernel_frames, stack_copy_bytes, OFFCPU_USTACK_COPIED);
		return;
	}
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH)
		kernel_frames = OFFCPU_MAX_STACK_DEPTH;
	n = bpf_get_stack(ctx, &p->record.ips[kernel_frames], stack_depth * sizeof(__u64),
			  BPF_F_USER_STACK);
	if (n < 0) {
		count(c, OFFCPU_CNT_USTACK_FAIL, PREEMPTIBLE);
		p->record.user_frames = 0;
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	p->record.user_frames = n / sizeof(__u64);
	p->record.user_stack = OFFCPU_USTACK_TAKEN;
	if (!fix_leaf) {
		submit(c, &p->record, PREEMPTIBLE);
		return;
	}
	send_with_stack_copy(c, p, kernel_frames + p->record.user_frames, OFFCPU_LEAF_COPY,
			     OFFCPU_USTACK_TAKEN_LEAF);
}

/*
 * The switching-in thread's pending slot, ready for a new record; NULL
 * (counted) when its wait cannot be parked.
 */
static __always_inline struct pending_wait *park_slot(struct offcpu_counters *c,
						      struct task_struct *next)
{
	struct pending_wait *p;
	struct pt_regs *regs;
	__u64 ip, sp;

	p = bpf_task_storage_get(&pending, next, 0, scheduler_get_flags());
	if (!p) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return NULL;
	}
	if (p->flushing) {
		/* Preempted on its way back to user space: see set_flushing(). */
		count(c, OFFCPU_CNT_USTACK_LOST, IN_SWITCH);
		return NULL;
	}
	/*
	 * A wait still parked: the thread blocked again before reaching user
	 * space. If its user registers are unchanged it is still in the same
	 * system call, with the same user stack as the new wait.
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(next);
	ip = PT_REGS_IP_CORE(regs);
	sp = PT_REGS_SP_CORE(regs);
	if (p->user_ip == ip && p->user_sp == sp)
		send_parked(c, p, OFFCPU_USTACK_FROM_NEXT, IN_SWITCH);
	else
		send_parked(c, p, OFFCPU_USTACK_NONE, IN_SWITCH);
	p->user_ip = ip;
	p->user_sp = sp;
	return p;
}

static __always_inline struct wait_start *new_slot(struct offcpu_counters *c, struct task_struct *t,
						   enum counting how)
{
	struct wait_start *slot;

	/* Two CPUs may both pass this check: the bound is off by one at most. */
	if (slots_in_use >= max_slots) {
		count(c, OFFCPU_CNT_TABLE_FULL, how);
		return NULL;
	}
	slot = bpf_task_storage_get(&inflight, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!slot) {
		count(c, OFFCPU_CNT_TABLE_FULL, how);
		return NULL;
	}
	__sync_fetch_and_add(&slots_in_use, 1);
	return slot;
}

/*
 * The clock costs more than anything else on this path (65 ns of a 124 ns
 * program in a KVM guest, measured with bpf_stats): read it at most once
 * per switch, and only for selected threads.
 */
static __always_inline __u64 now_ns(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/*
 * Who woke a wait, and how long it then sat runnable.
 *
 * The run-queue part needs no clock read of ours: with CONFIG_SCHED_INFO
 * the scheduler stamps a task's sched_info.last_queued (rq clock) when it
 * is enqueued, and at its switch-in adds now - last_queued to run_delay
 * (sched_info_arrive(), in prepare_task_switch(), after the sched_switch
 * tracepoint, so last_queued is still set here). A migration while
 * runnable adds the part so far to run_delay at the dequeue and stamps
 * last_queued again, so the wait's run-queue time is run_delay's growth
 * since the switch-out plus rq->clock - last_queued: exactly what the
 * kernel itself accounts, with rq->clock updated by __schedule() just
 * before it picked this task.
 *
 * The rq is found from the task: per-CPU variables (runqueues,
 * __preempt_count) are not in this kernel's kallsyms (no
 * CONFIG_KALLSYMS_ALL), so the verifier cannot resolve them as ksyms.
 * set_task_rq() points every task's se.cfs_rq at its CPU's root or group
 * cfs_rq, whatever its class, and cfs_rq->rq is that CPU's rq
 * (CONFIG_FAIR_GROUP_SCHED).
 */
struct cfs_rq___group {
	struct rq *rq;
} __attribute__((preserve_access_index));

/*
 * Which interrupt context this CPU is in, for want of __preempt_count:
 * depths kept by the irq, softirq and local timer tracepoints (a few per
 * interrupt, nothing per switch). Entered before tracing began, an exit
 * finds 0 and leaves it.
 */
struct irq_depth {
	__u32 hardirq;
	__u32 softirq;
	/*
	 * Local network delivery (loopback, a veth pair) is the sender's own
	 * work: it raises NET_RX in task context, and the softirq runs on
	 * its stack when it enables bottom halves again, waking the reader
	 * from "[softirq]". net_rx_raised: the thread that raised NET_RX so;
	 * net_rx_for: that thread while the softirq runs on it, the waker
	 * its wakeups are credited to.
	 */
	__u32 net_rx_raised;
	__u32 net_rx_for;
};

/* include/linux/interrupt.h: the softirq vector network receive runs in. */
#define NET_RX_SOFTIRQ 3

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_depth);
} irq_depths SEC(".maps");

/* This CPU's depths, one of them moved by delta; NULL if the map has none. */
static __always_inline struct irq_depth *irq_depth_add(bool hard, int delta)
{
	__u32 zero = 0;
	struct irq_depth *d = bpf_map_lookup_elem(&irq_depths, &zero);
	__u32 *depth;

	if (!d)
		return NULL;
	depth = hard ? &d->hardirq : &d->softirq;
	if (delta > 0)
		(*depth)++;
	else if (*depth)
		(*depth)--;
	return d;
}

/* --wakers: the waker's stacks, on the wakee, until its switch-in sends them. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_waker_record);
} waker_stacks SEC(".maps");

static __always_inline bool has_sched_info(struct task_struct *t)
{
	struct cfs_rq___group *g = (void *)t->se.cfs_rq;

	return bpf_core_field_exists(t->sched_info) && bpf_core_field_exists(g->rq);
}

/*
 * A remote try_to_wake_up() can see the sleeping state a thread set and
 * fire sched_waking before this CPU's switch-out has traced the wait
 * (seen: 6 of 39,000 semaphore waits of a ping-pong without a waker).
 * Such a wakeup is kept in waker_early until the switch-out. It is this
 * wait's if the thread blocks while the waker is still at work: holding
 * its pi_lock (waiting for this runqueue's lock, or spinning on its
 * on_cpu), or past them, having set TASK_WAKING and queued the wakeup
 * on this CPU's wake list. One that already made the thread runnable
 * left it TASK_RUNNING, and the thread did not block.
 */
static __always_inline bool woken_early(const struct wait_start *slot, struct task_struct *prev,
					bool preempt, __u32 prev_state)
{
	if (preempt || !prev_state)
		return false;
	return (BPF_CORE_READ(prev, __state) & TASK_BIT_WAKING) ||
	       BPF_CORE_READ(prev, pi_lock.raw_lock.val.counter);
}

/* At the switch-out: a new wait, not woken yet, but for an early waker. */
static __always_inline void wakeup_start(struct wait_start *slot, struct task_struct *prev,
					 bool preempt, __u32 prev_state)
{
	if (slot->waker_early == OFFCPU_WAKER_NONE) {
		/* Not stored: one coming now, beside this program, reaches wakeup_end(). */
		slot->waker = OFFCPU_WAKER_NONE;
	} else {
		slot->waker = woken_early(slot, prev, preempt, prev_state) ? slot->waker_early
									   : OFFCPU_WAKER_NONE;
		slot->waker_early = OFFCPU_WAKER_NONE;
	}
	slot->waker_stack = 0;
	slot->run_delay_ns = has_sched_info(prev) ? prev->sched_info.run_delay : 0;
}

/*
 * At the switch-in: an early waker that ran beside the switch-out's
 * program, after it looked (and saw none), is the wait's all the same.
 */
static __always_inline void wakeup_end(struct wait_start *slot, struct wait_start *start)
{
	if (start->waker == OFFCPU_WAKER_NONE)
		start->waker = start->waker_early;
	slot->waker_early = OFFCPU_WAKER_NONE;
}

/* The record's waker and run-queue time, at its switch-in. */
static __always_inline void fill_wakeup(struct offcpu_counters *c, struct offcpu_wait_record *r,
					struct task_struct *next, const struct wait_start *start)
{
	struct offcpu_waker_record *w;
	__u64 runq = 0, queued, clock, size;
	struct rq *rq;

	r->waker = start->waker;
	if (r->waker == OFFCPU_WAKER_NONE && r->state != OFFCPU_STATE_PREEMPTED &&
	    r->state != OFFCPU_STATE_RUNNING)
		count(c, OFFCPU_CNT_WAKER_UNSEEN, IN_SWITCH);
	r->waker_pid = start->waker_pid;
	r->waker_tid = start->waker_tid;
	r->waker_cpu = start->waker_cpu;
	r->reserved15 = 0;
	__builtin_memcpy(r->waker_comm, start->waker_comm, sizeof(r->waker_comm));
	r->waker_stack = 0;
	r->runq_known = 1;
	if (r->state == OFFCPU_STATE_PREEMPTED || r->state == OFFCPU_STATE_RUNNING) {
		runq = r->duration_ns;
	} else if (has_sched_info(next)) {
		runq = next->sched_info.run_delay - start->run_delay_ns;
		queued = next->sched_info.last_queued;
		rq = BPF_CORE_READ((struct cfs_rq___group *)next->se.cfs_rq, rq);
		clock = rq ? BPF_CORE_READ(rq, clock) : 0;
		if (queued && clock > queued)
			runq += clock - queued;
	} else {
		r->runq_known = 0;
	}
	r->runq_ns = runq < r->duration_ns ? runq : r->duration_ns;
	if (!start->waker_stack)
		return;
	/* dwarf: sent at the wakeup already. */
	if (stack_copy_bytes) {
		r->waker_stack = 1;
		return;
	}
	/* Sent first: the wait's record follows it (now, or from rseq_update). */
	w = bpf_task_storage_get(&waker_stacks, next, 0, 0);
	if (!w)
		return;
	size = (__u64)w->kernel_frames + w->user_frames;
	if (size > 2 * OFFCPU_MAX_STACK_DEPTH)
		size = 2 * OFFCPU_MAX_STACK_DEPTH;
	if (bpf_ringbuf_output(&events, w, OFFCPU_WAKER_HEADER_SIZE + size * sizeof(__u64), 0))
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, IN_SWITCH);
	else
		r->waker_stack = 1;
}

/* The current task's kernel stack into w->ips: the number of frames. */
static __always_inline __u32 waker_kernel_stack(void *ctx, struct offcpu_waker_record *w)
{
	long n = bpf_get_stack(ctx, w->ips, stack_depth * sizeof(__u64), 0);

	if (n <= 0)
		return 0;
	n /= sizeof(__u64);
	return n > OFFCPU_MAX_STACK_DEPTH ? OFFCPU_MAX_STACK_DEPTH : n;
}

static __always_inline void waker_header(struct offcpu_waker_record *w, struct task_struct *wakee,
					 struct task_struct *cur, __u64 start_ts_ns, __u64 now)
{
	w->type = OFFCPU_RECORD_WAKER;
	w->pid = cur->tgid;
	w->tid = wakee->pid;
	w->user_frames = 0;
	w->user_stack = OFFCPU_USTACK_NONE;
	w->stack_depth = stack_depth;
	w->start_ts_ns = start_ts_ns;
	w->ts_ns = now;
}

/*
 * --wakers, fp: the current task's stacks into the wakee's waker_stacks,
 * sent at its switch-in if its wait is kept. Whether they were taken.
 */
static __always_inline bool take_waker_stacks(void *ctx, struct task_struct *wakee,
					      struct task_struct *cur, bool in_interrupt,
					      __u64 start_ts_ns, __u64 now)
{
	struct offcpu_waker_record *w;
	__u32 kernel_frames;
	long n;

	w = bpf_task_storage_get(&waker_stacks, wakee, 0, scheduler_get_flags());
	if (!w) {
		count(counters_get(), OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	waker_header(w, wakee, cur, start_ts_ns, now);
	kernel_frames = waker_kernel_stack(ctx, w);
	w->kernel_frames = kernel_frames;
	/* An interrupt's user stack is whoever it interrupted: not the waker's. */
	if (!in_interrupt && !(cur->flags & PF_KTHREAD)) {
		n = bpf_get_stack(ctx, &w->ips[kernel_frames], stack_depth * sizeof(__u64),
				  BPF_F_USER_STACK);
		if (n > 0)
			w->user_frames = n / sizeof(__u64);
		w->user_stack = OFFCPU_USTACK_TAKEN;
	}
	count(counters_get(), OFFCPU_CNT_WAKER_STACKS, PREEMPTIBLE);
	return true;
}

/*
 * --wakers, dwarf: the current task's kernel stack, user registers and a
 * copy of its user stack from the SP, sent now, before the wakee can run:
 * a copy is too large to keep on each wakee until its switch-in. The
 * waker is in the kernel (a system call, or a fault), so its user stack
 * does not change under the copy. Whether it was sent; a wait whose
 * waker's record went and which is then not kept (-M, --sample-rate)
 * leaves it unmatched.
 */
static __always_inline bool send_waker_copy(void *ctx, struct task_struct *wakee,
					    struct task_struct *cur, bool in_interrupt,
					    __u64 start_ts_ns, __u64 now)
{
	struct offcpu_counters *c = counters_get();
	__u32 cpu = bpf_get_smp_processor_id();
	struct offcpu_waker_record *w;
	__u32 kernel_frames, user_off;
	__u64 total;
	struct copy_buf *b;

	b = bpf_map_lookup_elem(&waker_copy_bufs, &cpu);
	if (!b) {
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	w = (void *)b->bytes;
	waker_header(w, wakee, cur, start_ts_ns, now);
	kernel_frames = waker_kernel_stack(ctx, w);
	w->kernel_frames = kernel_frames;
	user_off = OFFCPU_WAKER_HEADER_SIZE + (kernel_frames & OFFCPU_MAX_STACK_DEPTH) * 8;
	total = user_off;
	/* An interrupt's user stack is whoever it interrupted: not the waker's. */
	if (!in_interrupt && !(cur->flags & PF_KTHREAD) &&
	    stack_copy_bytes <= OFFCPU_MAX_STACK_COPY) {
		w->user_stack = OFFCPU_USTACK_COPIED;
		total += COPY_DATA_OFF + copy_user_stack(b, user_off, stack_copy_bytes);
	}
	/* Never true (the buffer has a page of slack), but the verifier needs the bound. */
	if (total > sizeof(*b) || bpf_ringbuf_output(&events, b, total, 0)) {
		count(c, OFFCPU_CNT_WAKER_STACK_FAIL, PREEMPTIBLE);
		return false;
	}
	count(c, OFFCPU_CNT_WAKER_STACKS, PREEMPTIBLE);
	return true;
}

/*
 * The kernel's own times of a thread's switches, in
 * offcpu's clock. __schedule() updates rq->clock (sched_clock_cpu()) before
 * it picks the next task, and stamps sched_info.last_arrival with that
 * clock when the next task arrives (sched_info_switch(), after the
 * tracepoint). A time T on a run queue's clock is then
 * now - (rq->clock - T) on bpf_ktime_get_ns()'s, with now and rq->clock
 * read together in one sched_switch on that run queue: both clocks count
 * nanoseconds of the same time, so a distance back is the same on both.
 * Such a pair is kept per CPU (refreshed at most every millisecond when the
 * clock is read anyway) so that an iterator, which runs outside
 * __schedule() where rq->clock may be a tick old, converts with the pair
 * of the CPU the task last ran on. The run queue is found from a task on
 * it (se.cfs_rq->rq: CONFIG_FAIR_GROUP_SCHED; the runqueues per-CPU
 * variable needs CONFIG_KALLSYMS_ALL, which this kernel lacks); without
 * one, nothing is dated or recovered. What it costs in error, measured
 * against the traced switches (OFFCPU_TEST_MEASURE_CLOCK), is in the
 * docs/design.md ("Waits the switches do not show").
 */
struct clock_pair {
	__u64 ktime_ns; /* bpf_ktime_get_ns() */
	__u64 rq_clock; /* this CPU's rq->clock, read in the same sched_switch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct clock_pair);
} clock_pairs SEC(".maps");

#define CLOCK_PAIR_REFRESH_NS 1000000ULL

/* This CPU's rq->clock, from t, a task on this CPU's run queue; 0: none. */
static __always_inline __u64 rq_clock_of(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return 0;
	return BPF_CORE_READ(t, se.cfs_rq, rq, clock);
}

static __always_inline __u64 rq_clock_task_of(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return 0;
	return BPF_CORE_READ(t, se.cfs_rq, rq, clock_task);
}

/* t is switching on or off this CPU. */
static __always_inline struct clock_pair *refresh_clock_pair(struct task_struct *t, __u64 *now)
{
	struct clock_pair *pair;
	__u32 zero = 0;
	__u64 clock = rq_clock_of(t);

	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	if (!pair || !clock)
		return NULL;
	pair->rq_clock = clock;
	pair->ktime_ns = now_ns(now);
	return pair;
}

/* At the end of sched_switch: once per CPU, then when the clock was read anyway. */
static __always_inline void keep_clock_pair(struct task_struct *t, __u64 *now)
{
	struct clock_pair *pair;
	__u32 zero = 0;

	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	if (pair && (!pair->ktime_ns || (*now && *now - pair->ktime_ns > CLOCK_PAIR_REFRESH_NS)))
		refresh_clock_pair(t, now);
}

static __always_inline struct clock_pair *clock_pair_of(__u32 cpu)
{
	__u32 zero = 0;
	struct clock_pair *pair = bpf_map_lookup_percpu_elem(&clock_pairs, &zero, cpu);

	if (pair && pair->ktime_ns)
		return pair;
	pair = bpf_map_lookup_elem(&clock_pairs, &zero);
	return pair && pair->ktime_ns ? pair : NULL;
}

/* The conversion; unsigned arithmetic, so a time after the pair's works too. */
static __always_inline __u64 rq_time_to_ktime(const struct clock_pair *pair, __u64 rq_ts)
{
	return pair->ktime_ns - (pair->rq_clock - rq_ts);
}

/* Since 5.16 (commit bcf9033e5449) the CPU is in thread_info again. */
struct task_struct___cpu {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___cpu *)t, cpu);
}

/* When t last arrived on a CPU, in offcpu's clock; 0: unknown. */
static __always_inline __u64 arrival_ns(struct task_struct *t, const struct clock_pair *pair)
{
	__u64 arrival = BPF_CORE_READ(t, sched_info.last_arrival);

	if (!arrival || !pair)
		return 0;
	return rq_time_to_ktime(pair, arrival);
}

/*
 * When t, off CPU, left it: its last arrival plus what it ran then
 * (sum_exec_runtime - prev_sum_exec_runtime, both from the pick of that
 * arrival). Not se.exec_start: that is on rq->clock_task, which steal time
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING, on here) and interrupt time hold back,
 * so it drifts from offcpu's clock by all the steal since the thread left
 * (measured in docs/design.md); the run's own length is on that clock too, but
 * a run is short. Only the fair class sets prev_sum_exec_runtime (at its
 * pick, set_next_entity()): for real-time, deadline and stop tasks
 * (migration/N was off by 780 ms), the start of their last run. 0: unknown.
 */
#define SCHED_POLICY_NORMAL 0
#define SCHED_POLICY_BATCH 3
#define SCHED_POLICY_IDLE 5

static __always_inline __u64 departure_ns(struct task_struct *t, const struct clock_pair *pair)
{
	__u64 arrival = BPF_CORE_READ(t, sched_info.last_arrival);
	__u64 ran =
	    BPF_CORE_READ(t, se.sum_exec_runtime) - BPF_CORE_READ(t, se.prev_sum_exec_runtime);
	__u32 policy = BPF_CORE_READ(t, policy);

	if (!arrival || !pair)
		return 0;
	if ((policy != SCHED_POLICY_NORMAL && policy != SCHED_POLICY_BATCH &&
	     policy != SCHED_POLICY_IDLE) ||
	    ((__s64)(pair->rq_clock - arrival) > 0 && ran > pair->rq_clock - arrival))
		ran = 0;
	return rq_time_to_ktime(pair, arrival + ran);
}

/* Whether end_ns, a thread's arrival, ends the wait in its slot: after its start, not after now. */
static __always_inline bool arrival_ends(const struct wait_start *slot, __u64 end_ns, __u64 now)
{
	return end_ns && (__s64)(end_ns - slot->start_ts_ns) > 0 && (__s64)(now - end_ns) >= 0;
}

/* --short sample's coin: true with probability duration_ns / min_duration_ns. */
static __always_inline bool short_kept(__u64 duration_ns)
{
	__u64 r = bpf_get_prandom_u32();

	return r * (min_duration_ns >> short_shift) < (duration_ns >> short_shift) << 32;
}

/* When tracing began (tracer.c): at the stop, a thread dated from before it is open at both ends. */
__u64 recording_start_ns;

/*
 * The filter chain of a wait whose duration is known, a switch-in's or a
 * recovered one: -m, --short sample's coin, -M, --sample-rate, in
 * that order; true if the wait goes on. Each drop adds its duration beside
 * its count, and to the thread's dropped_ns (for -- COMMAND's
 * coverage). start_ns is the wait's: of one begun before tracing, the
 * counters have the time since, as the totals do; -m and -M judge it whole.
 */
static __always_inline bool wait_kept(struct offcpu_counters *c, struct wait_start *slot,
				      __u64 start_ns, __u64 duration_ns, enum counting how)
{
	__u64 before = recording_start_ns - start_ns;
	__u64 counted_ns =
	    (__s64)before > 0 && before < duration_ns ? duration_ns - before : duration_ns;

	if (duration_ns < min_duration_ns) {
		count(c, OFFCPU_CNT_BELOW_MIN, how);
		add(c, OFFCPU_CNT_BELOW_MIN_NS, counted_ns, how);
		if (!short_sample || !short_kept(duration_ns)) {
			slot->dropped_ns += duration_ns;
			return false;
		}
		count(c, OFFCPU_CNT_SHORT_SAMPLED, how);
		add(c, OFFCPU_CNT_SHORT_SAMPLED_NS, min_duration_ns, how);
	}
	if (duration_ns > max_duration_ns) {
		count(c, OFFCPU_CNT_ABOVE_MAX, how);
		add(c, OFFCPU_CNT_ABOVE_MAX_NS, counted_ns, how);
		slot->dropped_ns += duration_ns;
		return false;
	}
	if (sample_rate > 1 && bpf_get_prandom_u32() % sample_rate) {
		count(c, OFFCPU_CNT_SAMPLED_OUT, how);
		add(c, OFFCPU_CNT_SAMPLED_OUT_NS, counted_ns, how);
		slot->dropped_ns += duration_ns;
		return false;
	}
	return true;
}

/*
 * The header of a wait known by its times alone, a recovered or an
 * open one, without stacks yet. No waker, run-queue time, reads or
 * cgroup known: every field 0 first.
 */
static __always_inline void fill_times_only(struct offcpu_wait_record *r, struct task_struct *t,
					    __u32 cpu, __u64 end_ns, __u64 duration_ns, __u32 state,
					    __u32 flags)
{
	__builtin_memset(r, 0, OFFCPU_WAIT_HEADER_SIZE);
	r->type = OFFCPU_RECORD_WAIT;
	r->pid = t->tgid;
	r->tid = t->pid;
	r->cpu = cpu;
	r->end_ts_ns = end_ns;
	r->duration_ns = duration_ns;
	r->state = state;
	r->user_stack = OFFCPU_USTACK_NONE;
	r->kernel_frames = 0;
	r->user_frames = 0;
	r->stack_depth = stack_depth;
	r->flags = flags;
	/* The run-queue time: a runnable thread's whole wait; a blocked one has none yet. */
	if (state == OFFCPU_STATE_PREEMPTED || state == OFFCPU_STATE_RUNNING) {
		r->runq_ns = duration_ns;
		r->runq_known = 1;
	}
	r->reserved[0] = 0;
	r->reserved[1] = 0;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
	/*
	 * The cgroup it is in now: a hang's container is what a snapshot is
	 * for, and a wait of a selected cgroup without one read as "[cgroup 0]".
	 */
	r->cgroup_id = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/*
 * A recovered wait goes with its state and duration but no stacks:
 * the thread has run since, so its kernel stack at block time is gone, and
 * so is the user one it had then.
 */
static __always_inline void send_recovered(struct offcpu_counters *c, struct task_struct *t,
					   struct wait_start *slot, __u64 end_ns, enum counting how)
{
	__u64 duration_ns = end_ns - slot->start_ts_ns;
	struct offcpu_wait_record *r;

	/*
	 * The same bounds, coin and counters as a switch-in's
	 * wait: a short recovered wait was counted below -m without its
	 * nanoseconds, and dropped whatever --short sample's coin said.
	 */
	if (!wait_kept(c, slot, slot->start_ts_ns, duration_ns, how))
		return;
	r = bpf_ringbuf_reserve(&events, OFFCPU_WAIT_HEADER_SIZE, 0);
	if (!r) {
		count(c, OFFCPU_CNT_RINGBUF_FULL, how);
		add(c, OFFCPU_CNT_RINGBUF_FULL_NS, duration_ns, how);
		return;
	}
	fill_times_only(r, t, bpf_get_smp_processor_id(), end_ns, duration_ns,
			state_of(slot->prev_state, slot->preempt), slot->flags | OFFCPU_WAIT_RECOVERED);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	count(c, OFFCPU_CNT_EMITTED, how);
}

/*
 * t switches out with a start still in its slot: it was switched in
 * without a sched_switch event reaching us (see unseen_switch_in()). The
 * kernel stamped that switch-in: the hidden wait ended at t's last arrival.
 */
/*
 * The wait in t's slot, its switch-in hidden, ended at end_ns (t's last
 * arrival) if that is after its start and not after now: recovered, and
 * end_ns returned; else counted lost, and 0.
 */
static __always_inline __u64 recover(struct offcpu_counters *c, struct task_struct *t,
				     struct wait_start *slot, __u64 end_ns, __u64 now,
				     enum counting how)
{
	if (!arrival_ends(slot, end_ns, now)) {
		count(c, OFFCPU_CNT_SWITCH_UNSEEN, how);
		return 0;
	}
	count(c, OFFCPU_CNT_SWITCH_RECOVERED, how);
	send_recovered(c, t, slot, end_ns, how);
	return end_ns;
}

static __always_inline __u64 recover_wait(struct offcpu_counters *c, struct task_struct *t,
					  struct wait_start *slot, __u64 *now)
{
	struct clock_pair *pair = refresh_clock_pair(t, now);
	__u64 end_ns = arrival_ns(t, pair);

	/* The hidden switch-in's time: the end of the wait, the start of its run. */
	return recover(c, t, slot, end_ns, *now, IN_SWITCH);
}

/*
 * measure_clock: the conversion's error against the traced switches, in
 * clock_errors[kind] (read by tracer.c): a switch-in's time from
 * last_arrival (at the next switch-out), a switch-out's from last_arrival
 * and the run's length, and from se.exec_start (both at the next
 * switch-in, as the iterator would date it).
 */
struct offcpu_clock_error clock_errors[OFFCPU_CLOCK_ERR_KINDS];

static __always_inline void add_clock_error(int kind, __u64 estimate, __u64 exact, __u64 wait_ns,
					    __u32 tid)
{
	__s64 e = (__s64)(estimate - exact);
	__u64 a = e < 0 ? -e : e;
	struct offcpu_clock_error *ce;

	if (kind < 0 || kind >= OFFCPU_CLOCK_ERR_KINDS || !estimate)
		return;
	ce = &clock_errors[kind];
	__sync_fetch_and_add(&ce->n, 1);
	__sync_fetch_and_add(&ce->sum_abs_ns, a);
	__sync_fetch_and_add(&ce->sum_ns, (__u64)e);
	__sync_fetch_and_add(&ce->sum_wait_ns, wait_ns);
	if (a > 1000000)
		__sync_fetch_and_add(&ce->over_1ms, 1);
	if (a > 10000000)
		__sync_fetch_and_add(&ce->over_10ms, 1);
	if (a > ce->max_abs_ns) {
		ce->max_abs_ns = a;
		ce->worst_tid = tid;
	}
}

static __always_inline void measure_switch_out(struct task_struct *prev, struct wait_start *slot,
					       __u64 *now)
{
	if (slot->switch_in_ts_ns && !slot->start_ts_ns)
		add_clock_error(OFFCPU_CLOCK_ERR_ARRIVAL,
				arrival_ns(prev, refresh_clock_pair(prev, now)),
				slot->switch_in_ts_ns, 0, prev->pid);
	slot->switch_in_ts_ns = 0;
}

static __always_inline void measure_switch_in(struct task_struct *next, struct wait_start *slot,
					      const struct wait_start *start, __u64 now)
{
	__u64 wait_ns = now - start->start_ts_ns;
	__u64 task_clock_ago;
	__u64 copy = now;

	slot->switch_in_ts_ns = now;
	add_clock_error(OFFCPU_CLOCK_ERR_DEPARTURE,
			departure_ns(next, refresh_clock_pair(next, &copy)), start->start_ts_ns,
			wait_ns, next->pid);
	task_clock_ago = rq_clock_task_of(next) - BPF_CORE_READ(next, se.exec_start);
	add_clock_error(OFFCPU_CLOCK_ERR_EXEC_START, now - task_clock_ago, start->start_ts_ns,
			wait_ns, next->pid);
}

/* Threads whose user stack rseq_update takes; the others' is taken at switch-out. */
static __always_inline bool user_stack_deferred(struct task_struct *t)
{
	return defer_user_stacks && has_rseq(t);
}

/* prev is current: its user registers and memory are its own. */
static __always_inline void take_switch_out_stack(void *ctx, struct task_struct *prev)
{
	struct switch_out_stack *u;
	long n;

	u = bpf_task_storage_get(&switch_out_stacks, prev, 0, scheduler_get_flags());
	if (!u)
		return;
	n = bpf_get_stack(ctx, u->ips, stack_depth * sizeof(__u64), BPF_F_USER_STACK);
	u->frames = n < 0 ? -1 : n / sizeof(__u64);
}

/*
 * --state. A runnable thread without the preempt flag may have yielded or
 * been preempted on its way back to user space: user space tells which
 * from its kernel stack, so it passes here if either is selected.
 */
static __always_inline bool state_selected(__u32 prev_state, bool preempt)
{
	__u32 state, bits;

	if (!state_mask)
		return true;
	state = state_of(prev_state, preempt);
	bits = 1u << state;
	if (state == OFFCPU_STATE_RUNNING)
		bits |= 1u << OFFCPU_STATE_PREEMPTED;
	return state_mask & bits;
}

static __always_inline void switch_out(void *ctx, struct offcpu_counters *c,
				       struct task_struct *prev, bool preempt, __u32 prev_state,
				       __u64 *now)
{
	struct wait_start *slot;

	if (prev_state & TASK_BIT_DEAD)
		return;
	if (!task_selected(prev, true) || !state_selected(prev_state, preempt)) {
		count(c, OFFCPU_CNT_FILTERED, IN_SWITCH);
		return;
	}
	slot = bpf_task_storage_get(&inflight, prev, 0, 0);
	if (!slot) {
		/*
		 * Past its exit program (which deleted the slot
		 * and wrote its life's account) a thread is not timed: a wait
		 * there ended after its exit_ns, and had a slot taken for good.
		 */
		if (prev->flags & PF_EXITING) {
			count(c, OFFCPU_CNT_FILTERED, IN_SWITCH);
			return;
		}
		if (!alloc_in_scheduler) {
			count(c, OFFCPU_CNT_SLOT_NOT_MADE, IN_SWITCH);
			return;
		}
		slot = new_slot(c, prev, IN_SWITCH);
		if (!slot)
			return;
		slot->tracked_ns = now_ns(now);
	} else if (!alloc_in_scheduler && slot->made_ahead) {
		/* Its first switch-out, as for a slot made just above. */
		slot->made_ahead = 0;
		slot->tracked_ns = now_ns(now);
	} else if (slot->start_ts_ns) {
		/* See unseen_switch_in(): recovered, or counted lost. */
		__u64 arrived_ns = recover_wait(c, prev, slot, now);

		slot->first_run = 0;
		if (arrived_ns)
			/* The wait went out (or was dropped), it has run since. */
			slot->on_cpu_since = arrived_ns;
		else
			/* Off CPU, then on since an unknown switch-in: both, not told apart. */
			slot->unseen_ns += now_ns(now) - slot->start_ts_ns;
	}
	if (slot->on_cpu_since)
		slot->run_ns += now_ns(now) - slot->on_cpu_since;
	slot->on_cpu_since = 0;
	if (measure_clock)
		measure_switch_out(prev, slot, now);
	slot->start_ts_ns = now_ns(now);
	slot->prev_state = prev_state;
	slot->preempt = preempt;
	slot->flags = 0;
	wakeup_start(slot, prev, preempt, prev_state);
	count(c, OFFCPU_CNT_WAITS_STARTED, IN_SWITCH);
	if (want_user_stack && !(prev->flags & PF_KTHREAD) && !user_stack_deferred(prev)) {
		take_switch_out_stack(ctx, prev);
		/* An exiting thread runs no Python code any more. */
		if (!(prev->flags & PF_EXITING))
			python_take_at_switch_out(c, prev, slot->start_ts_ns);
	}
}

/*
 * add_switch_out_stack() bounds a frame count for the verifier with this
 * mask: unlike a comparison, the compiler cannot move a mask away from the
 * access it guards. It is the bound only if it is all ones.
 */
_Static_assert((OFFCPU_MAX_STACK_DEPTH & (OFFCPU_MAX_STACK_DEPTH + 1)) == 0,
	       "OFFCPU_MAX_STACK_DEPTH is used as a mask: it must be 2^n - 1");

/* Appends the user stack the thread left with to its record. */
static __always_inline void add_switch_out_stack(struct offcpu_counters *c,
						 struct task_struct *next,
						 struct offcpu_wait_record *r)
{
	struct switch_out_stack *u = bpf_task_storage_get(&switch_out_stacks, next, 0, 0);
	__u32 kernel_frames = r->kernel_frames;
	__u32 frames;

	if (!u || u->frames < 0) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return;
	}
	/* At most stack_depth <= OFFCPU_MAX_STACK_DEPTH frames were taken. */
	frames = u->frames & OFFCPU_MAX_STACK_DEPTH;
	if (kernel_frames > OFFCPU_MAX_STACK_DEPTH)
		kernel_frames = OFFCPU_MAX_STACK_DEPTH;
	if (bpf_probe_read_kernel(&r->ips[kernel_frames], frames * sizeof(__u64), u->ips)) {
		count(c, OFFCPU_CNT_USTACK_FAIL, IN_SWITCH);
		return;
	}
	r->user_frames = frames;
	r->user_stack = OFFCPU_USTACK_TAKEN;
	count(c, OFFCPU_CNT_USTACK_AT_OUT, IN_SWITCH);
}

static __always_inline bool in_sched_text(__u64 ip)
{
	return ip >= (__u64)&__sched_text_start && ip < (__u64)&__sched_text_end;
}

/*
 * x86-64's call and jmp encodings and its saved frame
 * (struct inactive_task_frame); elsewhere the kernel stack stays as
 * bpf_get_task_stack gives it.
 */
#if defined(__TARGET_ARCH_x86)
/* The target of the direct call that returns to ip, or 0 if the call is none. */
static __always_inline __u64 call_target(__u64 ip)
{
	__u8 call[5];
	__s32 rel;

	if (bpf_probe_read_kernel(call, sizeof(call), (void *)(ip - sizeof(call))) ||
	    call[0] != X86_CALL_REL32)
		return 0;
	__builtin_memcpy(&rel, &call[1], sizeof(rel));
	return ip + (__s64)rel;
}

#define X86_JMP_REL32 0xe9
#define LEAF_WRAPPER_BYTES 16

/*
 * Where a wrapper ending in a tail call jumps (schedule_hrtimeout_range ->
 * schedule_hrtimeout_range_clock: the caller's call names the wrapper, the
 * return address is in the function it jumps to): a jmp rel32 in its first
 * LEAF_WRAPPER_BYTES that lands in .sched.text, else 0. Looked at only
 * when no return address into fn was found (a byte that only looks like a
 * jmp in a function that called on would name a wrong function).
 */
static __always_inline __u64 tail_target(__u64 fn)
{
	__u8 code[LEAF_WRAPPER_BYTES];
	__s32 rel;
	__u32 i;

	if (bpf_probe_read_kernel(code, sizeof(code), (void *)fn))
		return 0;
	for (i = 0; i + 5 <= LEAF_WRAPPER_BYTES; i++) {
		if (code[i] != X86_JMP_REL32)
			continue;
		__builtin_memcpy(&rel, &code[(i + 1) & (LEAF_WRAPPER_BYTES - 1)], sizeof(rel));
		if (in_sched_text(fn + i + 5 + (__s64)rel))
			return fn + i + 5 + (__s64)rel;
	}
	return 0;
}

/* kernel_leaf()'s walk, in bpf_loop callbacks (the verifier sees each once). */
struct leaf_walk {
	struct leaf_scan *l;
	__u64 first;	 /* the task's first frame outside .sched.text */
	__u64 saved;	 /* the saved frame's return into __schedule */
	__u64 fn;	 /* the function whose return address is looked for */
	__u32 slot;	 /* of the last return address found */
	__u32 nr;	 /* return addresses found */
	__u32 words;	 /* of l->words read */
	__u32 step_slot; /* where the look for fn began */
	bool retried;	 /* fn replaced by where it tail-calls */
	bool done;
};

#define LEAF_FRAME_WORDS (sizeof(struct inactive_task_frame) / sizeof(__u64))

static bool returns_into(__u64 ip, __u64 fn)
{
	return ip > fn && ip - fn < LEAF_FUNCTION_MAX;
}

static long find_first(__u32 i, void *ctx)
{
	struct leaf_walk *w = ctx;

	if (i >= w->words)
		return 1;
	if (i < LEAF_FRAME_WORDS || w->l->words[i & (LEAF_WORDS - 1)] != w->first)
		return 0;
	w->slot = i;
	return 1;
}

/* One pass down the stack: each function's return address lies below its caller's. */
static long walk_down(__u32 k, void *ctx)
{
	struct leaf_walk *w = ctx;
	__u32 i = w->slot - 1;
	__u64 word;

	if (!in_sched_text(w->fn) || w->nr >= LEAF_MAX_FRAMES - 1)
		return 1;
	if (returns_into(w->saved, w->fn)) {
		w->done = true;
		return 1;
	}
	/* slot is at least LEAF_FRAME_WORDS: i does not wrap; the mask below bounds it. */
	if (i < LEAF_FRAME_WORDS) {
		/* Nothing returns into fn: once per step, where fn tail-calls. */
		if (w->retried)
			return 1;
		w->retried = true;
		w->fn = tail_target(w->fn);
		w->slot = w->step_slot;
		return 0;
	}
	w->slot = i;
	word = w->l->words[i & (LEAF_WORDS - 1)];
	if (returns_into(word, w->fn)) {
		w->l->frames[(LEAF_MAX_FRAMES - 2 - w->nr) & (LEAF_MAX_FRAMES - 1)] = word;
		w->nr++;
		w->fn = call_target(word);
		w->step_slot = i;
		w->retried = false;
	}
	return 0;
}

/*
 * The __sched frames between the blocked task's saved
 * frame and first, its first frame outside .sched.text (what
 * bpf_get_task_stack gives first), at the end of l->frames, leaf first;
 * their number, 0 if not found. From first's slot down the stack: the call
 * before first named the function that called on (do_nanosleep), so the
 * highest word below that slot that returns into it (within
 * LEAF_FUNCTION_MAX of its start) is its return address; its own call names
 * the next (schedule), until the function is the one the saved frame
 * returns into (__schedule). Every step must be a direct call into
 * .sched.text; anything else (an indirect call, a function not found) gives
 * up: the stack stays as bpf_get_task_stack gave it.
 */
static __always_inline __u32 kernel_leaf(struct task_struct *next, __u64 first, struct leaf_scan *l)
{
	struct leaf_walk w = { .l = l, .first = first };
	__u64 sp = BPF_CORE_READ(next, thread.sp);
	__u64 top = (__u64)BPF_CORE_READ(next, stack) + KERNEL_STACK_SIZE;
	__u32 len = sizeof(l->words);

	/* Never past the stack's top (a guard page may follow): the read would fail whole. */
	if (!sp || sp >= top)
		return 0;
	if (top - sp < len)
		len = top - sp;
	if (len < 8 * (LEAF_FRAME_WORDS + 1) || bpf_probe_read_kernel(l->words, len, (void *)sp))
		return 0;
	w.words = len / 8;
	w.saved = l->words[bpf_core_field_offset(struct inactive_task_frame, ret_addr) / 8 &
			   (LEAF_WORDS - 1)];
	bpf_loop(LEAF_WORDS, find_first, &w, 0);
	if (!w.slot)
		return 0;
	w.fn = call_target(first);
	w.step_slot = w.slot;
	/* Each word once, and once more per step that looks where fn tail-calls. */
	bpf_loop(LEAF_WORDS * 2, walk_down, &w, 0);
	if (!w.done)
		return 0;
	l->frames[(LEAF_MAX_FRAMES - 2 - w.nr) & (LEAF_MAX_FRAMES - 1)] = w.saved;
	return w.nr + 1;
}
#else
static __always_inline __u32 kernel_leaf(struct task_struct *next, __u64 first, struct leaf_scan *l)
{
	return 0;
}
#endif

/* The kernel stack moved down over the room left for the leaf. */
struct leaf_move {
	struct offcpu_wait_record *r;
	__u32 by; /* < LEAF_MAX_FRAMES */
	__u32 nr; /* frames to move, at most OFFCPU_MAX_STACK_DEPTH */
};

static long move_down(__u32 i, void *ctx)
{
	struct leaf_move *m = ctx;
	__u32 to = i & OFFCPU_MAX_STACK_DEPTH;

	if (i >= m->nr)
		return 1;
	m->r->ips[to] = m->r->ips[to + (m->by & (LEAF_MAX_FRAMES - 1))];
	return 0;
}

/*
 * The kernel stack of next at block time: bpf_get_task_stack(next), after
 * the __sched frames it drops, for the waits that passed.
 * The task's stack is taken once, LEAF_MAX_FRAMES - 1 entries in, so the
 * frames kernel_leaf() finds (l->frames[room - nr..room), leaf first) go
 * right before it at the same indexes; then all moves down to ips[0].
 */
static __always_inline void take_kernel_stack(struct offcpu_counters *c,
					      struct offcpu_wait_record *r,
					      struct task_struct *next, void *scans)
{
	const __u32 room = LEAF_MAX_FRAMES - 1;
	struct leaf_move m = { .r = r };
	struct leaf_scan *l = NULL;
	__u32 i, nr = 0, zero = 0, frames;
	long n;

	if (!take_kernel_leaf || !(__u64)&__sched_text_end) {
		n = bpf_get_task_stack(next, r->ips, stack_depth * sizeof(__u64), 0);
		if (n < 0)
			count(c, OFFCPU_CNT_KSTACK_FAIL, IN_SWITCH);
		else
			r->kernel_frames = n / sizeof(__u64);
		return;
	}
	n = bpf_get_task_stack(next, &r->ips[room], stack_depth * sizeof(__u64), 0);
	if (n < 0)
		count(c, OFFCPU_CNT_KSTACK_FAIL, IN_SWITCH);
	if (n <= 0)
		return;
	frames = n / sizeof(__u64);
	l = bpf_map_lookup_elem(scans, &zero);
	if (l)
		nr = kernel_leaf(next, r->ips[room], l);
	if (nr > room || nr >= stack_depth)
		nr = 0;
	/* Every blocked task's stack holds the frame that returns into __schedule. */
	if (!nr)
		r->flags |= OFFCPU_WAIT_LEAF_MISSED;
	if (nr + frames > stack_depth)
		frames = stack_depth - nr;
	for (i = 0; i < LEAF_MAX_FRAMES - 1; i++) {
		if (i >= room - nr && l)
			r->ips[i] = l->frames[i];
	}
	m.by = room - nr;
	m.nr = nr + frames;
	bpf_loop(OFFCPU_MAX_STACK_DEPTH, move_down, &m, 0);
	r->kernel_frames = nr + frames;
}

/* The wait and its kernel stack, taken now: next has not run since it blocked. */
static __always_inline void fill_record(struct offcpu_counters *c, struct offcpu_wait_record *r,
					struct task_struct *next, __u32 tid,
					const struct wait_start *start, __u64 now)
{
	r->type = OFFCPU_RECORD_WAIT;
	r->pid = next->tgid;
	r->tid = tid;
	r->flags = start->flags;
	r->reserved[0] = 0;
	r->reserved[1] = 0;
	r->cpu = bpf_get_smp_processor_id();
	r->end_ts_ns = now;
	r->duration_ns = now - start->start_ts_ns;
	r->state = state_of(start->prev_state, start->preempt);
	r->user_stack = OFFCPU_USTACK_NONE;
	r->kernel_frames = 0;
	r->user_frames = 0;
	r->stack_depth = stack_depth;
	r->read_mask = 0;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), next->comm);
	/*
	 * The cgroup it blocked in, read only for the waits that
	 * passed (four loads): it has not run since, so it is the one of its
	 * switch-out unless it was moved while asleep.
	 */
	r->cgroup_id = BPF_CORE_READ(next, cgroups, dfl_cgrp, kn, id);
	if (want_kernel_stack)
		take_kernel_stack(c, r, next, &leaf_scans);
}

/*
 * A wait that passed the bounds and the sampling: parked for rseq_update
 * to add the user stack, or sent now, with the user stack taken at its
 * switch-out if it has one.
 */
static __always_inline void emit_wait(struct offcpu_counters *c, struct task_struct *next,
				      __u32 tid, const struct wait_start *start, __u64 now)
{
	bool user = want_user_stack && !(next->flags & PF_KTHREAD);
	struct pending_wait *p = NULL;
	struct offcpu_wait_record *r;
	__u32 zero = 0;

	if (user && user_stack_deferred(next)) {
		/*
		 * An exiting thread never returns to user space, and its exit
		 * program (flush_current()) may have run already: one that
		 * blocked or was preempted after it (exit_mm(), exit_files())
		 * had its wait parked for good, counted by --short sample's
		 * coin and in user_stack_pending but never sent (seen:
		 * short_sampled one above the short waits in the json, with
		 * user_stack_pending 1). It goes now, without a user stack,
		 * as flush_current() would send it, after one still parked
		 * from before its exit began: the thread's records in order.
		 */
		if (next->flags & PF_EXITING) {
			p = bpf_task_storage_get(&pending, next, 0, 0);
			if (p && !p->flushing)
				send_parked(c, p, OFFCPU_USTACK_NONE, IN_SWITCH);
			p = NULL;
			count(c, OFFCPU_CNT_USTACK_LOST, IN_SWITCH);
		} else {
			p = park_slot(c, next);
		}
		/* No user stack was taken at its switch-out: unparked, it goes without. */
		user = false;
	}
	r = p ? &p->record : bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return;
	fill_record(c, r, next, tid, start, now);
	fill_wakeup(c, r, next, start);
	if (p) {
		park(c, p);
		return;
	}
	if (user) {
		add_switch_out_stack(c, next, r);
		python_send_switch_out(c, next, r, start->start_ts_ns);
	}
	submit(c, r, IN_SWITCH);
}

static __always_inline void switch_in(struct offcpu_counters *c, struct task_struct *next,
				      __u32 tid, __u64 *clock)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, next, 0, 0);
	struct wait_start start;
	__u64 duration_ns, now;

	if (!slot || !slot->start_ts_ns) {
		/*
		 * Without a filter every thread is selected: one without a
		 * start was off CPU when tracing began. With one, telling a
		 * selected thread from an excluded one here would cost the
		 * filter again on every switch: not counted.
		 */
		if (!any_filter && next->tgid != self_tgid)
			count(c, OFFCPU_CNT_NO_START, IN_SWITCH);
		return;
	}
	start = *slot;
	slot->start_ts_ns = 0;
	wakeup_end(slot, &start);
	now = now_ns(clock);
	slot->on_cpu_since = now;
	duration_ns = now - start.start_ts_ns;
	if (start.first_run) {
		/* From its fork to its first run: no wait of its own, but off CPU. */
		slot->first_run = 0;
		slot->startup_ns += duration_ns;
		return;
	}
	count(c, OFFCPU_CNT_WAITS_COMPLETED, IN_SWITCH);
	if (measure_clock)
		measure_switch_in(next, slot, &start, now);

	if (!wait_kept(c, slot, start.start_ts_ns, duration_ns, IN_SWITCH))
		return;
	emit_wait(c, next, tid, &start, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct offcpu_counters *c = counters_get();
	__u32 prev_tid = prev->pid;
	__u32 next_tid = next->pid;
	__u32 prev_state;
	__u64 now = 0;

	/*
	 * Since 5.18 (commit fa2c3254d7cf, "sched/tracing: Don't re-read
	 * p->state when emitting sched_switch event") the state is an
	 * argument; re-reading prev->__state races with a remote wakeup.
	 */
	if (has_prev_state_arg)
		prev_state = (__u32)ctx[3];
	else
		prev_state = task_state(prev);

	count(c, OFFCPU_CNT_SWITCHES, IN_SWITCH);
	/* TID 0 is the per-CPU idle task: it never waits. */
	if (prev_tid)
		switch_out(ctx, c, prev, preempt, prev_state, &now);
	if (next_tid)
		switch_in(c, next, next_tid, &now);
	keep_clock_pair(prev_tid ? prev : next, &now);
	return 0;
}

/*
 * The current thread is about to run user code, for the first time since
 * its parked wait: its user stack is as it was when it blocked.
 */
SEC("tp_btf/rseq_update")
int BPF_PROG(offcpu_rseq_update)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending_wait *p;

	p = bpf_task_storage_get(&pending, task, 0, 0);
	if (!p || !p->armed)
		return 0;
	set_flushing(p, 1);
	send_with_user_stack(ctx, counters_get(), p);
	set_flushing(p, 0);
	return 0;
}

/* The current thread is exiting or exec'ing: its parked wait has no user stack left. */
static __always_inline void flush_current(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pending_wait *p = bpf_task_storage_get(&pending, task, 0, 0);

	if (!p || !p->armed)
		return;
	set_flushing(p, 1);
	send_parked(counters_get(), p, OFFCPU_USTACK_NONE, PREEMPTIBLE);
	set_flushing(p, 0);
}

/*
 * An exec wakes the reader at once: it snapshots the new image's mappings
 * while the process lives, which a short-lived one does not for long.
 */
static __always_inline void task_record(__u32 type, __u32 pid, __u32 parent_pid)
{
	struct offcpu_task_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(counters_get(), OFFCPU_CNT_RINGBUF_FULL, PREEMPTIBLE);
		return;
	}
	r->type = type;
	r->pid = pid;
	r->parent_pid = parent_pid;
	bpf_ringbuf_submit(r, type == OFFCPU_RECORD_EXEC ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * A thread that is running has no start in its slot: its switch-in took
 * it. One still there means the thread was switched in without a
 * sched_switch event reaching us, and that wait is lost. Kernels may not
 * deliver every switch: this Firecracker VM's traces no switch away from
 * its init's threads (perf sees none either), so whichever thread runs
 * after one of them loses its switch-in. Counted where the thread next
 * shows itself running: its next switch-out, or its exit.
 */
static __always_inline void unseen_switch_in(struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct offcpu_counters *c = counters_get();
	__u64 end_ns;

	if (!slot || !slot->start_ts_ns)
		return;
	end_ns = arrival_ns(p, clock_pair_of(bpf_get_smp_processor_id()));
	if (!recover(c, p, slot, end_ns, bpf_ktime_get_ns(), PREEMPTIBLE))
		return;
	slot->start_ts_ns = 0;
	/* It has run since; thread_record() ends that run now. */
	slot->on_cpu_since = end_ns;
}

/*
 * Under -- COMMAND, an exiting thread's life as its slot timed
 * it. It is running: its last interval on CPU ends now.
 */
static __always_inline void thread_record(struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct offcpu_thread_record *r;
	__u64 now = bpf_ktime_get_ns();

	if (!slot || !slot->tracked_ns)
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(counters_get(), OFFCPU_CNT_RINGBUF_FULL, PREEMPTIBLE);
		return;
	}
	r->type = OFFCPU_RECORD_THREAD;
	r->pid = p->tgid;
	r->tid = p->pid;
	r->reserved = 0;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), p->comm);
	r->start_ns = p->start_time;
	r->tracked_ns = slot->tracked_ns;
	r->exit_ns = now;
	r->run_ns = slot->run_ns + (slot->on_cpu_since ? now - slot->on_cpu_since : 0);
	r->startup_ns = slot->startup_ns;
	r->dropped_ns = slot->dropped_ns;
	r->unseen_ns = slot->unseen_ns + (slot->start_ts_ns ? now - slot->start_ts_ns : 0);
	r->kernel_run_ns = p->se.sum_exec_runtime;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Every exiting thread passes here, once. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(offcpu_sched_process_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	flush_current();
	unseen_switch_in(p);
	if (account_threads)
		thread_record(p);
	if (!bpf_task_storage_delete(&inflight, p))
		__sync_fetch_and_add(&slots_in_use, -1);
	/* do_exit() decremented signal->live before this tracepoint. */
	if (p->signal->live.counter != 0)
		return 0;
	python_forget(tgid);
	/* Its PID may be reused by a process nobody asked for. */
	if (follow_forks)
		__sync_fetch_and_and(&pid_bits[OFFCPU_ID_WORD(tgid)], ~OFFCPU_ID_BIT(tgid));
	bpf_map_delete_elem(&reads_by_pid, &tgid);
	task_record(OFFCPU_RECORD_EXIT, tgid, 0);
	return 0;
}

/* The old image's user stack is gone; user space must re-read the maps. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(offcpu_sched_process_exec, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	flush_current();
	python_forget(tgid);
	/* Another image: user space matches it again. */
	bpf_map_delete_elem(&reads_by_pid, &tgid);
	/*
	 * A process no filter selects is not read again at exec
	 * (its maps, and each new file's symbols and DWARF, kept for the run):
	 * on a busy machine that was every binary run there, 16 MiB in 40 s
	 * of offcpu serve --cgroup beside other builds. One selected later (a
	 * rename, a move into the cgroup) is read at its first stack.
	 */
	if (any_filter && !task_selected(p, true)) /* p is current here */
		return 0;
	__sync_fetch_and_or(&young_bits[OFFCPU_ID_WORD(tgid)], OFFCPU_ID_BIT(tgid));
	task_record(OFFCPU_RECORD_EXEC, tgid, 0);
	return 0;
}

/*
 * A thread of -- COMMAND is timed from its fork; it has not run
 * yet, and its first switch-in ends the wait for a CPU it starts with.
 */
static __always_inline void track_from_fork(struct task_struct *child)
{
	struct wait_start *slot = new_slot(counters_get(), child, PREEMPTIBLE);

	if (!slot)
		return;
	slot->tracked_ns = bpf_ktime_get_ns();
	slot->start_ts_ns = slot->tracked_ns;
	slot->first_run = 1;
}

/*
 * Without alloc_in_scheduler: every slot the scheduler's programs may
 * want of t, made here, at its fork or by the start's iterator, where an
 * allocation may sleep on PREEMPT_RT (a tracepoint's program runs with
 * preemption off, but holds none of the scheduler's locks).
 */
static __always_inline void make_slots(struct offcpu_counters *c, struct task_struct *t,
				       enum counting how)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, t, 0, 0);
	__u32 tgid = t->tgid;

	if (!slot) {
		slot = new_slot(c, t, how);
		if (!slot)
			return;
		slot->made_ahead = 1;
	}
	bpf_task_storage_get(&pending, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	bpf_task_storage_get(&switch_out_stacks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (want_waker_stacks)
		bpf_task_storage_get(&waker_stacks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (bpf_map_lookup_elem(&python_procs, &tgid)) {
		bpf_task_storage_get(&python_threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		bpf_task_storage_get(&python_switch_outs, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
}

/*
 * A new thread's slots when the scheduler's programs may not make them,
 * unless it cannot be selected: a comm filter's thread may be renamed
 * after its fork, -- COMMAND's processes are added to the filter only
 * below, and offcpu's own child (-- COMMAND itself) by user space after
 * its fork.
 */
static __always_inline void make_slots_at_fork(struct task_struct *parent,
					       struct task_struct *child, bool traced)
{
	if (alloc_in_scheduler)
		return;
	if (traced || filter_comms || parent->tgid == self_tgid ||
	    (!filter_tids && task_selected(child, false)))
		make_slots(counters_get(), child, PREEMPTIBLE);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(offcpu_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid;
	__u32 child_tgid = child->tgid;
	bool traced =
	    follow_forks && (pid_bits[OFFCPU_ID_WORD(parent_tgid)] & OFFCPU_ID_BIT(parent_tgid));

	if (traced && account_threads)
		track_from_fork(child);
	/* A new thread shares its process's maps: nothing to tell. */
	if (child->pid != child_tgid) {
		make_slots_at_fork(parent, child, traced);
		return 0;
	}
	python_fork(parent_tgid, child_tgid);
	/* After python_fork(): a Python process's child has the Python slots too. */
	make_slots_at_fork(parent, child, traced);
	/* With -- COMMAND, the processes it forks are traced too. */
	if (traced)
		__sync_fetch_and_or(&pid_bits[OFFCPU_ID_WORD(child_tgid)],
				    OFFCPU_ID_BIT(child_tgid));
	inherit_reads(parent_tgid, child_tgid);
	/*
	 * Under a filter, only a selected parent's fork is
	 * told (parent is current here): user space held every fork on the
	 * machine until its exit record, and an exit record lost (ring buffer
	 * full) kept it until the reaper's second look (offcpu serve --cgroup
	 * beside other sessions' builds: 5 forks a second from outside).
	 */
	if (any_filter && !task_selected(parent, true))
		return 0;
	task_record(OFFCPU_RECORD_FORK, child_tgid, parent_tgid);
	return 0;
}

/*
 * offcpu serve's gauge of the threads off CPU right now, taken
 * at every scrape: no stacks, unlike offcpu_open_waits. Each
 * selected thread whose slot holds a start and that is not on a CPU (a
 * switch-in this kernel never traced leaves a start behind: see
 * unseen_switch_in()) is written out as a struct offcpu_open_wait.
 */
SEC("iter/task")
int offcpu_open_gauge(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_open_wait out = { 0 };
	struct wait_start *slot;

	if (!task)
		return 0;
	slot = bpf_task_storage_get(&inflight, task, 0, 0);
	if (!slot)
		return 0;
	/* Read once, as offcpu_open_waits reads it: a switch-in may clear it meanwhile. */
	out.start_ts_ns = *(volatile __u64 *)&slot->start_ts_ns;
	if (!out.start_ts_ns || BPF_CORE_READ(task, on_cpu))
		return 0;
	out.pid = task->tgid;
	out.tid = task->pid;
	out.state = state_of(slot->prev_state, slot->preempt);
	out.kernel_thread = !!(task->flags & PF_KTHREAD);
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}

/*
 * sched_waking runs in the waker's context (try_to_wake_up(),
 * with the wakee's pi_lock held, interrupts off) for every wakeup on the
 * machine: one task storage lookup, and out, unless the wakee has a wait
 * in flight that no wakeup has ended yet. No clock read: the run-queue
 * time comes from sched_info at the switch-in; only --wakers reads the
 * clock here, to take stacks only for waits already past -m (they can
 * only grow).
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_sched_waking, struct task_struct *p)
{
	struct wait_start *slot = bpf_task_storage_get(&inflight, p, 0, 0);
	struct task_struct *cur;
	struct irq_depth *depth;
	bool in_interrupt;
	__u32 zero = 0;
	bool early;
	__u8 waker;
	__u64 now;

	if (!slot)
		return 0;
	/*
	 * No wait traced yet: the thread is still on its way out
	 * (woken_early()). The latest such waker is the one that counts.
	 */
	early = !slot->start_ts_ns;
	if (!early && slot->waker != OFFCPU_WAKER_NONE)
		return 0;
	depth = bpf_map_lookup_elem(&irq_depths, &zero);
	cur = bpf_get_current_task_btf();
	if (depth && depth->hardirq)
		waker = OFFCPU_WAKER_HARDIRQ;
	else if (depth && depth->softirq && depth->net_rx_for != cur->pid)
		waker = OFFCPU_WAKER_SOFTIRQ;
	else
		waker = OFFCPU_WAKER_TASK;
	in_interrupt = waker != OFFCPU_WAKER_TASK;
	slot->waker_pid = cur->tgid;
	slot->waker_tid = cur->pid;
	slot->waker_cpu = bpf_get_smp_processor_id();
	/* Not _str: comm is always NUL-terminated within its 16 bytes, and no scan is cheaper. */
	bpf_probe_read_kernel(slot->waker_comm, sizeof(slot->waker_comm), cur->comm);
	if (early) {
		/* Never past -m: no stacks. */
		slot->waker_early = waker;
		return 0;
	}
	slot->waker = waker;
	if (!want_waker_stacks)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - slot->start_ts_ns < min_duration_ns)
		return 0;
	if (stack_copy_bytes)
		slot->waker_stack =
		    send_waker_copy(ctx, p, cur, in_interrupt, slot->start_ts_ns, now);
	else
		slot->waker_stack =
		    take_waker_stacks(ctx, p, cur, in_interrupt, slot->start_ts_ns, now);
	return 0;
}

/* Interrupt contexts for sched_waking (struct irq_depth). */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(offcpu_irq_entry)
{
	irq_depth_add(true, 1);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(offcpu_irq_exit)
{
	irq_depth_add(true, -1);
	return 0;
}

/* x86's APIC timer: hrtimer expiry (sleeps, timeouts) runs in it, not in an irq handler. */
SEC("tp_btf/local_timer_entry")
int BPF_PROG(offcpu_local_timer_entry)
{
	irq_depth_add(true, 1);
	return 0;
}

SEC("tp_btf/local_timer_exit")
int BPF_PROG(offcpu_local_timer_exit)
{
	irq_depth_add(true, -1);
	return 0;
}

/*
 * NET_RX raised outside any interrupt: by a thread sending to a local
 * socket (loopback_xmit() -> netif_rx() -> enqueue_to_backlog()), with
 * bottom halves off, so it runs the softirq itself before it can be
 * switched out (or leaves it to ksoftirqd, another task).
 */
SEC("tp_btf/softirq_raise")
int BPF_PROG(offcpu_softirq_raise, unsigned int vec_nr)
{
	struct irq_depth *d;
	__u32 zero = 0;

	if (vec_nr != NET_RX_SOFTIRQ)
		return 0;
	d = bpf_map_lookup_elem(&irq_depths, &zero);
	if (d && !d->hardirq && !d->softirq)
		d->net_rx_raised = bpf_get_current_task_btf()->pid;
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(offcpu_softirq_entry, unsigned int vec_nr)
{
	struct irq_depth *d = irq_depth_add(false, 1);

	if (vec_nr != NET_RX_SOFTIRQ || !d)
		return 0;
	d->net_rx_for = d->net_rx_raised == bpf_get_current_task_btf()->pid ? d->net_rx_raised : 0;
	d->net_rx_raised = 0;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(offcpu_softirq_exit, unsigned int vec_nr)
{
	struct irq_depth *d = irq_depth_add(false, -1);

	if (vec_nr == NET_RX_SOFTIRQ && d)
		d->net_rx_for = 0;
	return 0;
}

/*
 * Waits that have not ended. Two task iterators, run by
 * tracer.c: one at the start dates the waits of the threads already off
 * CPU, so that their end completes them whole; one at the stop (and for
 * offcpu snapshot, or a gauge while recording) reports every selected
 * thread still off CPU with what it has waited so far, its state and both
 * stacks. An iterator runs as offcpu, not as the thread, so the filters
 * are tested on the task (task_selected(t, false)).
 */

/* Set by tracer.c before each run of offcpu_open_waits (enum offcpu_open_mode). */
__u32 open_mode;
/* OFFCPU_OPEN_AT_STOP: when sched_switch was detached, the waits' end. */
__u64 open_stop_ts_ns;

/*
 * The open-wait race: an iterator reads a thread it found off CPU, and the
 * thread may wake and run on another CPU while it does (seen in CI: an open
 * nanosleep's kernel stack without do_nanosleep, its leaf scanned in stack
 * memory the thread was reusing). What a run changes is marked before
 * anything else of the thread is read and compared once its stacks are in:
 *
 *   nvcsw + nivcsw  __schedule() adds one at every switch away from a
 *                   thread (++*switch_count, before context_switch());
 *   on_cpu          set in prepare_task_switch() (prepare_task()) before
 *                   the thread runs, cleared by finish_task() once the
 *                   switch away from it is done, after the count;
 *   its state       a wakeup sets TASK_WAKING, then TASK_RUNNING
 *                   (try_to_wake_up()), before the thread is even queued.
 *
 * A run since the mark shows as on_cpu at the second look, or as a count
 * moved: on_cpu is read first (x86 keeps loads in order; the barriers keep
 * the compiler to it). The count and on_cpu alone still let through about
 * one torn leaf in a hundred snapshots of threads waking every ~150 us
 * beside a system-wide recording (test_open_race.py); with the state, none
 * in 150: a wakeup is seen before the thread can run. Not
 * sched_info.last_arrival: a clock value stamped at switch-ins only, it
 * says nothing of a run still going on, and needs CONFIG_SCHED_INFO.
 * None of it needs a lock.
 */
struct run_mark {
	__u64 switches; /* nvcsw + nivcsw */
	__u32 state;
};

static __always_inline void mark_runs(struct task_struct *t, struct run_mark *m)
{
	m->switches = t->nvcsw + t->nivcsw;
	asm volatile("" ::: "memory");
	m->state = task_state(t);
	asm volatile("" ::: "memory");
}

/* Whether t ran since mark_runs() marked m (t off CPU then, or caught on it by the caller). */
static __always_inline bool ran_since(struct task_struct *t, const struct run_mark *m)
{
	int on_cpu;
	__u32 state;

	asm volatile("" ::: "memory");
	on_cpu = *(volatile int *)&t->on_cpu;
	asm volatile("" ::: "memory");
	state = task_state(t);
	asm volatile("" ::: "memory");
	return on_cpu || state != m->state || t->nvcsw + t->nivcsw != m->switches;
}

/*
 * A blocked thread's state, as its switch-out would have said it: off CPU
 * and runnable (TASK_RUNNING) is preempted, waiting for a CPU.
 */
static __always_inline bool off_cpu_state(struct task_struct *t, __u32 *state, bool *preempt)
{
	if (t->on_cpu || t->exit_state)
		return false;
	*state = task_state(t);
	*preempt = *state == 0;
	return !(*state & TASK_BIT_DEAD) && state_selected(*state, *preempt);
}

/*
 * At the start, after sched_switch is attached. A slot whose start is set
 * already belongs to sched_switch; the compare-and-swap leaves it that
 * way if the thread switched in and out meanwhile (which leaves only its
 * state to a race, for one wait in a blue moon). A thread whose times the
 * kernel does not have (it never ran) stays undated: its end is no_start.
 */
SEC("iter/task")
int offcpu_open_at_start(struct bpf_iter__task *ctx)
{
	struct offcpu_counters *c = counters_get();
	struct task_struct *t = ctx->task;
	struct wait_start *slot;
	struct run_mark mark;
	__u64 start, now;
	__u32 state, tgid;
	bool preempt;

	if (!t || !t->pid || !task_selected(t, false))
		return 0;
	/* Before its state and times are read: see ran_since(). */
	mark_runs(t, &mark);
	if (!off_cpu_state(t, &state, &preempt))
		return 0;
	tgid = t->tgid;
	slot = bpf_task_storage_get(&inflight, t, 0, 0);
	if (slot && slot->start_ts_ns)
		return 0;
	start = departure_ns(t, clock_pair_of(task_cpu_of(t)));
	now = bpf_ktime_get_ns();
	if (!start || (__s64)(now - start) < 0)
		return 0;
	/*
	 * Ran while its times were read (they may be of two runs): it did
	 * so with sched_switch attached, which has its switch-out, or it is
	 * running.
	 */
	if (ran_since(t, &mark))
		return 0;
	if (!slot) {
		slot = new_slot(c, t, PREEMPTIBLE);
		if (!slot)
			return 0;
	}
	slot->prev_state = state;
	slot->preempt = preempt;
	slot->flags = OFFCPU_WAIT_OPEN_BEFORE;
	/* Made ahead by offcpu_make_slots, it is started here, not at a switch-out. */
	slot->made_ahead = 0;
	if (__sync_val_compare_and_swap(&slot->start_ts_ns, 0, start))
		return 0;
	count(c, OFFCPU_CNT_WAITS_STARTED, PREEMPTIBLE);
	count(c, OFFCPU_CNT_OPEN_AT_START, PREEMPTIBLE);
	/* Its process, for tracer.c to have its maps read (OFFCPU_RECORD_RUNNING). */
	if (!(t->flags & PF_KTHREAD))
		bpf_seq_write(ctx->meta->seq, &tgid, sizeof(tgid));
	return 0;
}

/*
 * Without alloc_in_scheduler, at the start, after the fork program is
 * attached (which makes the slots of threads forked since): the slots of
 * every selected thread. A non-sleepable iterator's program runs under
 * rcu_read_lock() and migrate_disable(), which on PREEMPT_RT leave it
 * preemptible: its allocations may sleep.
 */
SEC("iter/task")
int offcpu_make_slots(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t && t->pid && task_selected(t, false))
		make_slots(counters_get(), t, PREEMPTIBLE);
	return 0;
}

/*
 * offcpu snapshot attaches no sched_switch that records waits: only this,
 * for the moment its CPUs take their clock pairs (tracer.c, pair_clocks()).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_pair_clocks, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;

	keep_clock_pair(prev->pid ? prev : next, &now);
	return 0;
}

/*
 * A seq file's buffer is 8 pages (bpf_seq_read()): a record must fit in
 * it whole, so an open wait's stack copy is at most this long.
 */
#define OPEN_COPY_MAX 24576

/* The open-wait iterator's record; one run at a time (tracer.c), and it sleeps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_buf);
} open_bufs SEC(".maps");

/* The Python frames of the open wait being written (python_open_frames()). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_python_record);
} open_python SEC(".maps");

/* A wait and its Python frames go in one element's writes, which must fit a seq buffer. */
_Static_assert(2 * sizeof(struct offcpu_open_header) + COPY_USER_OFF + COPY_DATA_OFF +
		       OPEN_COPY_MAX + sizeof(struct offcpu_python_record) <=
		   8 * 4096,
	       "an open wait with its stack copy and Python frames must fit in a seq buffer");

/*
 * Registers and up to size bytes of t's user stack from its SP at
 * b->bytes[user_off], page by page as send_with_stack_copy() copies; the
 * bytes copied. t is off CPU: its memory is read with
 * bpf_copy_from_user_task(), which may fault pages in, hence iter.s.
 */
static __always_inline __u64 copy_task_stack(struct task_struct *t, struct copy_buf *b,
					     __u32 user_off, __u64 size)
{
	struct offcpu_user_copy *u = (void *)&b->bytes[user_off];
	__u64 len = 0, chunk, sp;
	int i;

	task_user_regs(t, u->regs);
	sp = u->regs[7];
	chunk = COPY_PAGE - (sp & (COPY_PAGE - 1));
	for (i = 0; i < OPEN_COPY_MAX / COPY_PAGE + 1; i++) {
		if (len + chunk > size)
			chunk = size - len;
		if (chunk == 0 || chunk > COPY_PAGE)
			break;
		if (bpf_copy_from_user_task(
			&b->bytes[user_off + COPY_DATA_OFF + (len & (OFFCPU_MAX_STACK_COPY - 1))],
			chunk, (void *)(sp + len), t, 0))
			break;
		len += chunk;
		chunk = COPY_PAGE;
	}
	u->size = len;
	return len;
}

/*
 * fp mode: the frame-pointer walk the kernel does for the current task
 * (perf_callchain_user: the IP, then each frame's return address), over
 * t's memory; then OFFCPU_LEAF_COPY bytes at the SP as fp mode sends them.
 * The record's length.
 */
static __always_inline __u32 walk_task_frames(struct task_struct *t, struct copy_buf *b,
					      __u32 kernel_frames)
{
	struct offcpu_wait_record *r = (void *)b->bytes;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 frame[2], bp, len;
	__u32 n = 1, idx, user_off;
	int i;

	kernel_frames &= OFFCPU_MAX_STACK_DEPTH;
	r->ips[kernel_frames] = BPF_CORE_READ(regs, ip);
	bp = BPF_CORE_READ(regs, bp);
	for (i = 1; i < OFFCPU_MAX_STACK_DEPTH && i < stack_depth; i++) {
		if (!bp || bpf_copy_from_user_task(frame, sizeof(frame), (void *)bp, t, 0) ||
		    !frame[1])
			break;
		idx = kernel_frames + n;
		if (idx >= 2 * OFFCPU_MAX_STACK_DEPTH)
			break;
		r->ips[idx] = frame[1];
		n++;
		if (frame[0] <= bp)
			break;
		bp = frame[0];
	}
	r->user_frames = n;
	r->user_stack = fix_leaf ? OFFCPU_USTACK_TAKEN_LEAF : OFFCPU_USTACK_TAKEN;
	user_off =
	    OFFCPU_WAIT_HEADER_SIZE + ((kernel_frames + n) & (2 * OFFCPU_MAX_STACK_DEPTH + 1)) * 8;
	if (!fix_leaf || user_off > OFFCPU_WAIT_HEADER_SIZE + 2 * OFFCPU_MAX_STACK_DEPTH * 8)
		return OFFCPU_WAIT_HEADER_SIZE + (kernel_frames + n) * 8;
	len = copy_task_stack(t, b, user_off, OFFCPU_LEAF_COPY);
	return user_off + COPY_DATA_OFF + len;
}

/* The stacks of t's open wait into its record at b; the record's length. */
static __always_inline __u64 wait_stacks_into(struct task_struct *t, struct copy_buf *b)
{
	struct offcpu_wait_record *r = (void *)b->bytes;
	__u32 kernel_frames = 0, user_off;
	__u64 size = stack_copy_bytes;

	/* As at a switch-in, with the __sched frames put back; not counted: preemptible. */
	if (want_kernel_stack)
		take_kernel_stack(NULL, r, t, &open_leaf_scans);
	kernel_frames = r->kernel_frames & OFFCPU_MAX_STACK_DEPTH;
	r->kernel_frames = kernel_frames;
	if (!want_user_stack || (t->flags & PF_KTHREAD) || !t->mm)
		return OFFCPU_WAIT_HEADER_SIZE + kernel_frames * 8;
	if (!stack_copy_bytes)
		return walk_task_frames(t, b, kernel_frames);
	if (size > OPEN_COPY_MAX)
		size = OPEN_COPY_MAX;
	user_off = OFFCPU_WAIT_HEADER_SIZE + kernel_frames * 8;
	r->user_stack = OFFCPU_USTACK_COPIED;
	return user_off + COPY_DATA_OFF + copy_task_stack(t, b, user_off, size);
}

/*
 * wait_stacks_into() as a global function, verified apart: the iterator's
 * stack beside the Python walk's (python_open_frames()) would pass the
 * verifier's 512 bytes. 64 bits: the verifier takes a global function's
 * result as such, and a __u32 is bounded on a copy the call does not get.
 */
__noinline __u64 open_wait_stacks(struct task_struct *t __arg_trusted, struct copy_buf *b)
{
	/* A global function's pointers may be NULL, to the verifier. */
	return b ? wait_stacks_into(t, b) : 0;
}

/*
 * One open wait per selected thread off CPU; its start from its slot
 * (exact, or dated at the start), else from the kernel's times. At the
 * stop, a slot whose thread ran since its start is no open wait: the
 * switch-in was hidden (recovered here, as at a switch-out) or came after
 * sched_switch was detached (open at the stop, its stacks gone). Every
 * selected wait is written, a wait outside -m/-M without its stacks:
 * tracer.c counts them, since a record the seq file had no room for is
 * written again by the next read.
 */
static __always_inline int open_waits(struct bpf_iter__task *ctx, bool enriched)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct offcpu_open_header h = {};
	struct offcpu_python_record *py;
	struct offcpu_wait_record *r;
	const struct clock_pair *pair;
	struct wait_start *slot;
	struct copy_buf *b;
	__u64 start = 0, end, arrival;
	struct run_mark mark;
	__u32 state, flags, zero = 0;
	__u64 total;
	bool preempt, stacks = true;
	__u32 py_frames = 0;
	__u64 py_first;

	if (!t || !t->pid || !task_selected(t, false))
		return 0;
	/* Before anything of t is read: see ran_since(). */
	mark_runs(t, &mark);
	end = open_mode == OFFCPU_OPEN_AT_STOP ? open_stop_ts_ns : bpf_ktime_get_ns();
	pair = clock_pair_of(task_cpu_of(t));
	slot = bpf_task_storage_get(&inflight, t, 0, 0);
	/*
	 * Read once: a switch-in (or, at the stop, the exit program's
	 * unseen_switch_in()) may clear it meanwhile, and a start read 0
	 * the second time made a wait as long as the uptime.
	 */
	if (slot)
		start = *(volatile __u64 *)&slot->start_ts_ns;
	if (start) {
		state = slot->prev_state;
		preempt = slot->preempt;
		flags = slot->flags | OFFCPU_WAIT_OPEN_AFTER;
		arrival = arrival_ns(t, pair);
		if (arrival && (__s64)(arrival - start) > 0) {
			if (open_mode != OFFCPU_OPEN_AT_STOP)
				return 0;
			stacks = false;
			if ((__s64)(end - arrival) >= 0) {
				end = arrival;
				flags = slot->flags | OFFCPU_WAIT_RECOVERED;
			}
		} else if (t->on_cpu) {
			return 0;
		}
	} else {
		if (!off_cpu_state(t, &state, &preempt))
			return 0;
		start = departure_ns(t, pair);
		if (!start || (__s64)(end - start) < 0)
			return 0;
		flags = OFFCPU_WAIT_OPEN_AFTER;
		if (open_mode == OFFCPU_OPEN_AT_STOP) {
			/* Began while tracing, unrecorded (the table was full): not dated here. */
			if ((__s64)(start - recording_start_ns) >= 0)
				return 0;
			flags |= OFFCPU_WAIT_OPEN_BEFORE;
		}
	}
	b = bpf_map_lookup_elem(&open_bufs, &zero);
	py = bpf_map_lookup_elem(&open_python, &zero);
	if (!b || !py)
		return 0;
	r = (void *)b->bytes;
	/* The buffer is reused: fill_times_only() zeroes what an open wait does not know. */
	fill_times_only(r, t, task_cpu_of(t), end, end - start, state_of(state, preempt), flags);
	total = OFFCPU_WAIT_HEADER_SIZE;
	if (stacks && r->duration_ns >= min_duration_ns && r->duration_ns <= max_duration_ns) {
		total = enriched ? open_wait_stacks(t, b) : wait_stacks_into(t, b);
		/*
		 * Its Python frames and a rule pack's values, read while it
		 * waits as its stacks are: an open wait still holds what it
		 * blocked under (a PostgreSQL wait event), as rseq_update
		 * finds it when the wait ends.
		 */
		if (enriched && !(t->flags & PF_KTHREAD)) {
			py_first = want_user_stack ? python_open_first(t, r) : 0;
			if (py_first)
				py_frames = python_open_frames(t, py, r, py_first);
			take_open_reads(t, r);
		}
		/*
		 * It ran while its stacks were read: they may be of its run,
		 * or of memory it was rewriting. The wait goes without them,
		 * flagged for tracer.c to count (open_wait_stacks_raced): it
		 * was open when it was dated, so its duration and state stand.
		 */
		if (ran_since(t, &mark)) {
			r->kernel_frames = 0;
			r->user_frames = 0;
			r->user_stack = OFFCPU_USTACK_NONE;
			r->flags &= ~(OFFCPU_WAIT_LEAF_MISSED | OFFCPU_WAIT_PYTHON_FAILED);
			r->flags |= OFFCPU_WAIT_STACKS_RACED;
			total = OFFCPU_WAIT_HEADER_SIZE;
			py_frames = 0;
			r->read_mask = 0;
		}
	}
	if (total > sizeof(b->bytes))
		return 0;
	if (py_frames)
		python_open_write(seq, py);
	h.size = total;
	bpf_seq_write(seq, &h, sizeof(h));
	bpf_seq_write(seq, b->bytes, total);
	return 0;
}

/*
 * With the open waits' Python frames and a rule pack's values: global
 * functions whose task pointer the verifier trusts (arg:trusted) from
 * kernel 6.8 on. tracer.c loads one of the two.
 */
SEC("iter.s/task")
int offcpu_open_waits(struct bpf_iter__task *ctx)
{
	return open_waits(ctx, true);
}

/* Before 6.8: the stacks only, in one function (Debian 12's 6.1 rejects the one above). */
SEC("iter.s/task")
int offcpu_open_waits_plain(struct bpf_iter__task *ctx)
{
	return open_waits(ctx, false);
}
