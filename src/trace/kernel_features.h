/* SPDX-License-Identifier: GPL-2.0 */
/* What the running kernel offers offcpu, from its BTF and its release. */
#ifndef OFFCPU_KERNEL_FEATURES_H
#define OFFCPU_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

struct btf;

/* The kernel's BTF unless path names another file. */
#define KERNEL_BTF_PATH "/sys/kernel/btf/vmlinux"

/* The kernel's BTF, or NULL after the one line that says why not. */
struct btf *kernel_features__load_btf(const char *path);

/* Number of arguments of a tracepoint in the kernel's BTF; -ENOENT if absent. */
int kernel_features__tracepoint_args(const struct btf *vmlinux, const char *name);

/*
 * Whether the optional tracepoint name is one whose absence costs a
 * feature, not the run: such a program is left out, not refused.
 */
bool kernel_features__optional_tracepoint(const char *name);

/* The optional features a kernel may lack, which offcpu goes without. */
enum kernel_feature {
	KERNEL_FEATURE_RSEQ_UPDATE,	/* user stacks deferred to the way back to user space */
	KERNEL_FEATURE_LOCAL_TIMER,	/* x86's local timer tracepoints: hardirq wakers */
	KERNEL_FEATURE_SCHED_INFO,	/* run-queue time */
	KERNEL_FEATURE_LOCK_CONTENTION, /* lock:contention_begin/end: kernel locks as objects */
	KERNEL_FEATURE_COUNT,
};

/* Whether the kernel whose BTF this is has feature. */
bool kernel_features__has(const struct btf *vmlinux, enum kernel_feature feature);

/*
 * Whether the running kernel is PREEMPT_RT (its uname version says so:
 * scripts/mkcompile_h), where the scheduler's programs must not allocate.
 */
bool kernel_features__preempt_rt(void);

/* The one line on stderr that says feature is missing and what that costs. */
void kernel_features__say_missing(enum kernel_feature feature);

/* Called with each tracepoint the BPF object attaches to. */
typedef void (*kernel_features_tracepoint_fn)(const char *name, void *ctx);
typedef int (*kernel_features_each_fn)(kernel_features_tracepoint_fn fn, void *ctx);

/*
 * offcpu --version -v: what this kernel has of what offcpu uses, the
 * required tracepoints (each_tracepoint lists them) and map types and the optional
 * features with what a user loses without each. Returns 0 when every
 * required one is there, -ENOENT when one is missing (said in the list),
 * or the BTF's error (said on stderr).
 */
int kernel_features__print(FILE *out, const char *btf_path,
			   kernel_features_each_fn each_tracepoint);

#endif
