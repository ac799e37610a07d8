/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel locks as wait objects. A thread that sleeps in a kernel lock's
 * slow path (rwsem_down_write_slowpath, __mutex_lock, rt_mutex_slowlock,
 * percpu_rwsem_wait, __down) passed lock:contention_begin on its way in
 * (5.19, "locking: Add lock contention tracepoints"; with or without
 * LOCKDEP) and passes contention_end on its way out. Between the two, the lock is in the
 * thread's slot, and a switch-out into a sleep takes it as the wait's
 * object with what the lock says of its holder (struct offcpu_kernel_lock).
 * The system call's object (objects.bpf.h) is kept beside it.
 *
 * A spinning waiter does not sleep: spin entries are left out, so the
 * contended wait_lock inside a mutex's slow path does not hide the mutex
 * (and its contention_end, for another address, does not end it). On
 * PREEMPT_RT a spinlock is an rt_mutex a waiter sleeps on (LCB_F_SPIN |
 * LCB_F_RT): kept.
 *
 * Cost: contention_begin and contention_end each one task storage get for
 * a thread with a slot; the switch-out one load of the slot when no lock
 * is pending. Only a switch-out inside a slow path reads the lock.
 */
#ifndef OFFCPU_KERNEL_LOCKS_BPF_H
#define OFFCPU_KERNEL_LOCKS_BPF_H

/*
 * The slab cache an address is in (6.13, "mm/bpf: Add bpf_get_kmem_cache()
 * kfunc"). Weak, and called only under
 * has_kmem_cache, which user space sets from the kernel's BTF: a call the
 * verifier drops as dead code loads on 6.1, where libbpf 1.1's
 * bpf_ksym_exists() cannot test a kfunc.
 */
extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

/*
 * A mutex's and a rwsem's owner: the task_struct pointer with flags in
 * its 3 low bits (MUTEX_FLAGS; RWSEM_OWNER_FLAGS_MASK, of which bit 0,
 * RWSEM_READER_OWNED, says readers hold it and the pointer is only the
 * last of them). An rt_mutex_base's: bit 0 RT_MUTEX_HAS_WAITERS.
 */
#define KLOCK_OWNER_FLAGS 7ull
#define KLOCK_RWSEM_READER_OWNED 1ull
#define KLOCK_RT_HAS_WAITERS 1ull

SEC("tp_btf/contention_begin")
int BPF_PROG(offcpu_contention_begin, void *lock, unsigned int flags)
{
	struct inflight_slot *slot;

	if ((flags & OFFCPU_LCB_F_SPIN) && !(flags & OFFCPU_LCB_F_RT))
		return 0;
	/* The thread is current. No slot is made here: a thread without one is not traced. */
	slot = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	if (!slot)
		return 0;
	slot->klock_addr = (__u64)lock;
	slot->klock_flags = flags;
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(offcpu_contention_end, void *lock, int ret)
{
	struct inflight_slot *slot;

	slot = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	if (slot && slot->klock_addr == (__u64)lock)
		slot->klock_addr = 0;
	return 0;
}

/*
 * The owner word the lock's kind records (flags say which structure addr
 * is), with the bits to clear: false when the kind records none.
 */
static __always_inline bool klock_owner_word(__u64 addr, __u32 flags, __u64 *word, __u64 *mask)
{
	long err;

	if (flags & OFFCPU_LCB_F_PERCPU)
		return false;
	if (flags & OFFCPU_LCB_F_RT) {
		*mask = KLOCK_RT_HAS_WAITERS;
		err = bpf_core_read(word, sizeof(*word), &((struct rt_mutex_base *)addr)->owner);
	} else if (flags & OFFCPU_LCB_F_MUTEX) {
		/*
		 * PREEMPT_RT builds a mutex on an rt_mutex_base, without this
		 * owner: a relocation to a field the kernel lacks fails the load.
		 */
		if (!bpf_core_field_exists(struct mutex, owner))
			return false;
		*mask = KLOCK_OWNER_FLAGS;
		err = bpf_core_read(word, sizeof(*word), &((struct mutex *)addr)->owner.counter);
	} else if (flags & (OFFCPU_LCB_F_READ | OFFCPU_LCB_F_WRITE)) {
		/* PREEMPT_RT's rw_semaphore is an rwbase_rt: no owner either. */
		if (!bpf_core_field_exists(struct rw_semaphore, owner))
			return false;
		*mask = KLOCK_OWNER_FLAGS;
		err = bpf_core_read(word, sizeof(*word),
				    &((struct rw_semaphore *)addr)->owner.counter);
		if (!err && (*word & KLOCK_RWSEM_READER_OWNED))
			*word = 0;
	} else {
		/*
		 * A semaphore has no owner; its last down()er where the kernel
		 * keeps one (6.16, CONFIG_DETECT_HUNG_TASK_BLOCKER).
		 */
		if (!bpf_core_field_exists(struct semaphore, last_holder))
			return false;
		*mask = 0;
		err = bpf_core_read(word, sizeof(*word), &((struct semaphore *)addr)->last_holder);
	}
	if (err)
		*word = ~0ull;
	return true;
}

static __always_inline void klock_holder(struct offcpu_kernel_lock *k)
{
	struct task_struct *owner;
	__u64 word = 0, mask = 0;

	k->holder = OFFCPU_KLOCK_HOLDER_NONE;
	if (!klock_owner_word(k->addr, k->flags, &word, &mask) || !word)
		return;
	k->holder = OFFCPU_KLOCK_HOLDER_UNREAD;
	if (word == ~0ull)
		return;
	owner = (struct task_struct *)(word & ~mask);
	/* Under the scheduler's RCU read side: an owner exiting now is not freed yet. */
	if (bpf_core_read(&k->holder_tid, sizeof(k->holder_tid), &owner->pid) ||
	    bpf_core_read(&k->holder_pid, sizeof(k->holder_pid), &owner->tgid) ||
	    bpf_core_read_str(k->holder_comm, sizeof(k->holder_comm), &owner->comm) < 0 ||
	    !k->holder_tid)
		return;
	k->holder = OFFCPU_KLOCK_HOLDER_TASK;
}

static __always_inline void klock_cache(struct offcpu_kernel_lock *k)
{
	struct kmem_cache *s;
	const char *name;

	k->cache_state = OFFCPU_KLOCK_CACHE_UNKNOWN;
	if (!has_kmem_cache)
		return;
	s = bpf_get_kmem_cache(k->addr);
	k->cache_state = OFFCPU_KLOCK_CACHE_NONE;
	if (!s)
		return;
	k->cache_state = OFFCPU_KLOCK_CACHE_UNREAD;
	name = BPF_CORE_READ(s, name);
	if (name && bpf_probe_read_kernel_str(k->cache, sizeof(k->cache), name) > 0)
		k->cache_state = OFFCPU_KLOCK_CACHE_NAMED;
}

/*
 * At prev's switch-out into a sleep (a preempted thread waits on nothing,
 * as objects.bpf.h has it): the lock it is contending for, if any. Kernel
 * threads included: a kworker waits on kernel locks as much as any.
 */
static __always_inline void kernel_lock_take_at_switch_out(struct task_struct *prev,
							   __u32 prev_state, bool preempt,
							   struct inflight_slot *slot)
{
	struct offcpu_kernel_lock *k = &slot->object.kernel_lock;
	struct mm_struct *mm;

	k->taken = 0;
	if (!want_objects || !slot->klock_addr || preempt ||
	    !(prev_state & (TASK_BIT_INTERRUPTIBLE | TASK_BIT_UNINTERRUPTIBLE)))
		return;
	k->taken = 1;
	k->addr = slot->klock_addr;
	k->flags = slot->klock_flags;
	mm = prev->mm;
	k->mmap_lock =
	    mm && k->addr == (__u64)mm + bpf_core_field_offset(struct mm_struct, mmap_lock);
	k->holder_pid = 0;
	k->holder_tid = 0;
	k->holder_comm[0] = '\0';
	k->cache[0] = '\0';
	klock_holder(k);
	klock_cache(k);
}

#endif
