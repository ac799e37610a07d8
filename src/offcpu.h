/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel/user boundary of offcpu: the records the BPF side writes into
 * the ring buffer (with the thread state it mapped), the health counter
 * indexes, and the layout of the -p and -t bitmaps user space fills in. Only
 * fixed-width types, enums, defines and the functions both sides must
 * compute alike (offcpu_python_names, the duration filter) live here, so
 * the file compiles both against vmlinux.h (BPF) and against the libc
 * headers (user space); what only the BPF side uses is in src/bpf/.
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

/* A wait's thread state, as offcpu.1 names them (classify/states.c). */
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
	/* sched_switch, at every switch. */
	OFFCPU_CNT_SWITCHES, /* sched_switch events seen */
	/* The switch-out: the filters, the slot, a hidden switch-in found there or at exit. */
	OFFCPU_CNT_FILTERED,	     /* switch-outs of unselected tasks/states */
	OFFCPU_CNT_WAITS_STARTED,    /* switch-outs recorded in the table */
	OFFCPU_CNT_TABLE_FULL,	     /* in-flight table had no room */
	OFFCPU_CNT_SLOT_NOT_MADE,    /* PREEMPT_RT: no slot made ahead (alloc_in_scheduler) */
	OFFCPU_CNT_SWITCH_UNSEEN,    /* ran again, no switch-in seen: wait lost */
	OFFCPU_CNT_SWITCH_RECOVERED, /* switch-in unseen, its time from sched_info.last_arrival */
	OFFCPU_CNT_PY_WALKS_AT_OUT,  /* no rseq: switch-outs whose Python frames were walked */
	/*
	 * The switch-in: -m, --short sample, -M, --sample-rate in that order,
	 * each drop's summed nanoseconds beside its count (of a short wait the
	 * coin kept, its estimate: one -m); then what the record takes.
	 */
	OFFCPU_CNT_WAITS_COMPLETED,  /* switch-ins that found their start */
	OFFCPU_CNT_NO_START,	     /* selected switch-in without a start */
	OFFCPU_CNT_BELOW_MIN,	     /* shorter than --min-duration */
	OFFCPU_CNT_BELOW_MIN_NS,     /* every wait below -m, kept by --short sample or not */
	OFFCPU_CNT_SHORT_SAMPLED,    /* --short sample: below -m, kept with p = duration/min */
	OFFCPU_CNT_SHORT_SAMPLED_NS, /* their estimated total: -m each */
	OFFCPU_CNT_ABOVE_MAX,	     /* longer than --max-duration */
	OFFCPU_CNT_ABOVE_MAX_NS,
	OFFCPU_CNT_SAMPLED_OUT, /* dropped by --sample-rate */
	OFFCPU_CNT_SAMPLED_OUT_NS,
	OFFCPU_CNT_KSTACK_FAIL,	  /* kernel stack could not be taken */
	OFFCPU_CNT_WAKER_UNSEEN,  /* a blocked wait sent without the wakeup that ended it */
	OFFCPU_CNT_USTACK_AT_OUT, /* no rseq: user stack walked at switch-out */
	OFFCPU_CNT_PY_AT_OUT,	  /* waits sent with the Python frames of their switch-out */
	/* The wait sent: at its switch-in, by rseq_update (the user stack), at exit or exec. */
	OFFCPU_CNT_EMITTED,	    /* written into the ring buffer */
	OFFCPU_CNT_RINGBUF_FULL,    /* ring buffer had no room: dropped */
	OFFCPU_CNT_RINGBUF_FULL_NS, /* the durations of the wait records dropped */
	OFFCPU_CNT_USTACK_FAIL,	    /* user stack could not be taken */
	OFFCPU_CNT_USTACK_LOST,	    /* ran user code or exited before we read it */
	OFFCPU_CNT_USTACK_PENDING,  /* parked, user stack not read yet (at stop) */
	OFFCPU_CNT_PY_CUT_SHORT,    /* Python frame chain longer than OFFCPU_PY_MAX_FRAMES: cut */
	/* Python frames not sent: ring buffer full, a read failed at switch-out. */
	OFFCPU_CNT_PY_FAIL,
	/* sched_waking. */
	OFFCPU_CNT_WAKER_STACKS,     /* --wakers: waker stacks taken at a wakeup */
	OFFCPU_CNT_WAKER_STACK_FAIL, /* --wakers: waker stack could not be taken or sent */
	/* The open-wait iterator at the start. */
	OFFCPU_CNT_OPEN_AT_START, /* off CPU when tracing began, dated (also in waits_started) */
	/* The on-CPU sampler (-F). */
	OFFCPU_CNT_ONCPU_SAMPLES,    /* samples written into the ring buffer */
	OFFCPU_CNT_ONCPU_IDLE,	     /* samples of an idle CPU: counted, not sent */
	OFFCPU_CNT_ONCPU_FILTERED,   /* samples of threads the filters leave out */
	OFFCPU_CNT_ONCPU_DROPPED,    /* ring buffer had no room: dropped */
	OFFCPU_CNT_ONCPU_DROPPED_NS, /* the CPU time they stood for */
	OFFCPU_CNT_ONCPU_STACK_FAIL, /* samples sent without a stack that could not be taken */
	OFFCPU_CNT_BPF_MAX,
	/* User space. The tracer: its start, the ring buffer and the open waits at the stop. */
	OFFCPU_CNT_FEATURES_MISSING = OFFCPU_CNT_BPF_MAX, /* kernel features gone without */
	OFFCPU_CNT_RINGBUF_UNREAD,    /* waits left in the ring buffer at stop */
	OFFCPU_CNT_RINGBUF_UNREAD_NS, /* their summed duration */
	OFFCPU_CNT_ONCPU_UNREAD,      /* -F: samples left in the ring buffer at stop */
	OFFCPU_CNT_ONCPU_UNREAD_NS,   /* the CPU time they stood for */
	OFFCPU_CNT_OPEN_AT_STOP,      /* Still off CPU at the stop, emitted as open */
	OFFCPU_CNT_OPEN_STACKS_RACED, /* open waits whose thread ran while their stacks were read */
	/* The collector: records into waits, and the processes and threads it holds. */
	OFFCPU_CNT_KERNEL_LEAF_MISSED, /* kernel stack without its __sched frames (LEAF_MISSED) */
	/* What a wait waited on: a read its name or holder needed failed (src/objects/). */
	OFFCPU_CNT_OBJECT_FAILURES,
	OFFCPU_CNT_WAKER_STACK_UNMATCHED, /* Waker stacks whose wait never came */
	OFFCPU_CNT_PROCESSES_REAPED,	  /* freed by a look, their exit record lost */
	/* What exited threads left for a next record that never came, freed by a look. */
	OFFCPU_CNT_THREAD_LEFTOVERS_REAPED,
	/* The symbolizer and the user stack's unwinding. */
	OFFCPU_CNT_SYMBOL_MISS,	     /* frames without a symbol */
	OFFCPU_CNT_PROC_GONE,	     /* process exited before its maps were read */
	OFFCPU_CNT_USTACK_CUT_SHORT, /* user stack ended before its root */
	OFFCPU_CNT_CFI_REJECTED,     /* of those, cut at CFI outside the checked bounds */
	OFFCPU_CNT_USTACK_LOOP,	     /* of those, a cycle repeated to the end: cut */
	OFFCPU_CNT_PY_UNNAMED, /* Python frames whose code object could not be read or named */
	/* The profile: -- COMMAND threads' life that nothing accounts for. */
	OFFCPU_CNT_UNACCOUNTED_NS,
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

/*
 * What a rule pack's `read` lines take from a matched process's
 * memory when one of its waits reaches rseq_update (src/classify/reads.h).
 * Value i is the width-byte integer at addr[i] or, with deref, at the
 * pointer stored there; addresses are the process's own (load base
 * applied). A process has an entry only if user space matched it; its
 * forks inherit it.
 */
#define OFFCPU_MAX_READS 4
/* A text read (the statement being executed): up to this many bytes with its NUL. */
#define OFFCPU_READ_STR_LEN 64

struct offcpu_reads {
	__u64 addr[OFFCPU_MAX_READS];
	__u8 width[OFFCPU_MAX_READS];  /* 1, 2, 4 or 8; 0: no read i */
	__u8 deref[OFFCPU_MAX_READS];  /* 1: addr[i] holds a pointer to the value */
	__u8 string[OFFCPU_MAX_READS]; /* 1: the value is text, into read_str (one a process) */
};

enum offcpu_record_type {
	OFFCPU_RECORD_WAIT = 1,
	OFFCPU_RECORD_EXEC = 2,	 /* a process replaced its image: re-read its maps */
	OFFCPU_RECORD_FORK = 3,	 /* a new process: it maps what its parent maps */
	OFFCPU_RECORD_EXIT = 4,	 /* a process is gone: forget its maps */
	OFFCPU_RECORD_WAKER = 5, /* --wakers: the waker's stacks of the wait that follows */
	/* A thread of -- COMMAND exited. */
	OFFCPU_RECORD_THREAD = 6,
	OFFCPU_RECORD_PYTHON = 7, /* A wait's Python frames, sent right before it */
	/*
	 * From tracer.c, not BPF: a process running before tracing
	 * began, with a wait dated at the start: read its maps now, while it
	 * lives (its wait's record may come after it exited).
	 */
	OFFCPU_RECORD_RUNNING = 8,
	/*
	 * -F: the on-CPU sampler's, laid out as a wait: end_ts_ns is when
	 * it was taken, duration_ns the CPU time it stands for (the
	 * period), state OFFCPU_STATE_RUNNING; no waker, run queue or flags.
	 */
	OFFCPU_RECORD_ONCPU = 9,
};

/* Who ended a wait. */
enum offcpu_waker {
	OFFCPU_WAKER_NONE,    /* no wakeup seen: preempted, running, or woken before tracing */
	OFFCPU_WAKER_TASK,    /* a task woke it: waker_pid/tid/comm */
	OFFCPU_WAKER_HARDIRQ, /* an interrupt handler did; waker_* ran beneath it */
	OFFCPU_WAKER_SOFTIRQ, /* a softirq did (timers, network receive, block completion) */
};

/*
 * What a wait's system call waited on (struct offcpu_wait_record::object),
 * taken at its switch-out into a sleep: the call, its first three
 * arguments from the saved user registers (rdi, rsi, rdx), and the user
 * memory around the address they name: for a futex, the bytes from
 * OFFCPU_OBJECT_BEFORE before the futex word, where glibc keeps the lock's
 * owner; for a sleep, the requested timespec. The window ends at the
 * address's page: window_len may be short of what was asked, and is 0 when
 * nothing could be read. User space names the object (src/objects/).
 */
/*
 * The x86_64 system calls (arch/x86/entry/syscalls/syscall_64.tbl, a
 * stable ABI) whose number struct offcpu_object::syscall carries and
 * user space names an object by: defined once for both sides.
 */
#define OFFCPU_NR_NANOSLEEP 35
#define OFFCPU_NR_WAIT4 61
#define OFFCPU_NR_FCNTL 72
#define OFFCPU_NR_FLOCK 73
#define OFFCPU_NR_FUTEX 202
#define OFFCPU_NR_CLOCK_NANOSLEEP 230
#define OFFCPU_NR_WAITID 247
#define OFFCPU_NR_FUTEX_WAITV 449

#define OFFCPU_OBJECT_WINDOW 48
#define OFFCPU_OBJECT_BEFORE 16

/*
 * The file block of struct offcpu_object: for a wait in a call on one fd
 * (read, recvmsg, accept, epoll_wait, poll on one fd...), the struct file
 * that fd held, read from the thread's file table at its switch-in, only
 * for the waits that passed (it has not run since it blocked: its saved
 * registers still hold the call's arguments). The fd is the thread's only
 * while it waits: user space names the file by what it is (inode, device,
 * socket addresses), and trusts /proc/PID/task/TID/fd/FD only where the
 * path it gives has this inode on this device.
 */
#define OFFCPU_FILE_DNAME_LEN 16

struct offcpu_file {
	__u8 taken;	     /* 0: not a call on one fd, or the fd held no file */
	__u8 sock_state;     /* skc_state (TCP_LISTEN...) */
	__u16 sock_family;   /* skc_family: AF_INET, AF_INET6, AF_UNIX...; 0: not a socket */
	__u16 sock_type;     /* struct socket's type: SOCK_STREAM, SOCK_DGRAM... */
	__u16 sock_protocol; /* sk_protocol: IPPROTO_TCP, IPPROTO_UDP... */
	__u32 tid;	     /* whose file table: /proc/PID/task/TID/fd/FD */
	__u32 fd;
	__u32 dev;	  /* i_sb->s_dev, the kernel's encoding: major << 20 | minor */
	__u32 mode;	  /* i_mode: S_IFIFO, S_IFSOCK, S_IFREG... */
	__u64 ino;	  /* i_ino */
	__u64 magic;	  /* i_sb->s_magic: PIPEFS_MAGIC tells a pipe from a FIFO */
	__u16 local_port; /* skc_num, host order */
	__u16 peer_port;  /* skc_dport, made host order */
	__u32 reserved;
	__u8 local_addr[16]; /* skc_rcv_saddr (4 bytes) or skc_v6_rcv_saddr */
	__u8 peer_addr[16];  /* skc_daddr or skc_v6_daddr */
	/* An anonymous inode's dentry name: "[eventfd]", "[eventpoll]", "[timerfd]"... */
	char dname[OFFCPU_FILE_DNAME_LEN];
};

/*
 * lock:contention_begin's flags (include/trace/events/lock.h): what kind
 * of lock its first argument is. 0 is a semaphore.
 */
#define OFFCPU_LCB_F_SPIN 1
#define OFFCPU_LCB_F_READ 2
#define OFFCPU_LCB_F_WRITE 4
#define OFFCPU_LCB_F_RT 8
#define OFFCPU_LCB_F_PERCPU 16
#define OFFCPU_LCB_F_MUTEX 32

#define OFFCPU_KLOCK_CACHE_LEN 32

/* What the lock says of its holder (struct offcpu_kernel_lock::holder). */
enum offcpu_klock_holder {
	OFFCPU_KLOCK_HOLDER_NONE,   /* the lock records none: free, reader-owned, a percpu-rwsem */
	OFFCPU_KLOCK_HOLDER_TASK,   /* holder_* are the owner's */
	OFFCPU_KLOCK_HOLDER_UNREAD, /* the owner or its task could not be read */
};

/* Where the slab cache of the lock's address was looked for (::cache_state). */
enum offcpu_klock_cache {
	OFFCPU_KLOCK_CACHE_UNKNOWN, /* no bpf_get_kmem_cache() on this kernel (before 6.13) */
	OFFCPU_KLOCK_CACHE_NONE,    /* not in a slab object: a global, a stack, a page */
	OFFCPU_KLOCK_CACHE_NAMED,   /* cache holds its name */
	OFFCPU_KLOCK_CACHE_UNREAD,  /* in one, whose name could not be read */
};

/*
 * A wait in a kernel lock's slow path (rwsem_down_write_slowpath,
 * __mutex_lock...): the lock the thread's last lock:contention_begin that
 * was not a spin named, still not ended at its switch-out into a sleep,
 * and what the lock and the slab it is in said then. The owner is read in
 * BPF: user space cannot follow a task pointer.
 */
struct offcpu_kernel_lock {
	__u8 taken;	  /* 0: the wait was in no kernel lock's slow path; the rest is 0 */
	__u8 mmap_lock;	  /* addr is the waiter's own mm's mmap_lock */
	__u8 holder;	  /* enum offcpu_klock_holder */
	__u8 cache_state; /* enum offcpu_klock_cache */
	__u32 flags;	  /* OFFCPU_LCB_F_* */
	__u64 addr;
	__u32 holder_pid;
	__u32 holder_tid;
	char holder_comm[OFFCPU_COMM_LEN];
	char cache[OFFCPU_KLOCK_CACHE_LEN];
};

struct offcpu_object {
	__u8 taken;	   /* 0: not in a call that names an object; the rest is 0 */
	__u8 restarted;	   /* a timed futex wait back as restart_syscall, after a signal */
	__u16 window_len;  /* bytes read at window_addr */
	__u32 syscall;	   /* x86_64 number: futex for a restarted futex wait */
	__u64 args[3];	   /* rdi, rsi, rdx at the call */
	__u64 window_addr; /* user address of window[0] */
	__u8 window[OFFCPU_OBJECT_WINDOW];
	/* The file block (files.bpf.h): the file a call on one fd waited on. */
	struct offcpu_file file;
	/* The kernel lock, beside the system call's: more specific where both are. */
	struct offcpu_kernel_lock kernel_lock;
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
	__u8 flags;	  /* Enum offcpu_wait_flags */
	__u8 reserved[2]; /* 0; ips[] 8-byte aligned without hidden padding */
	/* The thread's cgroup v2 (its kernfs node id, the directory's inode). */
	__u64 cgroup_id;
	/* Values a rule pack's `read` lines took from the process at block time. */
	__u32 read_mask; /* bit i: read_values[i] was read */
	__u32 read_reserved;
	__u64 read_values[OFFCPU_MAX_READS];
	char read_str[OFFCPU_READ_STR_LEN]; /* a text read; read_mask says whether */
	/* End of the rule packs' reads. */
	/* Who ended the wait, and how long it then waited for a CPU. */
	__u64 runq_ns;	 /* wakeup to switch-in; the whole wait for preempted and running */
	__u32 waker_pid; /* the waking task, or the task an interrupt interrupted */
	__u32 waker_tid;
	char waker_comm[OFFCPU_COMM_LEN];
	__u8 waker;	  /* enum offcpu_waker */
	__u8 runq_known;  /* 0: this kernel keeps no sched_info; runq_ns is 0 */
	__u8 waker_stack; /* an OFFCPU_RECORD_WAKER with the waker's stacks came before it */
	__u8 reserved15;
	__u32 waker_cpu; /* the CPU sched_waking ran on */
	struct offcpu_object object;
	__u64 ips[2 * OFFCPU_MAX_STACK_DEPTH];
};

/*
 * What a wait's record says beyond its two traced
 * switches (struct offcpu_wait_record::flags).
 */
enum offcpu_wait_flags {
	/* Began before tracing did: its start is the kernel's (sched_info, se). */
	OFFCPU_WAIT_OPEN_BEFORE = 1,
	/* Had not ended at the stop (or at a snapshot): its duration so far. */
	OFFCPU_WAIT_OPEN_AFTER = 2,
	/* Its switch-in was never traced: its end is sched_info.last_arrival. */
	OFFCPU_WAIT_RECOVERED = 4,
	/* Open-wait race: it ran while the iterator read its stacks, sent without them. */
	OFFCPU_WAIT_STACKS_RACED = 8,
	/*
	 * Its kernel stack came without the __sched frames that
	 * bpf_get_task_stack() drops (do_nanosleep, mutex_lock...): they were
	 * looked for in the task's stack memory and not found.
	 */
	OFFCPU_WAIT_LEAF_MISSED = 16,
	/*
	 * An open wait of a process whose Python frames are walked: a read
	 * of them failed, and the wait went without them.
	 */
	OFFCPU_WAIT_PYTHON_FAILED = 32,
};

/*
 * -m, -M, --short sample and --sample-rate, as set at load: the BPF side
 * reads them from its one const volatile copy (settings.bpf.h), user space
 * from the tracer's, and both judge a wait with offcpu_filter__judge().
 */
struct offcpu_filter {
	__u64 min_duration_ns;
	__u64 max_duration_ns;
	__u32 sample_rate;
	/* Brings min below 2^32 for the short coin (offcpu_filter__judge). */
	__u32 short_shift;
	__u8 short_sample;
	__u8 reserved[7];
};

/* What offcpu_filter__judge() found of a wait: bits, 0 for a wait kept untouched. */
enum offcpu_verdict {
	OFFCPU_VERDICT_BELOW_MIN = 1,	  /* shorter than -m: counted below it */
	OFFCPU_VERDICT_SHORT_SAMPLED = 2, /* of those, kept by --short sample's coin */
	OFFCPU_VERDICT_ABOVE_MAX = 4,	  /* longer than -M */
	OFFCPU_VERDICT_SAMPLED_OUT = 8,	  /* not drawn by --sample-rate */
	OFFCPU_VERDICT_DROPPED = 16,	  /* not sent on */
};

/*
 * A wait's coin, from the wait alone (murmur3's 64-bit finalizer over its
 * thread and start): the same wait gets the same verdict wherever it is
 * judged, and however often (the open-wait iterator's seq file runs it
 * again for a record it had no room for). A few ALU operations, cheaper
 * than a helper call such as bpf_get_prandom_u32(). The start's nanoseconds
 * are the entropy; the two coins take the two halves.
 */
static inline __attribute__((always_inline)) __u64 offcpu_wait_coin(__u32 tid, __u64 start_ts_ns)
{
	__u64 x = start_ts_ns ^ ((__u64)tid << 32);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * The one duration filter: -m, --short sample's coin, -M, --sample-rate,
 * in that order, stopping at the first drop; enum offcpu_verdict bits. A
 * wait still open (OFFCPU_WAIT_OPEN_AFTER in flags) has no duration yet to
 * toss either coin on: below -m it is dropped, and --sample-rate never
 * draws it (every one is written, and it weighs once). The short coin
 * keeps with probability d / min without a division: r * (min >> shift) <
 * (d >> shift) << 32 for a 32-bit r. f is volatile for the BPF side, whose
 * settings the compiler must read where they are used (and the verifier
 * then prunes what they turn off): each is read only on the branch that
 * needs it, as is the coin, so a wait kept costs two compares. Always
 * inlined: clang made it a BPF subprogram, a call on every switch-in.
 */
static inline __attribute__((always_inline)) __u32
offcpu_filter__judge(const volatile struct offcpu_filter *f, __u64 duration_ns, __u32 tid,
		     __u64 start_ts_ns, __u32 flags)
{
	__u32 open = flags & OFFCPU_WAIT_OPEN_AFTER;

	/* Each outcome a constant: inlined, BPF's counting folds into the branch that found it. */
	if (duration_ns < f->min_duration_ns) {
		if (!f->short_sample || open ||
		    (offcpu_wait_coin(tid, start_ts_ns) >> 32) *
			    (f->min_duration_ns >> f->short_shift) >=
			(duration_ns >> f->short_shift) << 32)
			return OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_DROPPED;
		if (duration_ns > f->max_duration_ns)
			return OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_SHORT_SAMPLED |
			       OFFCPU_VERDICT_ABOVE_MAX | OFFCPU_VERDICT_DROPPED;
		if (f->sample_rate > 1 &&
		    (__u32)offcpu_wait_coin(tid, start_ts_ns) % f->sample_rate)
			return OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_SHORT_SAMPLED |
			       OFFCPU_VERDICT_SAMPLED_OUT | OFFCPU_VERDICT_DROPPED;
		return OFFCPU_VERDICT_BELOW_MIN | OFFCPU_VERDICT_SHORT_SAMPLED;
	}
	if (duration_ns > f->max_duration_ns)
		return OFFCPU_VERDICT_ABOVE_MAX | OFFCPU_VERDICT_DROPPED;
	if (!open && f->sample_rate > 1 &&
	    (__u32)offcpu_wait_coin(tid, start_ts_ns) % f->sample_rate)
		return OFFCPU_VERDICT_SAMPLED_OUT | OFFCPU_VERDICT_DROPPED;
	return 0;
}

/*
 * Of a wait begun before the recording (recording_start_ns; 0: none, a
 * snapshot), the part since, which the counters' _ns companions add, as
 * the totals do; else its duration.
 */
static inline __attribute__((always_inline)) __u64
offcpu_inside_ns(__u64 recording_start_ns, __u64 start_ts_ns, __u64 duration_ns)
{
	__u64 before = recording_start_ns - start_ts_ns;

	return (__s64)before > 0 && before < duration_ns ? duration_ns - before : duration_ns;
}

/*
 * The open-wait iterator (offcpu_open_waits) writes each wait
 * record into its seq file after this header: size bytes of record. A
 * wait's Python frames, when its process's are walked, come right before
 * it the same way: an offcpu_python_record of size bytes.
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
 * --measure-clock: the error of the kernel's times converted to offcpu's
 * clock, against the traced switches (bpf's clock_errors).
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

/*
 * What the open_waits task iterator writes for each selected
 * thread off CPU now (its slot holds a start), for offcpu serve's gauge.
 */
struct offcpu_open_wait {
	__u32 pid;
	__u32 tid;
	__u64 start_ts_ns; /* CLOCK_MONOTONIC at its switch-out */
	__u32 state;	   /* enum offcpu_state */
	__u32 kernel_thread;
};

/*
 * --wakers: the waker's kernel and user stacks at the wakeup of the wait of
 * tid that began at start_ts_ns (its record's end_ts_ns - duration_ns),
 * leaf first: kernel_frames addresses, then as user_stack says either
 * user_frames addresses by frame pointers (OFFCPU_USTACK_TAKEN, sent at the
 * wakee's switch-in, just before its wait) or a struct offcpu_user_copy
 * after the kernel frames, user_frames 0 (OFFCPU_USTACK_COPIED, --call-graph
 * dwarf, sent at the wakeup itself). pid is the waker's process, which its
 * user addresses belong to; ts_ns the wakeup.
 */
struct offcpu_waker_record {
	__u32 type;
	__u32 pid;
	__u32 tid; /* the wakee */
	__u8 kernel_frames;
	__u8 user_frames;
	__u8 user_stack;  /* enum offcpu_user_stack: NONE, TAKEN or COPIED */
	__u8 stack_depth; /* --stack-depth: the unwind of a copy stops there */
	__u64 start_ts_ns;
	__u64 ts_ns;
	__u64 ips[2 * OFFCPU_MAX_STACK_DEPTH];
};

#define OFFCPU_WAKER_HEADER_SIZE __builtin_offsetof(struct offcpu_waker_record, ips)

/*
 * Coverage: a thread of -- COMMAND at its exit, its life as
 * offcpu's own switches timed it (CLOCK_MONOTONIC ns): on CPU from each
 * switch-in to the next switch-out, off CPU the other way round.
 */
struct offcpu_thread_record {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 reserved; /* 0 */
	char comm[OFFCPU_COMM_LEN];
	__u64 start_ns;	     /* task_struct::start_time */
	__u64 tracked_ns;    /* offcpu began timing it: its fork, or its first switch-out seen */
	__u64 exit_ns;	     /* at sched_process_exit */
	__u64 run_ns;	     /* on CPU, from switch-ins to switch-outs */
	__u64 startup_ns;    /* runnable from its fork to its first switch-in */
	__u64 dropped_ns;    /* its waits below -m, above -M, sampled out: not in records */
	__u64 kernel_run_ns; /* se.sum_exec_runtime, the kernel's own accounting */
	/*
	 * Since starts whose switch-in no event showed (switch_in_unseen),
	 * to the switch-out or exit that showed it running: off CPU, then on.
	 */
	__u64 unseen_ns;
};

/*
 * CPython frames. User space finds CPython in a process (the
 * executable or libpython exporting _PyRuntime) and puts the layout of its
 * version here, in a map keyed by PID; rseq_update then walks the waiting
 * thread's frame chain (thread state -> current frame -> previous) and
 * sends the frames in a struct offcpu_python_record right before the wait.
 * Offsets are bytes into the structure named; OFFCPU_PY_NONE: no such field.
 */
#define OFFCPU_PY_NONE 0xffff
#define OFFCPU_PY_MAX_FRAMES 64
#define OFFCPU_PY_MAX_THREADS 64

struct offcpu_python_layout {
	__u64 runtime;		   /* address of _PyRuntime in the process */
	__u16 version;		   /* 0x030b: 3.11 */
	__u16 runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head; /* PyInterpreterState.threads.head (tstate_head) */
	__u16 tstate_next;
	__u16 tstate_thread_id;	    /* native_thread_id (3.11+), else thread_id */
	__u16 tstate_frame;	    /* frame (3.9, 3.10), cframe (3.11, 3.12), current_frame */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame; NONE: tstate_frame is the frame */
	__u16 frame_code;	    /* f_code, f_executable */
	__u16 frame_previous;	    /* previous, f_back */
	__u16 frame_instr;	    /* prev_instr, instr_ptr (pointers); f_lasti (an int) */
	__u16 frame_owner;	    /* a char: FRAME_OWNED_BY_CSTACK (3) frames are skipped */
	__u16 frame_is_entry;	    /* 3.11's bool: the first frame of its C call */
	__u8 thread_id_is_pthread;  /* thread_id is pthread_self() (the fs base), not the TID */
	__u8 instr_is_int;	    /* frame_instr is f_lasti, a 32-bit int */
	__u8 frame_per_c_call;	    /* 3.9, 3.10: each frame has its own C call */
	/*
	 * A code object's identity: code_names_words pointers from
	 * code_names, co_filename, co_name, (co_qualname,) co_linetable.
	 */
	__u8 code_names_words;
	__u16 code_names;
};

/* The frame owner that marks 3.12+'s entry shims, no Python code. */
#define OFFCPU_PY_OWNED_BY_CSTACK 3

struct offcpu_python_frame {
	__u64 code;  /* the code object (3.13: f_executable) */
	__u64 instr; /* the instruction pointer, or f_lasti */
	/*
	 * offcpu_python_names() of its code_names words, as the walk found them
	 * (0: not read): user space names it only if the object it reads
	 * there later is still that one, not one allocated where it was freed.
	 */
	__u64 names;
};

/*
 * Four pointers in one word, each rotated apart so that equal or aligned
 * ones do not cancel out as a plain XOR lets them.
 */
static inline __u64 offcpu_python_rotate(__u64 v, unsigned int bits)
{
	return bits ? (v << bits) | (v >> (64 - bits)) : v;
}

static inline __u64 offcpu_python_names(__u64 a, __u64 b, __u64 c, __u64 d)
{
	return a ^ offcpu_python_rotate(b, 16) ^ offcpu_python_rotate(c, 32) ^
	       offcpu_python_rotate(d, 48);
}

/*
 * The Python frames of the wait of tid that ended at end_ts_ns, leaf
 * first: bit i of c_call_ends set when frame i is the outermost of its
 * _PyEval_EvalFrameDefault call (the next frame runs in another one).
 */
struct offcpu_python_record {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u16 frames;
	__u8 cut_short; /* the chain went on past OFFCPU_PY_MAX_FRAMES */
	__u8 reserved;
	__u64 end_ts_ns;
	__u64 c_call_ends;
	struct offcpu_python_frame frame[OFFCPU_PY_MAX_FRAMES];
};

#define OFFCPU_PYTHON_HEADER_SIZE __builtin_offsetof(struct offcpu_python_record, frame)

struct offcpu_counters {
	__u64 value[OFFCPU_CNT_BPF_MAX];
};

#endif
