/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a symbolized user stack really ends: a
 * frame-pointer walk does not know where a thread's own frames stop. Go's
 * stack switches (runtime.mcall, runtime.systemstack) chain on into a
 * goroutine's frames, its roots (runtime.mstart, runtime.goexit,
 * runtime.rt0_go) into whatever words lie above them; and a return address
 * in no executable mapping (a Go heap word, 0xc000024000) is no frame, nor
 * is anything the walk found from it.
 */
#ifndef OFFCPU_STACK_END_H
#define OFFCPU_STACK_END_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/frame.h"

/*
 * Frames to keep of frames[0..nr), leaf first: up to and including a stack
 * switch or a root, and none from the first one past the leaf in no
 * executable mapping when maps_known (its process's mappings were read:
 * otherwise no frame has a module and each is kept; the caller also passes
 * false for a stack its unwinder found by CFI, which takes no word for a
 * frame).
 */
size_t stack_end__user(const struct frame *frames, size_t nr, bool maps_known);

/* Whether frames[i] (kept by stack_end__user) is Go's runtime.mcall: a goroutine parked. */
bool stack_end__is_goroutine_switch(const struct frame *f);

#endif
