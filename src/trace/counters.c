// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <string.h>
#include <linux/types.h>

#include "offcpu.h"
#include "trace/counters.h"

static const char *const counter_names[OFFCPU_CNT_MAX] = {
	[OFFCPU_CNT_SWITCHES] = "switches",
	[OFFCPU_CNT_FILTERED] = "filtered",
	[OFFCPU_CNT_WAITS_STARTED] = "waits_started",
	[OFFCPU_CNT_TABLE_FULL] = "table_full",
	[OFFCPU_CNT_SLOT_NOT_MADE] = "slots_not_made",
	[OFFCPU_CNT_SWITCH_UNSEEN] = "switch_in_unseen",
	[OFFCPU_CNT_SWITCH_RECOVERED] = "switch_in_recovered",
	[OFFCPU_CNT_PY_WALKS_AT_OUT] = "python_walks_at_switch_out",
	[OFFCPU_CNT_WAITS_COMPLETED] = "waits_completed",
	[OFFCPU_CNT_NO_START] = "no_start",
	[OFFCPU_CNT_BELOW_MIN] = "below_min_duration",
	[OFFCPU_CNT_BELOW_MIN_NS] = "below_min_duration_ns",
	[OFFCPU_CNT_SHORT_SAMPLED] = "short_sampled",
	[OFFCPU_CNT_SHORT_SAMPLED_NS] = "short_sampled_ns",
	[OFFCPU_CNT_ABOVE_MAX] = "above_max_duration",
	[OFFCPU_CNT_ABOVE_MAX_NS] = "above_max_duration_ns",
	[OFFCPU_CNT_SAMPLED_OUT] = "sampled_out",
	[OFFCPU_CNT_SAMPLED_OUT_NS] = "sampled_out_ns",
	[OFFCPU_CNT_KSTACK_FAIL] = "kernel_stack_failures",
	[OFFCPU_CNT_WAKER_UNSEEN] = "wakers_unseen",
	[OFFCPU_CNT_USTACK_AT_OUT] = "user_stack_at_switch_out",
	[OFFCPU_CNT_PY_AT_OUT] = "python_stack_at_switch_out",
	[OFFCPU_CNT_EMITTED] = "emitted",
	[OFFCPU_CNT_RINGBUF_FULL] = "ringbuf_full",
	[OFFCPU_CNT_RINGBUF_FULL_NS] = "ringbuf_full_ns",
	[OFFCPU_CNT_USTACK_FAIL] = "user_stack_failures",
	[OFFCPU_CNT_USTACK_LOST] = "user_stack_lost",
	[OFFCPU_CNT_USTACK_PENDING] = "user_stack_pending",
	[OFFCPU_CNT_PY_CUT_SHORT] = "python_stack_cut_short",
	[OFFCPU_CNT_PY_FAIL] = "python_stack_failures",
	[OFFCPU_CNT_WAKER_STACKS] = "waker_stacks",
	[OFFCPU_CNT_WAKER_STACK_FAIL] = "waker_stack_failures",
	[OFFCPU_CNT_OPEN_AT_START] = "waits_open_at_start",
	[OFFCPU_CNT_ONCPU_SAMPLES] = "oncpu_samples",
	[OFFCPU_CNT_ONCPU_IDLE] = "oncpu_idle",
	[OFFCPU_CNT_ONCPU_FILTERED] = "oncpu_filtered",
	[OFFCPU_CNT_ONCPU_DROPPED] = "oncpu_dropped",
	[OFFCPU_CNT_ONCPU_DROPPED_NS] = "oncpu_dropped_ns",
	[OFFCPU_CNT_ONCPU_STACK_FAIL] = "oncpu_stack_failures",
	[OFFCPU_CNT_FEATURES_MISSING] = "kernel_features_missing",
	[OFFCPU_CNT_RINGBUF_UNREAD] = "ringbuf_unread",
	[OFFCPU_CNT_RINGBUF_UNREAD_NS] = "ringbuf_unread_ns",
	[OFFCPU_CNT_ONCPU_UNREAD] = "oncpu_unread",
	[OFFCPU_CNT_ONCPU_UNREAD_NS] = "oncpu_unread_ns",
	[OFFCPU_CNT_OPEN_AT_STOP] = "waits_open_at_stop",
	[OFFCPU_CNT_OPEN_STACKS_RACED] = "open_wait_stacks_raced",
	[OFFCPU_CNT_KERNEL_LEAF_MISSED] = "kernel_leaf_missed",
	[OFFCPU_CNT_OBJECT_FAILURES] = "object_failures",
	[OFFCPU_CNT_WAKER_STACK_UNMATCHED] = "waker_stacks_unmatched",
	[OFFCPU_CNT_PROCESSES_REAPED] = "processes_reaped",
	[OFFCPU_CNT_THREAD_LEFTOVERS_REAPED] = "thread_leftovers_reaped",
	[OFFCPU_CNT_SYMBOL_MISS] = "symbol_misses",
	[OFFCPU_CNT_PROC_GONE] = "processes_gone",
	[OFFCPU_CNT_USTACK_CUT_SHORT] = "user_stack_cut_short",
	[OFFCPU_CNT_CFI_REJECTED] = "cfi_rejected",
	[OFFCPU_CNT_USTACK_LOOP] = "user_stack_loops",
	[OFFCPU_CNT_PY_UNNAMED] = "python_frames_unnamed",
	[OFFCPU_CNT_UNACCOUNTED_NS] = "unaccounted_ns",
};

const char *counters__name(unsigned int index)
{
	return index < OFFCPU_CNT_MAX ? counter_names[index] : "unknown";
}

void counters__print(FILE *out, const uint64_t *counters, const char *indent)
{
	int width = 24; /* the values in one column, past the longest name */
	unsigned int i;

	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		if ((int)strlen(counter_names[i]) > width)
			width = strlen(counter_names[i]);
	for (i = 0; i < OFFCPU_CNT_MAX; i++)
		fprintf(out, "%s%-*s %" PRIu64 "\n", indent, width, counter_names[i], counters[i]);
}
