// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "classify/goroutine.h"
#include "classify/rules.h"
#include "lib/array.h"

struct go_rule {
	const char *pattern; /* a glob over the function that parked */
	const char *wait_class;
};

/*
 * The callers of runtime.gopark / runtime.goparkunlock in Go 1.19 (their
 * waitReason in runtime/runtime2.go), first match wins. Semaphores are
 * named by their caller in package sync, one frame further.
 */
static const struct go_rule park_rules[] = {
	{ "time.Sleep", "sleep" },
	{ "runtime.chanrecv*", "lock:go-chan" },
	{ "runtime.chansend*", "lock:go-chan" },
	{ "runtime.selectgo", "lock:go-select" },
	{ "runtime.block", "lock:go-select" }, /* select {} */
	{ "runtime.netpollblock", "poll:go-netpoll" },
	{ "sync.runtime_SemacquireMutex", "lock:go-mutex" },
	{ "sync.runtime_SemacquireRWMutex*", "lock:go-rwmutex" },
	{ "sync.runtime_notifyListWait", "lock:go-cond" },
	{ "sync.runtime_Semacquire", "lock:go-semaphore" }, /* sync.WaitGroup */
	{ "runtime.gcBgMarkWorker", "sleep:go-idle" },
	{ "runtime.bgsweep", "sleep:go-idle" },
	{ "runtime.bgscavenge", "sleep:go-idle" },
	{ "runtime.forcegchelper", "sleep:go-idle" },
	{ "runtime.runfinq", "sleep:go-idle" },
};

/* An M's own paths, over its whole stack (it ends at runtime.mcall or its root). */
static const struct go_rule m_rules[] = {
	{ "runtime.sysmon", "sleep:go-sysmon" },  /* usleep, or notetsleep while idle */
	{ "runtime.templateThread", "sleep:go-idle" },  /* waits to start Ms */
	{ "runtime.netpoll", "poll:go-netpoll" }, /* findRunnable blocks in epoll_wait */
	/* Only netpoll calls it; a frame-pointer walk skips netpoll (epollwait keeps no frame). */
	{ "runtime.epollwait*", "poll:go-netpoll" },
	{ "runtime.stopm", "sleep:go-idle" }, /* an M with nothing to run */
	{ "runtime.gcstopm", "sleep:go-idle" },
	{ "runtime.stoplockedm", "sleep:go-idle" },
};

static bool is(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return sym && !strncmp(sym, name, n) && (!sym[n] || !strcmp(sym + n, ".abi0"));
}

static const char *rule_of(const struct go_rule *rules, size_t nr_rules, const char *sym)
{
	size_t r;

	for (r = 0; sym && r < nr_rules; r++) {
		if (rules__symbol_matches(rules[r].pattern, sym))
			return rules[r].wait_class;
	}
	return NULL;
}

/*
 * frames[0] is the caller of runtime.gopark: mcall was called by gopark,
 * whose return address the chain does not hold (it is the goroutine's
 * saved PC), so the next frame is gopark's caller's (chanrecv, time.Sleep).
 */
const char *goroutine__park_class(const struct frame *frames, size_t nr)
{
	size_t i = 0;

	if (i < nr &&
	    (is(frames[i].sym, "runtime.gopark") || is(frames[i].sym, "runtime.goparkunlock")))
		i++;
	if (i < nr && is(frames[i].sym, "runtime.goparkunlock"))
		i++;
	/* semacquire1 parks for its caller in sync. */
	if (i + 1 < nr && is(frames[i].sym, "runtime.semacquire1"))
		i++;
	return i < nr ? rule_of(park_rules, ARRAY_SIZE(park_rules), frames[i].sym) : NULL;
}

const char *goroutine__m_class(const struct frame *frames, size_t nr)
{
	const char *found;
	size_t i;

	for (i = 0; i < nr; i++) {
		found = rule_of(m_rules, ARRAY_SIZE(m_rules), frames[i].sym);
		if (found)
			return found;
	}
	return NULL;
}
