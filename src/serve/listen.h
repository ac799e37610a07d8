/* SPDX-License-Identifier: GPL-2.0 */
/* offcpu serve's --listen ADDR:PORT, parsed, checked and bound. */
#ifndef OFFCPU_LISTEN_H
#define OFFCPU_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>

/* The default: loopback only, a port of its own (9464 is OpenTelemetry's Prometheus exporter's). */
#define LISTEN_DEFAULT "127.0.0.1:9465"

struct listen_addr {
	struct sockaddr_storage addr;
	socklen_t len;
	bool loopback;
};

/*
 * "127.0.0.1:9465", "[::1]:9465", "0.0.0.0:80", ":9465" (every address);
 * a numeric address and a port 1..65535. -EINVAL for anything else.
 */
int listen_addr__parse(const char *text, struct listen_addr *out);
/* A listening TCP socket on it, close-on-exec; -errno. */
int listen_addr__bind(const struct listen_addr *a);

#endif
