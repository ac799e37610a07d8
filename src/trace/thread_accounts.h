/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Coverage: each thread's recorded off-CPU time, summed as its
 * waits arrive, joined at its exit with what the kernel side timed
 * (struct offcpu_thread_record) into the profile's thread accounts.
 */
#ifndef OFFCPU_THREAD_ACCOUNTS_H
#define OFFCPU_THREAD_ACCOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"

struct thread_accounts;

int thread_accounts__new(struct thread_accounts **out);
void thread_accounts__free(struct thread_accounts *t);
/* A wait record of thread tid, duration_ns long; -ENOMEM. */
int thread_accounts__add_wait(struct thread_accounts *t, uint32_t tid, uint64_t duration_ns);
/* Its exit: the account goes into the profile and the thread is forgotten. */
int thread_accounts__exit(struct thread_accounts *t, const struct offcpu_thread_record *r,
			  struct profile *p);

#endif
