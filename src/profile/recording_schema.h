/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The json recording's names (docs/formats.md, "json"), defined once for the
 * writer (output/output_json.c) and the reader of `offcpu report`
 * (trace/recording.c): a field renamed or added on one side is renamed or
 * added on the other. The stats record's counters are named by
 * counters__name().
 */
#ifndef OFFCPU_RECORDING_SCHEMA_H
#define OFFCPU_RECORDING_SCHEMA_H

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_TYPE "type"
#define REC_TYPE_WAIT "offcpu"
#define REC_TYPE_STATS "stats"
/*
 * An on-CPU sample (-F): ts_ns when it was taken, weight_ns the CPU time
 * it stands for (1e9 / HZ), the thread's names and stacks as a wait's; no
 * state, wait class, duration or waker.
 */
#define REC_TYPE_ONCPU "oncpu"
/*
 * A thread of -- COMMAND that exited, its life accounted for
 * (struct thread_account), before the stats record.
 */
#define REC_TYPE_THREAD "thread"
#define REC_START_NS "start_ns"
#define REC_TRACKED_NS "tracked_ns"
#define REC_EXIT_NS "exit_ns"
#define REC_RUN_NS "run_ns"
#define REC_STARTUP_NS "startup_ns"
#define REC_RECORDED_NS "recorded_ns"
#define REC_DROPPED_NS "dropped_ns"
#define REC_KERNEL_RUN_NS "kernel_run_ns"
/* "before", "after" or "both" (profile__open_name), absent when neither. */
#define REC_OPEN "open"
#define REC_UNSEEN_NS "unseen_ns"

/* A wait. */
#define REC_TS_NS "ts_ns"
#define REC_PID "pid"
#define REC_TID "tid"
#define REC_COMM "comm"
#define REC_TITLE "title"
#define REC_CGROUP "cgroup"
#define REC_STATE "state"
#define REC_WAIT "wait"
#define REC_DURATION_NS "duration_ns"
/*
 * What the wait adds to totals: its part inside the window
 * (REC_RECORDING_START_TS_NS), times its weight if kept by chance.
 */
#define REC_WEIGHT_NS "weight_ns"
#define REC_CPU "cpu"
#define REC_KERNEL_STACK "kernel_stack"
#define REC_USER_STACK "user_stack"
/* {"NAME":"VALUE",...}, read from the process at block time by a rule pack. */
#define REC_LABELS "labels"
/*
 * runq_ns, and the waker: {"pid","tid","comm"} of a task, or
 * {"context":"hardirq"|"softirq"} with the pid, tid and comm of the task
 * the interrupt interrupted; with --wakers its kernel_stack and user_stack.
 */
#define REC_RUNQ_NS "runq_ns"
#define REC_WAKER "waker"
#define REC_CONTEXT "context"
/*
 * What it waited on: {"kind","name","addr","holder":{"pid","tid","comm"}},
 * kind and addr named as a frame's are, addr and holder absent when
 * unknown (docs/formats.md).
 */
#define REC_OBJECT "object"
#define REC_NAME "name"
#define REC_HOLDER "holder"

/*
 * A frame. Beyond docs/formats.md's fields, what pprof needs to place the code
 * as a live profile does: module_off (the offset in the module's file, on
 * user frames with a module; absent, it is addr, as in the kernel),
 * build_id (hex GNU build ID of the module) and mangled (the symbol as the
 * file names it, where sym is its demangled form).
 */
#define REC_ADDR "addr"
#define REC_SYM "sym"
#define REC_MANGLED "mangled"
#define REC_OFF "off"
#define REC_MODULE "module"
#define REC_MODULE_OFF "module_off"
#define REC_BUILD_ID "build_id"
#define REC_FILE "file"
#define REC_LINE "line"
/* The functions inlined at the frame, innermost first, each with sym, file and line. */
#define REC_INLINED "inlined"
/* "0x...": the start of a function only the unwind tables know; then no sym nor off. */
#define REC_FUNC_START "func_start"
/* Interpreted code, "python"; absent on native frames. */
#define REC_KIND "kind"

/*
 * In the profile such a function is named MODULE!0xSTART (its module's
 * file name, its start in the file's addresses), so that its frames group
 * together and text, folded, svg and pprof show it; the "!" says it is no
 * symbol's name. json writes func_start instead, and the reader names it
 * again the same way.
 */
static inline void unnamed_function__name(const char *module, uint64_t start, char *buf,
					  size_t size)
{
	const char *slash = strrchr(module, '/');

	snprintf(buf, size, "%s!0x%" PRIx64, slash ? slash + 1 : module, start);
}

/* Whether sym is the name unnamed_function__name gave a function of module; its start. */
static inline bool unnamed_function__start(const char *sym, const char *module, uint64_t *start)
{
	const char *slash, *base;
	size_t len;
	char *end;

	if (!sym || !module)
		return false;
	slash = strrchr(module, '/');
	base = slash ? slash + 1 : module;
	len = strlen(base);
	if (strncmp(sym, base, len) || strncmp(sym + len, "!0x", 3) ||
	    !isxdigit((unsigned char)sym[len + 3]))
		return false;
	*start = strtoull(sym + len + 3, &end, 16);
	return !*end;
}

/*
 * The stats record, besides the counters: when the recording began
 * (CLOCK_REALTIME, ns since the epoch, unlike ts_ns) and how long it ran;
 * and when its window began (CLOCK_MONOTONIC, as ts_ns): the part of a
 * wait before it is in no weight_ns. Absent in older recordings, whose
 * weight_ns are whole waits.
 */
#define REC_RECORDING_START_NS "recording_start_ns"
#define REC_RECORDING_DURATION_NS "recording_duration_ns"
#define REC_RECORDING_START_TS_NS "recording_start_ts_ns"
/*
 * And the executable profiled, which a report's pprof names as its main
 * binary as the live one did (profile.main_binary). Absent in older
 * recordings.
 */
#define REC_RECORDING_MAIN_BINARY "recording_main_binary"
/*
 * -F: the CPU time one on-CPU sample stands for (1e9 / HZ), so that a
 * report knows the recording sampled even where no sample came. Absent
 * without -F.
 */
#define REC_RECORDING_SAMPLE_PERIOD_NS "recording_sample_period_ns"

#endif
