/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stacks of a wait's or a waker's ring buffer record, symbolized: the
 * kernel stack without the scheduler's frames above the blocking code; the
 * user stack however the BPF side took it (a frame-pointer walk, that walk
 * with its leaf mended, a copy unwound with CFI), ended where the thread's
 * own frames end, a frame-pointer loop cut, and a wait's Python frames put
 * in. Each distinct raw stack is symbolized once: the kernel's in one
 * cache, user stacks in one per process image.
 */
#ifndef OFFCPU_STACK_BUILDER_H
#define OFFCPU_STACK_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct stack_builder;

struct stack_builder_opts {
	/*
	 * Told of each process before its first user stack is cached, so
	 * that its owner holds what it keeps of a process from that moment
	 * (trace/reaper.h); 0, or non-zero when it could not, which the build
	 * returns as -ENOMEM. May be NULL.
	 */
	int (*process_new)(void *ctx, uint32_t pid);
	void *ctx;
};

/* What a record's stacks were built into; interned in the profile. */
struct built_stacks {
	const struct stack *kernel_stack; /* NULL: none */
	const struct stack *user_stack;	  /* NULL: none */
	/* What the user stack's goroutine parked for (a static string), or NULL. */
	const char *parked;
	/* The user stack stopped before the thread's root (depth, copy, CFI). */
	bool cut_short;
};

/* A wait's Python frames, named, leaf first (python__name). */
struct python_frames {
	const struct frame *frames;
	size_t nr;
	uint64_t c_call_ends; /* as python_merge takes it */
};

int stack_builder__new(struct profile *profile, struct symbolizer *symbolizer,
		       const struct stack_builder_opts *o, struct stack_builder **out);
void stack_builder__free(struct stack_builder *b);
/*
 * The stacks of r, a wait's record of size bytes whose frame counts were
 * checked against size; python, if not NULL, its Python frames, put in
 * place of the evaluator's in the user stack. -EINVAL: r is shorter than
 * its user stack copy; -ENOMEM.
 */
int stack_builder__wait(struct stack_builder *b, const struct offcpu_wait_record *r, size_t size,
			const struct python_frames *python, struct built_stacks *out);
/* The same for a waker's record (no leaf mended, no loop cut, no Python frames). */
int stack_builder__waker(struct stack_builder *b, const struct offcpu_waker_record *r, size_t size,
			 struct built_stacks *out);
/* A new image or a gone process: its user stacks are forgotten. */
void stack_builder__forget_process(struct stack_builder *b, uint32_t pid);
/*
 * Forgets every stack cached, once the profile's were taken
 * (profile__take_stacks): the next records intern theirs anew. -ENOMEM:
 * some are kept.
 */
int stack_builder__forget_stacks(struct stack_builder *b);

#endif
