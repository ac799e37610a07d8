// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel lock's kind from lock:contention_begin's flags, and its name:
 * mmap_lock, the slab cache it is in, else the function on the wait's
 * kernel stack that took it; the holder BPF read goes through as read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "objects/kernel_lock.h"
#include "objects/objects.h"

#define LOCK 0xffff88826417b5f8ull

/* A wait's kernel stack as bpf_get_task_stack() gives it: the __sched frames above the lock's. */
static struct stack *stack_of(const char *const *syms, uint32_t nr)
{
	struct stack *s = calloc(1, sizeof(*s) + nr * sizeof(s->frames[0]));
	uint32_t i;

	assert_non_null(s);
	s->nr = nr;
	for (i = 0; i < nr; i++) {
		s->frames[i].addr = 0xffffffff81000000ull + i;
		s->frames[i].sym = syms[i];
		s->frames[i].kernel = true;
	}
	return s;
}

static void kind_from_the_flags(void **state)
{
	(void)state;
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_MUTEX), "kernel mutex");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_READ), "kernel rwsem:R");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_WRITE), "kernel rwsem:W");
	assert_string_equal(kernel_lock__kind_name(0), "kernel semaphore");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_RT), "kernel rtmutex");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_RT | OFFCPU_LCB_F_SPIN),
			    "kernel spinlock");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_PERCPU | OFFCPU_LCB_F_READ),
			    "kernel percpu-rwsem:R");
	assert_string_equal(kernel_lock__kind_name(OFFCPU_LCB_F_PERCPU | OFFCPU_LCB_F_WRITE),
			    "kernel percpu-rwsem:W");
}

static void caller_is_the_first_frame_not_of_the_lock(void **state)
{
	static const char *const write[] = { "schedule_preempt_disabled",
					     "rwsem_down_write_slowpath",
					     "down_write",
					     "shmem_file_write_iter",
					     "vfs_write",
					     "ksys_write" };
	static const char *const mutex[] = { "__schedule", "schedule", "__mutex_lock.constprop.0",
					     "mutex_lock", "pipe_write" };
	static const char *const unknown[] = { "rwsem_down_read_slowpath", NULL,
					       "do_user_addr_fault" };
	static const char *const only_locks[] = { "schedule", "percpu_rwsem_wait",
						  "percpu_down_write" };
	struct stack *s;

	(void)state;
	s = stack_of(write, 6);
	assert_string_equal(kernel_lock__caller(s), "shmem_file_write_iter");
	free(s);
	s = stack_of(mutex, 5);
	assert_string_equal(kernel_lock__caller(s), "pipe_write");
	free(s);
	/* An unsymbolized frame may be the caller: no name rather than the wrong one. */
	s = stack_of(unknown, 3);
	assert_null(kernel_lock__caller(s));
	free(s);
	s = stack_of(only_locks, 3);
	assert_null(kernel_lock__caller(s));
	free(s);
	assert_null(kernel_lock__caller(NULL));
}

static void name_mmap_lock_cache_caller_address(void **state)
{
	static const char *const write[] = { "rwsem_down_write_slowpath", "down_write",
					     "shmem_file_write_iter" };
	struct offcpu_kernel_lock k = { .taken = 1, .flags = OFFCPU_LCB_F_WRITE, .addr = LOCK };
	struct stack *s = stack_of(write, 3);
	char name[64];

	(void)state;
	/* 6.13 and later: the slab cache. */
	k.cache_state = OFFCPU_KLOCK_CACHE_NAMED;
	strcpy(k.cache, "shmem_inode_cache");
	assert_true(kernel_lock__name(&k, s, name, sizeof(name)));
	assert_string_equal(name, "&shmem_inode_cache");
	/* Its own mm's lock says more than the cache it is in. */
	k.mmap_lock = 1;
	assert_true(kernel_lock__name(&k, s, name, sizeof(name)));
	assert_string_equal(name, "mmap_lock");
	k.mmap_lock = 0;
	/* 6.1 to 6.12, without bpf_get_kmem_cache(): the caller. */
	k.cache_state = OFFCPU_KLOCK_CACHE_UNKNOWN;
	assert_true(kernel_lock__name(&k, s, name, sizeof(name)));
	assert_string_equal(name, "in shmem_file_write_iter");
	/* A cache whose name could not be read is a failure, the caller named instead. */
	k.cache_state = OFFCPU_KLOCK_CACHE_UNREAD;
	assert_false(kernel_lock__name(&k, s, name, sizeof(name)));
	assert_string_equal(name, "in shmem_file_write_iter");
	k.cache_state = OFFCPU_KLOCK_CACHE_NONE;
	assert_true(kernel_lock__name(&k, NULL, name, sizeof(name)));
	assert_string_equal(name, "0xffff88826417b5f8");
	free(s);
}

static void holder_as_bpf_read_it(void **state)
{
	struct offcpu_object o = { 0 };
	struct symbol_limits limits;
	struct objects *objs;
	struct object_name n;

	(void)state;
	limits__defaults(&limits);
	assert_int_equal(objects__new(&limits, &objs), 0);
	o.kernel_lock = (struct offcpu_kernel_lock){
		.taken = 1,
		.flags = OFFCPU_LCB_F_MUTEX,
		.addr = LOCK,
		.holder = OFFCPU_KLOCK_HOLDER_TASK,
		.holder_pid = 41,
		.holder_tid = 42,
		.holder_comm = "kworker/0:1",
		.cache_state = OFFCPU_KLOCK_CACHE_NONE,
	};
	/* The kernel lock wins over the system call's object: it says more. */
	o.taken = 1;
	o.syscall = 202;
	assert_true(objects__name(objs, 1, &o, NULL, NULL, &n));
	assert_string_equal(n.kind, "kernel mutex");
	assert_int_equal(n.addr, LOCK);
	assert_int_equal(n.holder_pid, 41);
	assert_int_equal(n.holder_tid, 42);
	assert_string_equal(n.holder_comm, "kworker/0:1");
	assert_false(n.failed);
	/* Reader-owned, or no owner recorded: no holder, and nothing failed. */
	o.kernel_lock.holder = OFFCPU_KLOCK_HOLDER_NONE;
	assert_true(objects__name(objs, 1, &o, NULL, NULL, &n));
	assert_int_equal(n.holder_tid, 0);
	assert_false(n.failed);
	/* An owner word or task that could not be read is counted. */
	o.kernel_lock.holder = OFFCPU_KLOCK_HOLDER_UNREAD;
	assert_true(objects__name(objs, 1, &o, NULL, NULL, &n));
	assert_int_equal(n.holder_tid, 0);
	assert_true(n.failed);
	objects__free(objs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kind_from_the_flags),
		cmocka_unit_test(caller_is_the_first_frame_not_of_the_lock),
		cmocka_unit_test(name_mmap_lock_cache_caller_address),
		cmocka_unit_test(holder_as_bpf_read_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
