// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/peer_owner.h"

struct peer_owner {
	int fd;
	unsigned int seq;
};

struct diag_request {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 req;
};

int peer_owner__new(struct peer_owner **out)
{
	struct peer_owner *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (p->fd < 0) {
		err = -errno;
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

void peer_owner__free(struct peer_owner *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

/* addr as inet_diag spells it; false for a family it does not look up. */
static bool diag_address(const struct sockaddr_storage *ss, __u8 *family, __be32 *addr,
			 __be16 *port)
{
	const struct sockaddr_in *in4 = (const void *)ss;
	const struct sockaddr_in6 *in6 = (const void *)ss;

	if (ss->ss_family == AF_INET) {
		*family = AF_INET;
		addr[0] = in4->sin_addr.s_addr;
		*port = in4->sin_port;
		return true;
	}
	if (ss->ss_family != AF_INET6)
		return false;
	*port = in6->sin6_port;
	/* A v4 client of a dual-stack listener: its socket is found by its v4 addresses. */
	if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		*family = AF_INET;
		memcpy(addr, &in6->sin6_addr.s6_addr[12], 4);
		return true;
	}
	*family = AF_INET6;
	memcpy(addr, &in6->sin6_addr, 16);
	return true;
}

int peer_owner__lookup(struct peer_owner *p, int conn_fd, uid_t *uid)
{
	struct sockaddr_storage local, peer;
	socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
	struct diag_request r = { 0 };
	__u8 local_family, peer_family;
	char buf[1024];
	ssize_t n;

	if (getsockname(conn_fd, (struct sockaddr *)&local, &local_len) ||
	    getpeername(conn_fd, (struct sockaddr *)&peer, &peer_len))
		return -errno;
	/* The peer's socket: its source is our peer, its destination us. */
	if (!diag_address(&peer, &peer_family, r.req.id.idiag_src, &r.req.id.idiag_sport) ||
	    !diag_address(&local, &local_family, r.req.id.idiag_dst, &r.req.id.idiag_dport) ||
	    peer_family != local_family)
		return -EAFNOSUPPORT;
	r.nlh.nlmsg_len = sizeof(r);
	r.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r.nlh.nlmsg_flags = NLM_F_REQUEST;
	r.nlh.nlmsg_seq = ++p->seq;
	r.req.sdiag_family = peer_family;
	r.req.sdiag_protocol = IPPROTO_TCP;
	r.req.idiag_states = ~0U;
	r.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	r.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (send(p->fd, &r, sizeof(r), 0) != sizeof(r))
		return -errno;
	/*
	 * The kernel answers an exact lookup inside send(): the reply is
	 * queued by now, so the accepting thread never waits here. Replies
	 * of an earlier lookup, if any, are skipped by their sequence.
	 */
	for (;;) {
		const struct nlmsghdr *h = (const void *)buf;

		n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return -errno;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_seq != p->seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -ENOENT;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
				return -EPROTO;
			/* A TIME_WAIT socket has no owner: inet_diag says uid 0 for it. */
			if (m->idiag_state == TCP_TIME_WAIT)
				return -ENOENT;
			*uid = m->idiag_uid;
			return 0;
		}
	}
}
