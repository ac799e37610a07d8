/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel/user boundary of offcpu: the records the BPF side writes into
 * the ring buffer, the health counter indexes, and the thread-state mapping.
 * Only fixed-width types, enums and defines live here, so the file compiles
 * both against vmlinux.h (BPF) and against the libc headers (user space).
 */
#ifndef OFFCPU_H
#define OFFCPU_H

/* BPF code gets the fixed-width types from vmlinux.h. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define OFFCPU_MAX_STACK_DEPTH 127
#define OFFCPU_COMM_LEN 16

/* Bits of task_struct::__state (include/linux/sched.h); stable since 2.6. */
#define OFFCPU_TASK_INTERRUPTIBLE 0x0001
#define OFFCPU_TASK_UNINTERRUPTIBLE 0x0002
#define OFFCPU_TASK_STOPPED 0x0004
#define OFFCPU_TASK_TRACED 0x0008
#define OFFCPU_TASK_PARKED 0x0040
#define OFFCPU_TASK_NOLOAD 0x0400
#define OFFCPU_TASK_RTLOCK_WAIT 0x1000

/*
 * -p and -t are bitmaps over every possible ID: PID_MAX_LIMIT is 2^22 on
 * 64-bit kernels (4M IDs, 512 KiB each), so any number of IDs fits and a
 * test is two loads instead of a hash lookup on every switch.
 */
#define OFFCPU_ID_BITMAP_WORDS (1 << 16)

static inline unsigned int offcpu_id_word(unsigned int id)
{
	return (id >> 6) & (OFFCPU_ID_BITMAP_WORDS - 1);
}

/* 64-bit words: BPF has atomic and/or on 32-bit words only from cpu v3. */
static inline __u64 offcpu_id_bit(unsigned int id)
{
	return 1ULL << (id & 63);
}

/* task_struct::flags bit of kernel threads. */
#define OFFCPU_PF_KTHREAD 0x00200000

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
 * Maps sched_switch's prev_state and preempt flag to a thread state. A
 * preempted task may still carry a sleeping state (it was preempted between
 * set_current_state() and schedule()), but it stays runnable, so the preempt
 * flag wins. TASK_IDLE is UNINTERRUPTIBLE|NOLOAD: NOLOAD is above the 0xff
 * mask, so it is tested first. PREEMPT_RT's rtlock waiters sleep with only
 * TASK_RTLOCK_WAIT set, which the mask would turn into "running".
 */
static inline enum offcpu_state offcpu_state_of(unsigned int prev_state, int preempt)
{
	unsigned int low = prev_state & 0xff;

	if (preempt)
		return OFFCPU_STATE_PREEMPTED;
	if ((prev_state & (OFFCPU_TASK_UNINTERRUPTIBLE | OFFCPU_TASK_NOLOAD)) ==
	    (OFFCPU_TASK_UNINTERRUPTIBLE | OFFCPU_TASK_NOLOAD))
		return OFFCPU_STATE_IDLE;
	if (prev_state & OFFCPU_TASK_RTLOCK_WAIT)
		return OFFCPU_STATE_UNINTERRUPTIBLE;
	if (low == 0)
		return OFFCPU_STATE_RUNNING;
	if (low & OFFCPU_TASK_INTERRUPTIBLE)
		return OFFCPU_STATE_INTERRUPTIBLE;
	if (low & OFFCPU_TASK_UNINTERRUPTIBLE)
		return OFFCPU_STATE_UNINTERRUPTIBLE;
	if (low & OFFCPU_TASK_STOPPED)
		return OFFCPU_STATE_STOPPED;
	if (low & OFFCPU_TASK_TRACED)
		return OFFCPU_STATE_TRACED;
	if (low & OFFCPU_TASK_PARKED)
		return OFFCPU_STATE_PARKED;
	return OFFCPU_STATE_OTHER;
}

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
	OFFCPU_CNT_BPF_MAX,
	/* Counted in user space. */
	OFFCPU_CNT_SYMBOL_MISS = OFFCPU_CNT_BPF_MAX, /* frames without a symbol */
	OFFCPU_CNT_PROC_GONE,			     /* process exited before its maps were read */
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
};

enum offcpu_record_type {
	OFFCPU_RECORD_WAIT = 1,
	OFFCPU_RECORD_EXEC = 2, /* a process replaced its image: re-read its maps */
	OFFCPU_RECORD_FORK = 3, /* a new process: it maps what its parent maps */
	OFFCPU_RECORD_EXIT = 4, /* a process is gone: forget its maps */
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
	__u32 prev_state;
	__u8 preempt;
	__u8 user_stack; /* enum offcpu_user_stack */
	__u8 kernel_frames;
	__u8 user_frames;
	char comm[OFFCPU_COMM_LEN];
	__u64 ips[2 * OFFCPU_MAX_STACK_DEPTH];
};

#define OFFCPU_WAIT_HEADER_SIZE __builtin_offsetof(struct offcpu_wait_record, ips)

/* Process lifetime, so exited processes are symbolized and then forgotten. */
struct offcpu_task_record {
	__u32 type;
	__u32 pid;
	__u32 parent_pid; /* OFFCPU_RECORD_FORK only */
};

/* A thread's in-flight slot, in its task local storage; start_ts_ns 0: none. */
struct offcpu_start {
	__u64 start_ts_ns;
	__u32 prev_state;
	__u32 preempt;
};

struct offcpu_counters {
	__u64 value[OFFCPU_CNT_BPF_MAX];
};

#endif
