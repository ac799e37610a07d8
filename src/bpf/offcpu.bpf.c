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
 *
 * This file is that path; the rest is in headers by concern: settings
 * (the const volatile globals), filters, leaf (the kernel leaf),
 * user_stack, python, reads (rule packs), wakeups, objects and
 * kernel_locks (what a wait waited on), clock, lifecycle (exit,
 * exec, fork), sched_waking, open_waits (the iterators) and oncpu (-F's
 * sampler), each .bpf.h.
 * Each is included where its code was: the order of the maps, globals and
 * programs is the object's, and its programs' is the order in which
 * offcpu --version -v lists their tracepoints.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "offcpu.h"
#include "bpf/states.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#include "bpf/settings.bpf.h"

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
 * A slot as the map holds it: the object apart from the start that
 * switch_in() copies onto its stack, where 88 bytes more went past the
 * 512 bytes a program may use with its callees.
 */
struct inflight_slot {
	struct wait_start start;
	struct offcpu_object object; /* of the wait in flight, from its switch-out */
	/*
	 * The kernel lock the thread is contending for now, from
	 * lock:contention_begin to contention_end (kernel_locks.bpf.h); 0: none.
	 */
	__u64 klock_addr;
	__u32 klock_flags;
	__u32 klock_reserved;
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
	__type(value, struct inflight_slot);
} inflight SEC(".maps");

/* Every slot the map hands out is a struct inflight_slot. */
static __always_inline struct offcpu_object *slot_object(struct wait_start *slot)
{
	return &((struct inflight_slot *)slot)->object;
}

__u64 slots_in_use;

#include "bpf/filters.bpf.h"

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

#include "bpf/leaf.bpf.h"

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
 *   offcpu_sample        ONCPU_* (hard-interrupt context: see oncpu.bpf.h)
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
#include "bpf/reads.bpf.h"

#include "bpf/user_stack.bpf.h"

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

#include "bpf/wakeups.bpf.h"
#include "bpf/files.bpf.h"
#include "bpf/objects.bpf.h"
#include "bpf/kernel_locks.bpf.h"

/* When tracing began (tracer.c): at the stop, a thread dated from before it is open at both ends. */
__u64 recording_start_ns;

/*
 * The filter of a wait whose duration is known, a switch-in's or a
 * recovered one (offcpu_filter__judge()), counted: true if the wait goes
 * on. Each drop adds its duration beside its count, and to the thread's
 * dropped_ns (for -- COMMAND's coverage). start_ns is the wait's: of one
 * begun before tracing, the counters have the time since, as the totals
 * do; -m and -M judge it whole.
 */
static __always_inline bool wait_kept(struct offcpu_counters *c, struct wait_start *slot, __u32 tid,
				      __u64 start_ns, __u64 duration_ns, enum counting how)
{
	__u64 counted_ns = offcpu_inside_ns(recording_start_ns, start_ns, duration_ns);
	__u32 v = offcpu_filter__judge(&duration_filter, duration_ns, tid, start_ns, 0);

	if (!v)
		return true;
	if (v & OFFCPU_VERDICT_BELOW_MIN) {
		count(c, OFFCPU_CNT_BELOW_MIN, how);
		add(c, OFFCPU_CNT_BELOW_MIN_NS, counted_ns, how);
	}
	if (v & OFFCPU_VERDICT_SHORT_SAMPLED) {
		count(c, OFFCPU_CNT_SHORT_SAMPLED, how);
		add(c, OFFCPU_CNT_SHORT_SAMPLED_NS, duration_filter.min_duration_ns, how);
	}
	if (v & OFFCPU_VERDICT_ABOVE_MAX) {
		count(c, OFFCPU_CNT_ABOVE_MAX, how);
		add(c, OFFCPU_CNT_ABOVE_MAX_NS, counted_ns, how);
	}
	if (v & OFFCPU_VERDICT_SAMPLED_OUT) {
		count(c, OFFCPU_CNT_SAMPLED_OUT, how);
		add(c, OFFCPU_CNT_SAMPLED_OUT_NS, counted_ns, how);
	}
	if (v & OFFCPU_VERDICT_DROPPED) {
		slot->dropped_ns += duration_ns;
		return false;
	}
	return true;
}

#include "bpf/clock.bpf.h"

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
	 * The same bounds, coin and counters as a switch-in's wait: a short
	 * recovered wait counts below -m with its nanoseconds, and --short
	 * sample's coin may keep it.
	 */
	if (!wait_kept(c, slot, t->pid, slot->start_ts_ns, duration_ns, how))
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
	object_take_at_switch_out(prev, prev_state, preempt, slot_object(slot));
	kernel_lock_take_at_switch_out(prev, prev_state, preempt, (struct inflight_slot *)slot);
	count(c, OFFCPU_CNT_WAITS_STARTED, IN_SWITCH);
	if (want_user_stack && !(prev->flags & PF_KTHREAD) && !user_stack_deferred(prev)) {
		take_switch_out_stack(ctx, prev);
		/* An exiting thread runs no Python code any more. */
		if (!(prev->flags & PF_EXITING))
			python_take_at_switch_out(c, prev, slot->start_ts_ns);
	}
}

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
					const struct wait_start *start,
					const struct offcpu_object *object, __u64 now)
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
	r->object = *object;
	file_take(next, tid, &r->object);
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
				      __u32 tid, const struct wait_start *start,
				      const struct offcpu_object *object, __u64 now)
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
	fill_record(c, r, next, tid, start, object, now);
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

	if (!wait_kept(c, slot, tid, start.start_ts_ns, duration_ns, IN_SWITCH))
		return;
	emit_wait(c, next, tid, &start, slot_object(slot), now);
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

#include "bpf/lifecycle.bpf.h"

#include "bpf/sched_waking.bpf.h"

#include "bpf/open_waits.bpf.h"

#include "bpf/oncpu.bpf.h"
