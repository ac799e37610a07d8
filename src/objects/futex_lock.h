/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space lock behind a futex wait: its kind, the address of the
 * lock itself (not of the word waited on) and the thread the lock records
 * as its owner, from the futex call, the bytes read around its word at the
 * switch-out (struct offcpu_object) and the user stack's libc frames.
 */
#ifndef OFFCPU_FUTEX_LOCK_H
#define OFFCPU_FUTEX_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"

enum futex_lock_kind {
	FUTEX_LOCK_FUTEX, /* nothing tells what the futex is part of */
	FUTEX_LOCK_MUTEX,
	FUTEX_LOCK_RWLOCK_READ,
	FUTEX_LOCK_RWLOCK_WRITE,
	FUTEX_LOCK_CONDVAR,
	FUTEX_LOCK_SEMAPHORE,
};

struct futex_lock {
	enum futex_lock_kind kind;
	uint64_t addr;	     /* the lock's: a glibc rwlock's base, the futex word otherwise */
	uint32_t holder_tid; /* 0: none recorded, or not a lock that records one */
	/* A field the owner is in was not in what the switch-out could read. */
	bool holder_unread;
};

/* The kind as json and the text report name it: "mutex", "rwlock", ... */
const char *futex_lock__kind_name(enum futex_lock_kind kind);
/*
 * What o, a futex wait's object (syscall futex), waited on; user_stack
 * (NULL: none) tells the kind where the call does not.
 */
void futex_lock__decode(const struct offcpu_object *o, const struct stack *user_stack,
			struct futex_lock *out);

#endif
