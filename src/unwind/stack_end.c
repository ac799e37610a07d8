// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "lib/array.h"
#include "unwind/stack_end.h"

/*
 * Go's own boundaries. gdb's `thread apply all bt` stops at runtime.mcall
 * (the M's g0 stack: mcall switched to it from the goroutine that parked,
 * whose frames are the goroutine's, not this thread's wait), and past
 * runtime.mstart finds only words of the thread's start (Go 1.19, tested in
 * tests/integration/test_go.py). Assembly functions are named with their
 * ABI in the symbol table (runtime.mcall.abi0); both are matched.
 */
static const char *const go_stack_ends[] = {
	"runtime.mcall",       /* a goroutine parked: the M's scheduler below */
	"runtime.systemstack", /* a goroutine's call on the M's stack */
	"runtime.mstart",      /* the root of every M */
	"runtime.goexit",      /* the root of every goroutine */
	"runtime.rt0_go",      /* the main thread's start */
};

static bool named(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (!sym[n] || !strcmp(sym + n, ".abi0"));
}

static bool is_go_stack_end(const struct frame *f)
{
	size_t i;

	if (!f->sym || strncmp(f->sym, "runtime.", 8))
		return false;
	for (i = 0; i < ARRAY_SIZE(go_stack_ends); i++) {
		if (named(f->sym, go_stack_ends[i]))
			return true;
	}
	return false;
}

bool stack_end__is_goroutine_switch(const struct frame *f)
{
	return f->sym && named(f->sym, "runtime.mcall");
}

size_t stack_end__user(const struct frame *frames, size_t nr, bool maps_known)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		/* The leaf is where the thread is, whatever maps it. */
		if (i && maps_known && !frames[i].module)
			return i;
		if (is_go_stack_end(&frames[i]))
			return i + 1;
	}
	return nr;
}
