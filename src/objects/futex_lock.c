// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "objects/futex_lock.h"

/* include/uapi/linux/futex.h: the command, without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME. */
#define FUTEX_CMD_MASK 0x7f
#define FUTEX_CMD_WAIT 0
#define FUTEX_CMD_LOCK_PI 6
#define FUTEX_CMD_LOCK_PI2 13
#define FUTEX_TID_MASK 0x3fffffff

/*
 * glibc's layouts on x86_64 (sysdeps/x86/nptl/bits/struct_mutex.h,
 * struct_rwlock.h): part of the ABI, since PTHREAD_MUTEX_INITIALIZER and
 * PTHREAD_RWLOCK_INITIALIZER compile into programs, so a glibc can add
 * nothing before these fields without breaking every program built
 * against it. A mutex's owner TID is its int at 8 (__owner), set by every
 * kind of mutex once locked. A rwlock's futex words are __readers (0),
 * __wrphase_futex (8) and __writers_futex (12); a writer holding it is
 * __cur_writer (24), cleared before the unlock wakes anyone.
 */
#define MUTEX_OWNER 8
#define RWLOCK_WRPHASE_FUTEX 8
#define RWLOCK_WRITERS_FUTEX 12
#define RWLOCK_CUR_WRITER 24
/*
 * nptl/pthread_rwlock_common.c: a reader waits on __wrphase_futex for the
 * value 1 | PTHREAD_RWLOCK_FUTEX_USED (a write phase), else on __readers
 * itself; a writer on __writers_futex for the same 3 (another writer holds
 * it), else on __wrphase_futex for PTHREAD_RWLOCK_FUTEX_USED alone (readers
 * hold it).
 */
#define RWLOCK_WAIT_WRITE_PHASE 3

/* How many frames from the leaf may hold libc's lock function. */
#define LOCK_FRAMES 8

const char *futex_lock__kind_name(enum futex_lock_kind kind)
{
	switch (kind) {
	case FUTEX_LOCK_MUTEX:
		return "mutex";
	/* Whether the waiter reads or writes, its wait class and stack say. */
	case FUTEX_LOCK_RWLOCK_READ:
	case FUTEX_LOCK_RWLOCK_WRITE:
		return "rwlock";
	case FUTEX_LOCK_CONDVAR:
		return "condvar";
	case FUTEX_LOCK_SEMAPHORE:
		return "semaphore";
	case FUTEX_LOCK_FUTEX:
		break;
	}
	return "futex";
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * One frame's function, by the names glibc exports (Debian's libc has no
 * .symtab, so pthread_mutex_lock is what names it) and, with libc6-dbg,
 * its internal ones (__pthread_mutex_lock_full, __new_sem_wait_slow64).
 */
static enum futex_lock_kind kind_of_function(const char *sym, bool *known)
{
	*known = true;
	while (*sym == '_')
		sym++;
	if (starts(sym, "pthread_mutex_") && strstr(sym, "lock") && !strstr(sym, "unlock"))
		return FUTEX_LOCK_MUTEX;
	if (starts(sym, "pthread_rwlock_") && strstr(sym, "rdlock"))
		return FUTEX_LOCK_RWLOCK_READ;
	if (starts(sym, "pthread_rwlock_") && strstr(sym, "wrlock"))
		return FUTEX_LOCK_RWLOCK_WRITE;
	if (starts(sym, "pthread_cond_") && strstr(sym, "wait"))
		return FUTEX_LOCK_CONDVAR;
	if ((starts(sym, "sem_") || starts(sym, "new_sem_")) && strstr(sym, "wait"))
		return FUTEX_LOCK_SEMAPHORE;
	*known = false;
	return FUTEX_LOCK_FUTEX;
}

/* The lock function nearest the leaf; known false when none is there. */
static enum futex_lock_kind kind_of_stack(const struct stack *user_stack, bool *known)
{
	uint32_t i;

	*known = false;
	for (i = 0; user_stack && i < user_stack->nr && i < LOCK_FRAMES; i++) {
		const struct frame *f = &user_stack->frames[i];
		enum futex_lock_kind kind;

		if (!f->sym || f->kind)
			continue;
		kind = kind_of_function(f->sym, known);
		if (*known)
			return kind;
	}
	return FUTEX_LOCK_FUTEX;
}

/* The int at addr, if the switch-out's window holds all of it. */
static bool read_int(const struct offcpu_object *o, uint64_t addr, uint32_t *value)
{
	uint64_t at = addr - o->window_addr;

	if (addr < o->window_addr || at + sizeof(*value) > o->window_len ||
	    o->window_len > OFFCPU_OBJECT_WINDOW)
		return false;
	memcpy(value, o->window + at, sizeof(*value));
	return true;
}

static void holder_at(const struct offcpu_object *o, uint64_t addr, uint32_t mask,
		      struct futex_lock *out)
{
	uint32_t value;

	if (!read_int(o, addr, &value)) {
		out->holder_unread = true;
		return;
	}
	out->holder_tid = value & mask;
}

void futex_lock__decode(const struct offcpu_object *o, const struct stack *user_stack,
			struct futex_lock *out)
{
	uint32_t cmd = (uint32_t)o->args[1] & FUTEX_CMD_MASK, value = (uint32_t)o->args[2];
	uint64_t word = o->args[0];
	bool glibc;

	*out = (struct futex_lock){ .kind = FUTEX_LOCK_FUTEX, .addr = word };
	/* A priority-inheritance lock: its word is the owner's TID, whoever made the lock. */
	if (cmd == FUTEX_CMD_LOCK_PI || cmd == FUTEX_CMD_LOCK_PI2) {
		out->kind = FUTEX_LOCK_MUTEX;
		holder_at(o, word, FUTEX_TID_MASK, out);
		return;
	}
	out->kind = kind_of_stack(user_stack, &glibc);
	switch (out->kind) {
	case FUTEX_LOCK_MUTEX:
		holder_at(o, word + MUTEX_OWNER, ~0u, out);
		break;
	case FUTEX_LOCK_RWLOCK_READ:
		if (value == RWLOCK_WAIT_WRITE_PHASE)
			out->addr = word - RWLOCK_WRPHASE_FUTEX;
		holder_at(o, out->addr + RWLOCK_CUR_WRITER, ~0u, out);
		break;
	case FUTEX_LOCK_RWLOCK_WRITE:
		out->addr = word - (value == RWLOCK_WAIT_WRITE_PHASE ? RWLOCK_WRITERS_FUTEX
								     : RWLOCK_WRPHASE_FUTEX);
		holder_at(o, out->addr + RWLOCK_CUR_WRITER, ~0u, out);
		break;
	case FUTEX_LOCK_FUTEX:
		/*
		 * glibc's lll_lock waits for the value 2 (locked, with waiters):
		 * a lock, but not one a stack frame says is a pthread mutex
		 * (libc's own, a runtime's), so no owner is read.
		 */
		if (!glibc && cmd == FUTEX_CMD_WAIT && value == 2)
			out->kind = FUTEX_LOCK_MUTEX;
		break;
	case FUTEX_LOCK_CONDVAR:
	case FUTEX_LOCK_SEMAPHORE:
		break;
	}
}
