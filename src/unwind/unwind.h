/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks unwound in user space from a copy taken at block time: the
 * thread's user registers and the top of its user stack. Each frame is
 * stepped with the call-frame information of the file mapped at its
 * address (.eh_frame; .debug_frame of the file or of its separate debug
 * file), so code built without frame pointers unwinds whole; frame
 * pointers are followed only where no CFI covers the code. x86-64 only.
 *
 * Files are opened through /proc/PID/map_files and read with pread, never
 * mapped: a file the traced user can truncate must not SIGBUS offcpu.
 * Each file's CFI is parsed once and kept (least recently used first out,
 * within a count and a byte bound), and the rules found for each address
 * are cached.
 */
#ifndef OFFCPU_UNWIND_H
#define OFFCPU_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "proc/procmaps.h"

/* The x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum unwind_reg {
	UNWIND_REG_RAX,
	UNWIND_REG_RDX,
	UNWIND_REG_RCX,
	UNWIND_REG_RBX,
	UNWIND_REG_RSI,
	UNWIND_REG_RDI,
	UNWIND_REG_RBP,
	UNWIND_REG_RSP,
	UNWIND_REG_R8,
	UNWIND_REG_R9,
	UNWIND_REG_R10,
	UNWIND_REG_R11,
	UNWIND_REG_R12,
	UNWIND_REG_R13,
	UNWIND_REG_R14,
	UNWIND_REG_R15,
	UNWIND_REG_RIP, /* the return address column */
	UNWIND_NR_REGS,
};

struct unwind_regs {
	uint64_t r[UNWIND_NR_REGS];
	uint32_t valid; /* bit n: r[n] is known */
};

/* The copied top of the stack: size bytes that were at user address start (the SP) up. */
struct unwind_stack {
	uint64_t start;
	const unsigned char *data;
	size_t size;
};

/* Why unwinding stopped: anything but UNWIND_STOP_ROOT means the stack was cut short. */
enum unwind_stop {
	UNWIND_STOP_ROOT,	/* the outermost frame: CFI says it has no caller, or a zero return
				   address */
	UNWIND_STOP_MAX_FRAMES, /* the caller's array filled up first */
	UNWIND_STOP_STACK_END,	/* a caller's frame lies past the end of the copy */
	UNWIND_STOP_UNREADABLE, /* a read below the copy, a register the frame lost, a file unread
				 */
	UNWIND_STOP_NO_CFI,	/* no CFI covers the code, and no frame pointer leads on */
	UNWIND_STOP_BAD_CFI,	/* CFI that cannot be evaluated here (an unsupported expression) */
	UNWIND_STOP_NOT_CODE,	/* a return address in no executable mapping */
	UNWIND_STOP_LOOP,	/* a caller's stack pointer not above its callee's */
};

struct unwind_result {
	size_t nr; /* pcs[0] is the leaf's instruction pointer, then return addresses */
	enum unwind_stop stop;
	size_t fp_frames; /* callers found by frame pointer, where no CFI covered the code */
	bool cfi_rejected; /* stopped at CFI outside the bounds libdw is run within (cfi_check.h) */
};

struct unwinder_opts {
	size_t max_modules; /* files whose CFI is kept; 0: 256 */
	size_t max_bytes;   /* bytes of CFI kept for them; 0: 64 MiB */
	size_t rule_slots;  /* cached rules, one per code address (a power of 2); 0: 4096 */
};

struct unwinder_stats {
	uint64_t modules_opened;  /* files read: once each while it stays cached */
	uint64_t modules_evicted; /* dropped to stay within the bounds */
	uint64_t modules_cached;
	uint64_t bytes_cached;
	uint64_t rule_hits, rule_misses;
	uint64_t cfi_rejected; /* lookups in a file whose CFI failed cfi_check */
};

struct unwinder;

/* opts may be NULL (the defaults). */
int unwinder__new(const struct unwinder_opts *opts, struct unwinder **out);
void unwinder__free(struct unwinder *u);
/*
 * Unwinds one stack of process pid, whose executable mappings are maps
 * (procmaps__read_pid): at most max_pcs addresses into pcs, leaf first.
 * Frames are never guessed: a stack that cannot be followed to its root
 * ends where it could, and res->stop says why. -EINVAL for registers
 * without an IP or SP, -ENOMEM, -EOPNOTSUPP off x86-64; else 0.
 */
int unwinder__unwind(struct unwinder *u, uint32_t pid, const struct proc_maps *maps,
		     const struct unwind_regs *regs, const struct unwind_stack *stack,
		     uint64_t *pcs, size_t max_pcs, struct unwind_result *res);
void unwinder__stats(const struct unwinder *u, struct unwinder_stats *out);

#ifdef __x86_64__
/* The registers ptrace(PTRACE_GETREGS) gives, by DWARF number: all valid. */
void unwind_regs__from_user(struct unwind_regs *out, const struct user_regs_struct *regs);
#endif
/* "root", "max-frames", "stack-end", "unreadable", "no-cfi", "bad-cfi", "not-code", "loop". */
const char *unwind__stop_name(enum unwind_stop stop);

#endif
