/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go's parking paths. A Go thread (an M) goes off CPU in
 * the runtime's scheduler, whatever its goroutines wait for: futex and
 * epoll_wait from runtime.findRunnable, so the kernel alone says
 * lock:futex or poll:epoll of every wait. What the M waits for is told by
 * its own frames (an idle M, sysmon, the network poller) and, where it went
 * looking for work because the goroutine it ran parked (runtime.mcall into
 * runtime.park_m), by why that goroutine parked: the caller of
 * runtime.gopark, on the goroutine's stack, past the M's own frames.
 */
#ifndef OFFCPU_GOROUTINE_H
#define OFFCPU_GOROUTINE_H

#include <stddef.h>

#include "profile/frame.h"

/*
 * The class of a parked goroutine's wait from its frames, leaf first (those
 * past runtime.mcall): time.Sleep is "sleep", a channel "lock:go-chan",
 * select "lock:go-select", sync.Mutex "lock:go-mutex", a network or file
 * descriptor "poll:go-netpoll"...; NULL if it parked for none of those.
 * A static string.
 */
const char *goroutine__park_class(const struct frame *frames, size_t nr);

/*
 * The class an M's own user frames (its stack ending at runtime.mcall or
 * its root) say, or NULL if they are none of the runtime's waiting paths.
 */
const char *goroutine__m_class(const struct frame *frames, size_t nr);

#endif
