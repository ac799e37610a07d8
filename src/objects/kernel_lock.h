/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel lock a wait slept on (struct offcpu_kernel_lock, from
 * lock:contention_begin and the switch-out): its kind from the
 * tracepoint's flags, and its name as perf lock contention gives it: the
 * slab cache it is in (&shmem_inode_cache), mmap_lock, else the function
 * on the wait's kernel stack that took it (in shmem_file_write_iter).
 */
#ifndef OFFCPU_KERNEL_LOCK_H
#define OFFCPU_KERNEL_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"

/* "kernel mutex", "kernel rwsem:W"...: a constant string. */
const char *kernel_lock__kind_name(uint32_t flags);
/*
 * The first function of kernel_stack (leaf first; NULL: none) that is not
 * the lock's or the scheduler's: the one that took the lock. NULL when
 * none is known.
 */
const char *kernel_lock__caller(const struct stack *kernel_stack);
/*
 * k's name into name; false when something it needed could not be read
 * (the name is then the best one left, the address at worst).
 */
bool kernel_lock__name(const struct offcpu_kernel_lock *k, const struct stack *kernel_stack,
		       char *name, size_t size);

#endif
