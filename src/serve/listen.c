// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/parse.h"
#include "serve/listen.h"

int listen_addr__parse(const char *text, struct listen_addr *out)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&out->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->addr;
	const char *colon = strrchr(text, ':');
	char host[INET6_ADDRSTRLEN + 2];
	size_t host_len;
	uint64_t port;

	memset(out, 0, sizeof(*out));
	if (!colon || parse__uint(colon + 1, 1, 65535, &port))
		return -EINVAL;
	host_len = (size_t)(colon - text);
	if (host_len >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, host_len);
	host[host_len] = '\0';
	if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
		host[host_len - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*in6);
		out->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
		return 0;
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	out->len = sizeof(*in4);
	if (!host_len) {
		in4->sin_addr.s_addr = htonl(INADDR_ANY);
		return 0;
	}
	if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
		return -EINVAL;
	/* 127.0.0.0/8 */
	out->loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

int listen_addr__bind(const struct listen_addr *a)
{
	int fd = socket(a->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, err;

	if (fd < 0)
		return -errno;
	/* A restarted unit binds at once, not after TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * A full accept queue drops a connection's SYN, and its client tries
	 * again only a second later: a user reconnecting at once whenever cut
	 * (1,500 connects a second) made another user's scrape take 1.008 s
	 * with a queue of 64. The kernel caps this at net.core.somaxconn.
	 */
	if (bind(fd, (const struct sockaddr *)&a->addr, a->len) || listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
