/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user that owns the other end of an accepted TCP connection, when
 * that end is a socket on this host (in this network namespace): the
 * kernel's own answer, NETLINK_SOCK_DIAG's inet_diag lookup of the exact
 * four-tuple, which gives the socket's owner (idiag_uid).
 */
#ifndef OFFCPU_PEER_OWNER_H
#define OFFCPU_PEER_OWNER_H

#include <sys/types.h>

struct peer_owner;

/* A netlink socket for the lookups; -errno. */
int peer_owner__new(struct peer_owner **out);
/* NULL is fine. */
void peer_owner__free(struct peer_owner *p);
/*
 * The owner of the socket at the other end of conn_fd. -ENOENT: no socket
 * of this host holds that end (a remote peer, or one in another network
 * namespace); other -errno: the lookup failed. One thread at a time.
 */
int peer_owner__lookup(struct peer_owner *p, int conn_fd, uid_t *uid);

#endif
