/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The thread state of a wait, from sched_switch's prev_state and preempt
 * flag. The BPF side maps it once, for --state and into every record; user
 * space only reads the result. Plain C on offcpu.h's types, so that
 * tests/unit/classify/test_states.c runs this very code.
 */
#ifndef OFFCPU_STATES_BPF_H
#define OFFCPU_STATES_BPF_H

#include "offcpu.h"

/* Bits of task_struct::__state (include/linux/sched.h); stable since 2.6. */
#define TASK_BIT_INTERRUPTIBLE 0x0001
#define TASK_BIT_UNINTERRUPTIBLE 0x0002
#define TASK_BIT_STOPPED 0x0004
#define TASK_BIT_TRACED 0x0008
#define TASK_BIT_PARKED 0x0040
/* A task exiting for good: it never switches in again. */
#define TASK_BIT_DEAD 0x0080
#define TASK_BIT_WAKING 0x0200
#define TASK_BIT_NOLOAD 0x0400
#define TASK_BIT_RTLOCK_WAIT 0x1000

/*
 * A preempted task may still carry a sleeping state (it was preempted
 * between set_current_state() and schedule()), but it stays runnable, so
 * the preempt flag wins. TASK_IDLE is UNINTERRUPTIBLE|NOLOAD: NOLOAD is
 * above the 0xff mask, so it is tested first. PREEMPT_RT's rtlock waiters
 * sleep with only TASK_RTLOCK_WAIT set, which the mask would turn into
 * "running".
 */
static inline enum offcpu_state state_of(__u32 prev_state, int preempt)
{
	__u32 low = prev_state & 0xff;

	if (preempt)
		return OFFCPU_STATE_PREEMPTED;
	if ((prev_state & (TASK_BIT_UNINTERRUPTIBLE | TASK_BIT_NOLOAD)) ==
	    (TASK_BIT_UNINTERRUPTIBLE | TASK_BIT_NOLOAD))
		return OFFCPU_STATE_IDLE;
	if (prev_state & TASK_BIT_RTLOCK_WAIT)
		return OFFCPU_STATE_UNINTERRUPTIBLE;
	if (low == 0)
		return OFFCPU_STATE_RUNNING;
	if (low & TASK_BIT_INTERRUPTIBLE)
		return OFFCPU_STATE_INTERRUPTIBLE;
	if (low & TASK_BIT_UNINTERRUPTIBLE)
		return OFFCPU_STATE_UNINTERRUPTIBLE;
	if (low & TASK_BIT_STOPPED)
		return OFFCPU_STATE_STOPPED;
	if (low & TASK_BIT_TRACED)
		return OFFCPU_STATE_TRACED;
	if (low & TASK_BIT_PARKED)
		return OFFCPU_STATE_PARKED;
	return OFFCPU_STATE_OTHER;
}

#endif
