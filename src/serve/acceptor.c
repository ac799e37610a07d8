// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/log.h"
#include "serve/acceptor.h"

/* Out of descriptors or memory: the next try comes this much later. */
#define STARVED_RETRY_MS 100

struct acceptor {
	int listen_fd;
	int wake_fd; /* an eventfd: written once, at the stop */
	atomic_bool stopping;
	acceptor_fn *fn;
	void *ctx;
	pthread_t thread;
};

/* Whether accept4's error is the one connection's, gone before it was taken. */
static bool connection_gone(int err)
{
	return err == ECONNABORTED || err == EPROTO || err == EPERM || err == EINTR ||
	       err == ENETDOWN || err == ENONET || err == EHOSTDOWN || err == EHOSTUNREACH ||
	       err == ENETUNREACH || err == EOPNOTSUPP;
}

/*
 * Takes what is queued until the queue is empty, then polls: a connection
 * waits behind those queued before it, each costing what the function
 * does with it, no more.
 */
static void *accept_loop(void *arg)
{
	struct acceptor *a = arg;
	struct pollfd fds[2] = { { .fd = a->listen_fd, .events = POLLIN },
				 { .fd = a->wake_fd, .events = POLLIN } };
	struct sockaddr_storage addr;
	bool starved = false;
	socklen_t len;
	int fd;

	while (!atomic_load(&a->stopping)) {
		len = sizeof(addr);
		fd = accept4(a->listen_fd, (struct sockaddr *)&addr, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			starved = false;
			a->fn(a->ctx, fd, (const struct sockaddr *)&addr, len);
			continue;
		}
		if (connection_gone(errno))
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			poll(fds, 2, -1);
			continue;
		}
		/* EMFILE, ENFILE, ENOBUFS, ENOMEM: said once until one is accepted again. */
		if (!starved)
			log__warn("serve: cannot accept connections (%s): trying every %d ms",
				  strerror(errno), STARVED_RETRY_MS);
		starved = true;
		poll(&fds[1], 1, STARVED_RETRY_MS);
	}
	return NULL;
}

int acceptor__start(int listen_fd, acceptor_fn *fn, void *ctx, struct acceptor **out)
{
	struct acceptor *a = calloc(1, sizeof(*a));
	int flags = fcntl(listen_fd, F_GETFL), err;

	if (!a) {
		close(listen_fd);
		return -ENOMEM;
	}
	if (flags < 0 || fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK)) {
		err = -errno;
		goto fail;
	}
	a->listen_fd = listen_fd;
	a->fn = fn;
	a->ctx = ctx;
	atomic_init(&a->stopping, false);
	a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->wake_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&a->thread, NULL, accept_loop, a);
	if (err) {
		close(a->wake_fd);
		goto fail;
	}
	*out = a;
	return 0;
fail:
	close(listen_fd);
	free(a);
	return err;
}

void acceptor__stop(struct acceptor *a)
{
	uint64_t one = 1;

	if (!a)
		return;
	atomic_store(&a->stopping, true);
	if (write(a->wake_fd, &one, sizeof(one)) != sizeof(one))
		log__warn("serve: cannot wake the accept loop: %s", strerror(errno));
	pthread_join(a->thread, NULL);
	close(a->wake_fd);
	close(a->listen_fd);
	free(a);
}
