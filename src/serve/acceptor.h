/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offcpu serve's accept loop: a thread that takes every connection queued
 * on the listening socket and hands each over at once. libmicrohttpd's own
 * loop took one a poll and made a thread for each, refused ones too: one
 * user reconnecting as fast as it was refused had serve start and join
 * 2,700 threads a second (32,000 refusals in 12 s, measured).
 */
#ifndef OFFCPU_ACCEPTOR_H
#define OFFCPU_ACCEPTOR_H

#include <sys/socket.h>

struct acceptor;

/*
 * A connection accepted (non-blocking, close-on-exec): the function owns
 * fd from here. Called on the acceptor's thread, one at a time.
 */
typedef void acceptor_fn(void *ctx, int fd, const struct sockaddr *addr, socklen_t addr_len);

/*
 * Accepts on listen_fd (bound, listening; owned from here, closed on
 * error too) until acceptor__stop. The thread inherits the caller's
 * signal mask. -errno.
 */
int acceptor__start(int listen_fd, acceptor_fn *fn, void *ctx, struct acceptor **out);
/* Stops the thread and closes the listening socket: clients queued there are reset. NULL is fine. */
void acceptor__stop(struct acceptor *a);

#endif
