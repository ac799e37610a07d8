// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash_table.h"
#include "lib/u32_key.h"
#include "trace/thread_accounts.h"

struct recorded {
	uint32_t tid;
	uint64_t ns;
};

struct thread_accounts {
	struct hash_table *recorded; /* tid -> recorded */
};

int thread_accounts__new(struct thread_accounts **out)
{
	struct thread_accounts *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->recorded = hash_table__new(u32_key__hash, u32_key__equal);
	if (!t->recorded) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void thread_accounts__free(struct thread_accounts *t)
{
	if (!t)
		return;
	hash_table__free_values(t->recorded, free);
	free(t);
}

int thread_accounts__add_wait(struct thread_accounts *t, uint32_t tid, uint64_t duration_ns)
{
	struct recorded *r = u32_key__find_or_add(t->recorded, tid, sizeof(*r),
						  offsetof(struct recorded, tid), NULL);

	if (!r)
		return -ENOMEM;
	r->ns += duration_ns;
	return 0;
}

int thread_accounts__exit(struct thread_accounts *t, const struct offcpu_thread_record *r,
			  struct profile *p)
{
	struct recorded *rec = hash_table__remove(t->recorded, &r->tid);
	struct thread_account a = { 0 };
	char comm[OFFCPU_COMM_LEN + 1];

	memcpy(comm, r->comm, OFFCPU_COMM_LEN);
	comm[OFFCPU_COMM_LEN] = '\0';
	a.pid = r->pid;
	a.tid = r->tid;
	a.comm = strpool__intern(p->strings, comm);
	a.start_ns = r->start_ns;
	a.tracked_ns = r->tracked_ns;
	a.exit_ns = r->exit_ns;
	a.run_ns = r->run_ns;
	a.startup_ns = r->startup_ns;
	a.recorded_ns = rec ? rec->ns : 0;
	a.dropped_ns = r->dropped_ns;
	a.kernel_run_ns = r->kernel_run_ns;
	a.unseen_ns = r->unseen_ns;
	free(rec);
	if (!a.comm)
		return -ENOMEM;
	return profile__add_thread(p, &a);
}
