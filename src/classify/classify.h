/* SPDX-License-Identifier: GPL-2.0 */
/* Wait classes (docs/wait-classes.md), from the blocked thread's kernel and user stacks. */
#ifndef OFFCPU_CLASSIFY_H
#define OFFCPU_CLASSIFY_H

#include <stddef.h>

#include "classify/rules.h"
#include "profile/frame.h"
#include "profile/profile.h"

/*
 * The class of a wait, "class" or "class:detail" (a static string or one of
 * user_rules'): preempted and running threads wait for a CPU; otherwise the
 * user's rules in order, then a kernel thread's idle loop ("idle"), then the
 * built-in kernel rules, refined by the user frames where the kernel says
 * only "futex". Frames leaf first.
 */
const char *classify__wait(const struct rule_set *user_rules, unsigned int state,
			   const struct frame *kernel, size_t nr_kernel, const struct frame *user,
			   size_t nr_user);

/*
 * The same, with parked the class of the goroutine whose
 * park left a Go thread looking for work (goroutine__park_class of the
 * frames past runtime.mcall, which the user stack no longer holds), or
 * NULL. It comes after the user's rules, before Go's own waiting paths
 * (goroutine__m_class) and the kernel rules.
 */
const char *classify__wait_parked(const struct rule_set *user_rules, unsigned int state,
				  const struct frame *kernel, size_t nr_kernel,
				  const struct frame *user, size_t nr_user, const char *parked);

/*
 * The class the user's label rules give a wait by its labels (a
 * PostgreSQL wait event names the wait better than its stack); NULL when
 * none matches, or the thread waited for a CPU: the state decides first.
 */
const char *classify__from_labels(const struct rule_set *user_rules, unsigned int state,
				  const struct labels *labels);

/*
 * sched_switch says "runnable, no preempt flag" both for sched_yield() and
 * for a thread that schedule()s on its way back to user space because its
 * time was up: only the first gave the CPU away. Tells them apart by the
 * kernel stack; any other state is returned as it is.
 */
unsigned int classify__state(unsigned int state, const struct frame *kernel, size_t nr_kernel);

#endif
