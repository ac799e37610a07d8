/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel/user boundary of offcpu: the records the BPF side writes into
 * the ring buffer (with the thread state it mapped), the health counter
 * indexes, and the layout of the -p and -t bitmaps user space fills in. Only
 * fixed-width types, enums and defines live here, so the file compiles both
 * against vmlinux.h (BPF) and against the libc headers (user space); what
 * only the BPF side uses is in src/bpf/.
 */
#ifndef OFFCPU_H
#define OFFCPU_H

/* BPF code gets the fixed-width types from vmlinux.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OFFCPU_MAX_STACK_DEPTH 127
#define OFFCPU_COMM_LEN 16

/*
 * -p and -t are bitmaps over every possible ID: PID_MAX_LIMIT is 2^22 on
 * 64-bit kernels (4M IDs, 512 KiB each), so any number of IDs fits and a
 * test is two loads instead of a hash lookup on every switch. ID n is bit
 * OFFCPU_ID_BIT(n) of word OFFCPU_ID_WORD(n). The words are 64-bit: BPF has
 * atomic and/or on 32-bit words only from cpu v3.
 */
#define OFFCPU_ID_BITMAP_WORDS (1 << 16)
#define OFFCPU_ID_WORD(id) (((__u32)(id) >> 6) & (OFFCPU_ID_BITMAP_WORDS - 1))
#define OFFCPU_ID_BIT(id) (1ULL << ((__u32)(id)&63))

/* A wait's thread state, as SPEC.md names them (classify/states.c). */
enum offcpu_state {
	OFFCPU_STATE_INTERRUPTIBLE,
	OFFCPU_STATE_UNINTERRUPTIBLE,
	OFFCPU_STATE_IDLE,
	OFFCPU_STATE_PREEMPTED,
	OFFCPU_STATE_RUNNING,
	OFFCPU_STATE_STOPPED,
	OFFCPU_STATE_TRACED,
	OFFCPU_STATE_PARKED,
	OFFCPU_STATE_OTHER,
	OFFCPU_STATE_COUNT,
};

/*
 * Health counters: every path that drops or discards a wait has one. The BPF
 * side keeps them per CPU; user space sums them and adds its own.
 */
enum offcpu_counter {
	OFFCPU_CNT_SWITCHES,	    /* sched_switch events seen */
	OFFCPU_CNT_WAITS_STARTED,   /* switch-outs recorded in the table */
	OFFCPU_CNT_WAITS_COMPLETED, /* switch-ins that found their start */
	OFFCPU_CNT_NO_START,	    /* selected switch-in without a start */
	OFFCPU_CNT_FILTERED,	    /* switch-outs of unselected tasks/states */
	OFFCPU_CNT_BELOW_MIN,	    /* shorter than --min-duration */
	OFFCPU_CNT_ABOVE_MAX,	    /* longer than --max-duration */
	OFFCPU_CNT_SAMPLED_OUT,	    /* dropped by --sample-rate */
	OFFCPU_CNT_EMITTED,	    /* written into the ring buffer */
	OFFCPU_CNT_TABLE_FULL,	    /* in-flight table had no room */
	OFFCPU_CNT_RINGBUF_FULL,    /* ring buffer had no room: dropped */
	OFFCPU_CNT_KSTACK_FAIL,	    /* kernel stack could not be taken */
	OFFCPU_CNT_USTACK_FAIL,	    /* user stack could not be taken */
	OFFCPU_CNT_USTACK_LOST,	    /* ran user code or exited before we read it */
	OFFCPU_CNT_USTACK_PENDING,  /* parked, user stack not read yet (at stop) */
	OFFCPU_CNT_SWITCH_UNSEEN,   /* ran again, no switch-in seen: wait lost */
	OFFCPU_CNT_USTACK_AT_OUT,   /* no rseq: user stack walked at switch-out */
	/* Issue #16, #17.2: waits dated from the kernel's own bookkeeping. */
	OFFCPU_CNT_SWITCH_RECOVERED, /* switch-in unseen, its time from sched_info.last_arrival */
	OFFCPU_CNT_OPEN_AT_START,    /* off CPU when tracing began, dated (also in waits_started) */
	OFFCPU_CNT_BPF_MAX,
	/* Counted in user space. */
	OFFCPU_CNT_SYMBOL_MISS = OFFCPU_CNT_BPF_MAX, /* frames without a symbol */
	OFFCPU_CNT_PROC_GONE,			     /* process exited before its maps were read */
	OFFCPU_CNT_RINGBUF_UNREAD,		     /* waits left in the ring buffer at stop */
	OFFCPU_CNT_RINGBUF_UNREAD_NS,		     /* their summed duration */
	OFFCPU_CNT_USTACK_CUT_SHORT,		     /* user stack ended before its root */
	OFFCPU_CNT_USTACK_LOOP,	 /* of those, a cycle repeated to the end: cut */
	OFFCPU_CNT_OPEN_AT_STOP, /* issue #16: still off CPU at the stop, emitted as open */
	OFFCPU_CNT_MAX,
};

enum offcpu_user_stack {
	OFFCPU_USTACK_NONE,
	OFFCPU_USTACK_TAKEN,
	/*
	 * The thread blocked again before returning to user space, from the
	 * same user registers: its user stack is the one of its next record.
	 */
	OFFCPU_USTACK_FROM_NEXT,
	/*
	 * --call-graph dwarf: after the kernel addresses, a struct
	 * offcpu_user_copy (the user registers and the top of the user
	 * stack) for user space to unwind; user_frames is 0.
	 */
	OFFCPU_USTACK_COPIED,
	/*
	 * --call-graph fp: user_frames frame-pointer addresses, then a struct
	 * offcpu_user_copy of at most OFFCPU_LEAF_COPY bytes at the SP: with
	 * the leaf's CFI, user space finds the callers the frame chain skips
	 * (a leaf without frame pointers, like libc's system call wrappers).
	 */
	OFFCPU_USTACK_TAKEN_LEAF,
};

/* Bytes at the user SP fp mode copies: a libc wrapper's frames and its caller's. */
#define OFFCPU_LEAF_COPY 256

/* The largest --call-graph dwarf,SIZE (options.h bounds it below this). */
#define OFFCPU_MAX_STACK_COPY 65536

/* The user registers in DWARF order (unwind.h): rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
#define OFFCPU_USER_REGS 17

/*
 * A copy of a thread's user stack, 8-byte aligned in the record: size
 * bytes that were at regs[7] (the SP) and up, copied page by page up to
 * SIZE; a page that could not be read ended the copy.
 */
struct offcpu_user_copy {
	__u64 regs[OFFCPU_USER_REGS];
	__u64 size;
	__u8 data[];
};

enum offcpu_record_type {
	OFFCPU_RECORD_WAIT = 1,
	OFFCPU_RECORD_EXEC = 2, /* a process replaced its image: re-read its maps */
	OFFCPU_RECORD_FORK = 3, /* a new process: it maps what its parent maps */
	OFFCPU_RECORD_EXIT = 4, /* a process is gone: forget its maps */
	/*
	 * Issue #16, from tracer.c, not BPF: a process running before tracing
	 * began, with a wait dated at the start: read its maps now, while it
	 * lives (its wait's record may come after it exited).
	 */
	OFFCPU_RECORD_RUNNING = 5,
};

/*
 * One completed wait. ips[] holds kernel_frames kernel addresses followed by
 * user_frames user addresses, leaf first; only the used part is sent.
 */
struct offcpu_wait_record {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u64 end_ts_ns;
	__u64 duration_ns;
	__u8 state;	 /* enum offcpu_state, from sched_switch's prev_state and preempt */
	__u8 user_stack; /* enum offcpu_user_stack */
	__u8 kernel_frames;
	__u8 user_frames;
	char comm[OFFCPU_COMM_LEN];
	__u8 stack_depth; /* --stack-depth: a stack this deep may have gone on */
	__u8 flags;	  /* issue #16, #17.2: enum offcpu_wait_flags */
	__u8 reserved[2]; /* 0; ips[] 8-byte aligned without hidden padding */
	__u64 ips[2 * OFFCPU_MAX_STACK_DEPTH];
};

/*
 * Issue #16, #17.2: what a wait's record says beyond its two traced
 * switches (struct offcpu_wait_record::flags).
 */
enum offcpu_wait_flags {
	/* Began before tracing did: its start is the kernel's (sched_info, se). */
	OFFCPU_WAIT_OPEN_BEFORE = 1,
	/* Had not ended at the stop (or at a snapshot): its duration so far. */
	OFFCPU_WAIT_OPEN_AFTER = 2,
	/* Its switch-in was never traced: its end is sched_info.last_arrival. */
	OFFCPU_WAIT_RECOVERED = 4,
};

/*
 * Issue #16: the open-wait iterator (offcpu_open_waits) writes each wait
 * record into its seq file after this header: size bytes of record.
 */
struct offcpu_open_header {
	__u32 size;
	__u32 reserved;
};

/* How the open-wait iterator dates and ends the waits it finds. */
enum offcpu_open_mode {
	/* Now (offcpu snapshot, a gauge while recording): slot, else the kernel's times. */
	OFFCPU_OPEN_NOW,
	/* At the stop, sched_switch detached: the waits of the slots, ended at open_stop_ts_ns. */
	OFFCPU_OPEN_AT_STOP,
};

/*
 * OFFCPU_TEST_MEASURE_CLOCK: the error of the kernel's times converted to
 * offcpu's clock, against the traced switches (bpf's clock_errors).
 */
enum offcpu_clock_error_kind {
	OFFCPU_CLOCK_ERR_ARRIVAL,    /* a switch-in from sched_info.last_arrival */
	OFFCPU_CLOCK_ERR_DEPARTURE,  /* a switch-out from last_arrival + the run's length */
	OFFCPU_CLOCK_ERR_EXEC_START, /* a switch-out from se.exec_start (task clock) */
	OFFCPU_CLOCK_ERR_KINDS,
};

struct offcpu_clock_error {
	__u64 n;
	__u64 sum_abs_ns;
	__u64 max_abs_ns;
	__u64 sum_ns; /* signed, wrapped */
	__u64 sum_wait_ns;
	__u64 over_1ms;	 /* estimates off by more than 1 ms */
	__u64 over_10ms; /* ... by more than 10 ms */
	__u64 worst_tid; /* the thread of max_abs_ns */
};

#define OFFCPU_WAIT_HEADER_SIZE __builtin_offsetof(struct offcpu_wait_record, ips)

/* Process lifetime, so exited processes are symbolized and then forgotten. */
struct offcpu_task_record {
	__u32 type;
	__u32 pid;
	__u32 parent_pid; /* OFFCPU_RECORD_FORK only */
};

struct offcpu_counters {
	__u64 value[OFFCPU_CNT_BPF_MAX];
};

#endif
