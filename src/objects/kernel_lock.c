// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "objects/kernel_lock.h"

const char *kernel_lock__kind_name(uint32_t flags)
{
	bool read = flags & OFFCPU_LCB_F_READ, write = flags & OFFCPU_LCB_F_WRITE;

	/* PREEMPT_RT's sleeping spinlocks and rwbase locks are rt_mutexes underneath. */
	if (flags & OFFCPU_LCB_F_RT) {
		if (flags & OFFCPU_LCB_F_SPIN)
			return "kernel spinlock";
		return read ? "kernel rtmutex:R" : write ? "kernel rtmutex:W" : "kernel rtmutex";
	}
	if (flags & OFFCPU_LCB_F_PERCPU)
		return read    ? "kernel percpu-rwsem:R"
		       : write ? "kernel percpu-rwsem:W"
			       : "kernel percpu-rwsem";
	if (flags & OFFCPU_LCB_F_MUTEX)
		return "kernel mutex";
	if (flags & OFFCPU_LCB_F_SPIN)
		return read ? "kernel rwlock:R" : write ? "kernel rwlock:W" : "kernel spinlock";
	if (read)
		return "kernel rwsem:R";
	if (write)
		return "kernel rwsem:W";
	return "kernel semaphore";
}

/*
 * The lock's and the scheduler's own functions, between the sleep and the
 * code that took the lock: __sched and __lockfunc code, by name, so a
 * stack from another kernel's kallsyms reads the same.
 */
static const char *const lock_prefixes[] = {
	"__schedule",	 "schedule",	   "preempt_schedule", "io_schedule",	 "__mutex_lock",
	"mutex_lock",	 "__ww_mutex",	   "ww_mutex_lock",    "rwsem_down_",	 "down_",
	"__down",	 "rt_mutex",	   "__rt_mutex",       "rt_spin_lock",	 "rtlock_",
	"rwbase_",	 "rt_read_lock",   "rt_write_lock",    "percpu_down_",	 "percpu_rwsem_",
	"__percpu_down", "__percpu_rwsem", "rcuwait_",	       "osq_lock",	 "_raw_",
	"queued_",	 "native_queued",  "__pv_queued",      "mmap_read_lock", "mmap_write_lock",
};

static bool is_lock_function(const char *sym)
{
	size_t i;

	if (!strcmp(sym, "down"))
		return true;
	for (i = 0; i < sizeof(lock_prefixes) / sizeof(lock_prefixes[0]); i++) {
		if (!strncmp(sym, lock_prefixes[i], strlen(lock_prefixes[i])))
			return true;
	}
	return false;
}

const char *kernel_lock__caller(const struct stack *kernel_stack)
{
	uint32_t i;

	if (!kernel_stack)
		return NULL;
	for (i = 0; i < kernel_stack->nr; i++) {
		const struct frame *f = &kernel_stack->frames[i];

		/* An unknown frame may be the caller: better no name than the wrong one. */
		if (!f->sym)
			return NULL;
		if (!is_lock_function(f->sym))
			return f->sym;
	}
	return NULL;
}

bool kernel_lock__name(const struct offcpu_kernel_lock *k, const struct stack *kernel_stack,
		       char *name, size_t size)
{
	const char *caller;

	if (k->mmap_lock) {
		snprintf(name, size, "mmap_lock");
		return true;
	}
	if (k->cache_state == OFFCPU_KLOCK_CACHE_NAMED && k->cache[0]) {
		snprintf(name, size, "&%.*s", (int)sizeof(k->cache), k->cache);
		return true;
	}
	caller = kernel_lock__caller(kernel_stack);
	if (caller)
		snprintf(name, size, "in %s", caller);
	else
		snprintf(name, size, "0x%" PRIx64, (uint64_t)k->addr);
	return k->cache_state != OFFCPU_KLOCK_CACHE_UNREAD;
}
