// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "serve/acceptor.h"
#include "serve/peer_owner.h"
#include "serve/server.h"

/* A limit's number in the messages that name it. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* /healthz: unhealthy when the main loop has not come round for this long. */
#define ALIVE_NS (5 * 1000000000ULL)
/* A waiting handler looks at its client this often. */
#define WAIT_STEP_MS 100
/* A /metrics client waits this long for a fresh rendering, then takes the last. */
#define METRICS_WAIT_MS 2000
/* Idle connections (a client that sends nothing) are closed after this many seconds. */
#define IDLE_TIMEOUT_S 30
/* At stop, connections still open get this long to send what they were answered. */
#define STOP_GRACE_MS 1000
/*
 * A request's line and headers must be in this long after the connection
 * was accepted, or after its request line came on a kept-alive connection:
 * the idle timeout never fires while a byte trickles in every few seconds,
 * and 70 such connections from one user shut every scraper out.
 */
#define REQUEST_DEADLINE_MS 5000
/*
 * An answer must be out this long after it was queued, or the connection
 * is cut: a client that reads a byte now and then counts as active to
 * libmicrohttpd's idle timeout, and held its connection and thread for as
 * long as it liked. 10 s lets a 2 MB profile go at 200 KB/s.
 */
#define SEND_DEADLINE_MS 10000
/* The deadlines are looked at this often. */
#define DEADLINE_STEP_MS 250

/*
 * libmicrohttpd may hold this many connections: more than ours, as it
 * counts a closed one until its thread is joined; at its limit it would
 * close a connection we admitted without a word to us.
 */
#define DAEMON_CONNECTION_LIMIT (2 * SERVER_MAX_CONNECTIONS)

/* One TCP connection, from its accept to its close (libmicrohttpd's socket context). */
struct client {
	struct client *next, **pprev;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool owner_known; /* a peer on this host: the caps count its owner, uid */
	uid_t uid;
	int conn_fd;	 /* the socket libmicrohttpd was given */
	bool attached;	 /* libmicrohttpd has told us of it: it tells us of the close */
	int fd;		 /* our dup of its socket: its number is never another's under us */
	uint64_t due_ns; /* its headers must be in, or its answer out, by then; 0: none pending */
	bool idle;	 /* due_ns is a kept-alive connection's idle timeout: no drop */
	bool window;	 /* it waits for a profile window */
};

struct profile_request {
	struct server *server;
	struct profile_request *next; /* pending list */
	unsigned int refs;	      /* the handler's, the main thread's */
	uint64_t seconds;
	enum profile_kind kind;
	bool cancelled;
	bool done;
	char *bytes;
	size_t size;
	int err;
	pthread_cond_t cond;
};

struct server {
	struct MHD_Daemon *daemon;
	struct acceptor *acceptor;
	pthread_mutex_t lock;
	pthread_cond_t metrics_cond;
	struct profile_request *pending_head, **pending_tail;
	uint32_t windows_open;
	struct client *clients;
	struct peer_owner *owner; /* NULL: every client counted by its address */
	bool sampling;		  /* -F: the on-CPU profiles are served */
	uint64_t connections_refused;
	uint64_t connections_cut;
	pthread_t watchdog;
	bool watchdog_started;
	pthread_cond_t watchdog_cond;
	bool stopping;
	uint64_t alive_ns;
	uint64_t metrics_wanted; /* requests asked for */
	uint64_t metrics_given;	 /* requests the last rendering answers */
	char *metrics;
	size_t metrics_size;
};

static void request_put(struct server *s, struct profile_request *r)
{
	bool last;

	pthread_mutex_lock(&s->lock);
	last = --r->refs == 0;
	if (last)
		s->windows_open--;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	pthread_cond_destroy(&r->cond);
	free(r->bytes);
	free(r);
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status, const char *type,
			       void *data, size_t size, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(size, data, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(data);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned int status,
				    const char *text)
{
	return respond(conn, status, "text/plain; charset=utf-8", (void *)text, strlen(text),
		       MHD_RESPMEM_PERSISTENT);
}

/* Whether the client closed its side (or the connection failed) while we waited. */
static bool client_gone(struct MHD_Connection *conn, bool *watch)
{
	const union MHD_ConnectionInfo *info;
	struct pollfd p = { .events = POLLIN | POLLRDHUP };
	char byte;

	if (!*watch)
		return false;
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!info)
		return false;
	p.fd = info->connect_fd;
	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
		return true;
	/* Bytes of a next request: not a hang-up, and poll would say so forever. */
	if (recv(p.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		return true;
	*watch = false;
	return false;
}

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int init_cond(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return -err;
}

static struct client *client_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

static bool same_address(const struct client *a, const struct client *b)
{
	const struct sockaddr_in *a4 = (const void *)&a->addr, *b4 = (const void *)&b->addr;
	const struct sockaddr_in6 *a6 = (const void *)&a->addr, *b6 = (const void *)&b->addr;

	if (a->addr.ss_family != b->addr.ss_family)
		return false;
	if (a->addr.ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->addr.ss_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
	return false;
}

/* Whether a and b count as one client: the same user on this host, else the same address. */
static bool same_client(const struct client *a, const struct client *b)
{
	if (a->owner_known != b->owner_known)
		return false;
	return a->owner_known ? a->uid == b->uid : same_address(a, b);
}

/* The connections of c's client, and the profile windows they wait for. Under the lock. */
static unsigned int connections_of_client(const struct server *s, const struct client *c)
{
	const struct client *o;
	unsigned int n = 0;

	for (o = s->clients; o; o = o->next)
		if (same_client(o, c))
			n++;
	return n;
}

static unsigned int connections_open(const struct server *s)
{
	const struct client *o;
	unsigned int n = 0;

	for (o = s->clients; o; o = o->next)
		n++;
	return n;
}

static unsigned int windows_of_client(const struct server *s, const struct client *c)
{
	const struct client *o;
	unsigned int n = 0;

	for (o = s->clients; o; o = o->next)
		if (o->window && same_client(o, c))
			n++;
	return n;
}

/*
 * A connection past a cap: told so and closed before a byte of it is
 * read. The answer fits any fresh socket's buffer. What the client sent
 * already is read away first: a socket closed with bytes unread is reset,
 * and the reset can beat the answer to the client's reads.
 */
static void refuse(int fd, unsigned int status, const char *why)
{
	char answer[320], unread[4096];
	int n = snprintf(answer, sizeof(answer),
			 "HTTP/1.1 %u %s\r\nConnection: close\r\n"
			 "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s",
			 status, status == MHD_HTTP_TOO_MANY_REQUESTS ? "Too Many Requests"
								   : "Service Unavailable",
			 strlen(why), why);

	/* Unsent, the client sees its connection closed unanswered: nothing else to do. */
	send(fd, answer, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	recv(fd, unread, sizeof(unread), MSG_DONTWAIT);
	close(fd);
}

static void client_unlink(struct client *c)
{
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
}

static void client_free(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/*
 * The client on socket fd that libmicrohttpd has not told us of yet. When
 * accept gives that number again, libmicrohttpd closed the socket
 * unstarted (out of memory), and never will. Under the lock.
 */
static struct client *unstarted_client(struct server *s, int fd)
{
	struct client *o;

	for (o = s->clients; o; o = o->next)
		if (!o->attached && o->conn_fd == fd)
			return o;
	return NULL;
}

/*
 * On the acceptor's thread, before libmicrohttpd sees the connection: one
 * past its client's cap, or past the cap of all, costs a lookup and a
 * send, no thread.
 */
static void admit(void *cls, int fd, const struct sockaddr *addr, socklen_t addr_len)
{
	static const char per_client[] = "too many connections from this client: at most " STR(
	    SERVER_MAX_CONNECTIONS_PER_CLIENT) "\n";
	static const char in_all[] = "too many connections: at most " STR(
	    SERVER_MAX_CONNECTIONS) "\n";
	struct server *s = cls;
	struct client *c = calloc(1, sizeof(*c)), *stale;
	const char *why = NULL;

	if (!c) {
		refuse(fd, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
		return;
	}
	c->addr_len = addr_len < sizeof(c->addr) ? addr_len : sizeof(c->addr);
	memcpy(&c->addr, addr, c->addr_len);
	/*
	 * A peer whose socket is not found on this host (remote, in another
	 * network namespace, gone already, or the lookup failed) is counted
	 * by its address: that is all that is known of it, and a local user
	 * gains nothing by it, as every socket of this host is found.
	 */
	c->owner_known = s->owner && !peer_owner__lookup(s->owner, fd, &c->uid);
	c->conn_fd = fd;
	c->fd = -1;
	pthread_mutex_lock(&s->lock);
	stale = unstarted_client(s, fd);
	if (stale)
		client_unlink(stale);
	if (s->stopping)
		why = "offcpu is stopping\n";
	else if (connections_of_client(s, c) >= SERVER_MAX_CONNECTIONS_PER_CLIENT)
		why = per_client;
	else if (connections_open(s) >= SERVER_MAX_CONNECTIONS)
		why = in_all;
	if (why) {
		s->connections_refused++;
		pthread_mutex_unlock(&s->lock);
		if (stale)
			client_free(stale);
		free(c);
		refuse(fd, why == per_client ? MHD_HTTP_TOO_MANY_REQUESTS
					     : MHD_HTTP_SERVICE_UNAVAILABLE,
		       why);
		return;
	}
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	c->due_ns = clock__monotonic_ns() + REQUEST_DEADLINE_MS * 1000000ULL;
	c->next = s->clients;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &s->clients;
	s->clients = c;
	pthread_mutex_unlock(&s->lock);
	if (stale)
		client_free(stale);
	/* Refused (out of memory), libmicrohttpd has closed the socket and never tells of it. */
	if (MHD_add_connection(s->daemon, fd, addr, addr_len) != MHD_YES) {
		pthread_mutex_lock(&s->lock);
		client_unlink(c);
		pthread_mutex_unlock(&s->lock);
		client_free(c);
	}
}

/* libmicrohttpd's thread: the connection admit gave it starts, or has closed. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *info;
	struct server *s = cls;
	struct client *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		pthread_mutex_lock(&s->lock);
		client_unlink(c);
		pthread_mutex_unlock(&s->lock);
		client_free(c);
		return;
	}
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!info)
		return;
	pthread_mutex_lock(&s->lock);
	c = unstarted_client(s, info->connect_fd);
	if (c)
		c->attached = true;
	pthread_mutex_unlock(&s->lock);
	*socket_context = c;
}

/* A request line came: its headers are due REQUEST_DEADLINE_MS from now at the latest. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct server *s = cls;
	struct client *c = client_of(conn);
	uint64_t due = clock__monotonic_ns() + REQUEST_DEADLINE_MS * 1000000ULL;

	(void)uri;
	if (!c)
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (!c->due_ns || c->due_ns > due) {
		c->due_ns = due;
		c->idle = false;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Answered: a kept-alive connection's next request is due within the idle timeout. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct server *s = cls;
	struct client *c = client_of(conn);

	(void)con_cls;
	(void)code;
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	c->due_ns = clock__monotonic_ns() + IDLE_TIMEOUT_S * 1000000000ULL;
	c->idle = true;
	pthread_mutex_unlock(&s->lock);
}

/*
 * Connections past their deadline are shut down (our dup of the socket):
 * libmicrohttpd's thread then reads the end and closes it as a hang-up.
 * They are reset at that close (a zero linger): a plain close leaves the
 * answer's unsent bytes in the kernel, still trickling to a slow reader.
 */
static void *watch_deadlines(void *arg)
{
	const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	struct server *s = arg;
	struct timespec ts;
	struct client *c;
	uint64_t now;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping) {
		deadline_in(&ts, DEADLINE_STEP_MS);
		pthread_cond_timedwait(&s->watchdog_cond, &s->lock, &ts);
		now = clock__monotonic_ns();
		for (c = s->clients; c; c = c->next) {
			if (!c->due_ns || now < c->due_ns || c->fd < 0)
				continue;
			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
			shutdown(c->fd, SHUT_RDWR);
			if (!c->idle)
				s->connections_cut++;
			c->due_ns = 0;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* /debug/pprof/offcpu?seconds=N and -F's: blocks this connection's thread only. */
static enum MHD_Result serve_profile(struct server *s, struct MHD_Connection *conn,
				     enum profile_kind kind)
{
	const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	struct client *c = client_of(conn);
	uint64_t seconds = SERVER_DEFAULT_SECONDS;
	const char *why = NULL;
	struct profile_request *r;
	struct timespec ts;
	bool watch = true, gone = false;
	enum MHD_Result ret;

	if (kind != PROFILE_OFF_CPU && !s->sampling)
		return respond_text(conn, MHD_HTTP_NOT_FOUND,
				    "not found: on-CPU profiles need offcpu serve -F HZ\n");
	if (arg && parse__uint(arg, 1, SERVER_MAX_SECONDS, &seconds))
		return respond_text(
		    conn, MHD_HTTP_BAD_REQUEST,
		    "seconds: a whole number from 1 to " STR(SERVER_MAX_SECONDS) " (the cap)\n");
	r = calloc(1, sizeof(*r));
	if (!r || init_cond(&r->cond)) {
		free(r);
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
	}
	r->server = s;
	r->seconds = seconds;
	r->kind = kind;
	r->refs = 2;
	pthread_mutex_lock(&s->lock);
	if (s->stopping)
		why = "offcpu is stopping\n";
	else if (s->windows_open >= SERVER_MAX_WINDOWS)
		why = "too many profiles being recorded at once\n";
	else if (c && windows_of_client(s, c) >= SERVER_MAX_WINDOWS_PER_CLIENT)
		why = "too many profiles being recorded for this client at once: at most " STR(
		    SERVER_MAX_WINDOWS_PER_CLIENT) "\n";
	if (why) {
		bool stopping = s->stopping;

		pthread_mutex_unlock(&s->lock);
		pthread_cond_destroy(&r->cond);
		free(r);
		return respond_text(
		    conn, stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_TOO_MANY_REQUESTS,
		    why);
	}
	if (c)
		c->window = true;
	s->windows_open++;
	*s->pending_tail = r;
	s->pending_tail = &r->next;
	while (!r->done && !s->stopping) {
		deadline_in(&ts, WAIT_STEP_MS);
		pthread_cond_timedwait(&r->cond, &s->lock, &ts);
		if (r->done)
			break;
		pthread_mutex_unlock(&s->lock);
		gone = client_gone(conn, &watch);
		pthread_mutex_lock(&s->lock);
		if (gone) {
			/* The main thread drops its window at its next look. */
			r->cancelled = true;
			break;
		}
	}
	if (!r->done)
		r->cancelled = true;
	if (c)
		c->window = false;
	pthread_mutex_unlock(&s->lock);
	if (gone) {
		request_put(s, r);
		return MHD_NO;
	}
	if (!r->done) {
		request_put(s, r);
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "offcpu is stopping\n");
	}
	if (!r->bytes && r->err == -ECANCELED) {
		request_put(s, r);
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "offcpu is stopping\n");
	}
	if (!r->bytes) {
		request_put(s, r);
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "the profile could not be written\n");
	}
	ret = respond(conn, MHD_HTTP_OK, "application/octet-stream", r->bytes, r->size,
		      MHD_RESPMEM_MUST_FREE);
	r->bytes = NULL;
	request_put(s, r);
	return ret;
}

static enum MHD_Result serve_metrics(struct server *s, struct MHD_Connection *conn)
{
	struct timespec ts;
	uint64_t ticket;
	char *copy = NULL;
	size_t size = 0;

	deadline_in(&ts, METRICS_WAIT_MS);
	pthread_mutex_lock(&s->lock);
	ticket = ++s->metrics_wanted;
	while (s->metrics_given < ticket && !s->stopping)
		if (pthread_cond_timedwait(&s->metrics_cond, &s->lock, &ts) == ETIMEDOUT)
			break;
	if (s->metrics) {
		copy = malloc(s->metrics_size ? s->metrics_size : 1);
		if (copy) {
			memcpy(copy, s->metrics, s->metrics_size);
			size = s->metrics_size;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (!copy)
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no metrics yet\n");
	return respond(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", copy, size,
		       MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result serve_health(struct server *s, struct MHD_Connection *conn)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = !s->stopping && s->alive_ns && clock__monotonic_ns() - s->alive_ns < ALIVE_NS;
	pthread_mutex_unlock(&s->lock);
	return ok ? respond_text(conn, MHD_HTTP_OK, "ok\n")
		  : respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "not tracing\n");
}

static enum MHD_Result answer(struct server *s, struct MHD_Connection *conn, const char *url,
			      const char *method, size_t *upload_data_size)
{
	/* A body is not read: no path takes one. */
	if (*upload_data_size)
		return respond_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no body expected\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(s, conn);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return serve_profile(s, conn, PROFILE_OFF_CPU);
	if (!strcmp(url, "/healthz"))
		return serve_health(s, conn);
	if (!strcmp(url, "/debug/pprof/profile"))
		return serve_profile(s, conn, PROFILE_CPU);
	if (!strcmp(url, "/debug/pprof/wall"))
		return serve_profile(s, conn, PROFILE_WALL);
	if (s->sampling)
		return respond_text(conn, MHD_HTTP_NOT_FOUND,
				    "not found: /metrics, /debug/pprof/offcpu?seconds=N, "
				    "/debug/pprof/profile?seconds=N, /debug/pprof/wall?seconds=N, "
				    "/healthz\n");
	return respond_text(conn, MHD_HTTP_NOT_FOUND,
			    "not found: /metrics, /debug/pprof/offcpu?seconds=N, /healthz\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	struct client *c = client_of(conn);
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (c) {
		pthread_mutex_lock(&s->lock);
		c->due_ns = 0;
		pthread_mutex_unlock(&s->lock);
	}
	ret = answer(s, conn, url, method, upload_data_size);
	/* The answer is queued: it must be out by SEND_DEADLINE_MS (on_completed ends it). */
	if (c) {
		pthread_mutex_lock(&s->lock);
		c->due_ns = clock__monotonic_ns() + SEND_DEADLINE_MS * 1000000ULL;
		c->idle = false;
		pthread_mutex_unlock(&s->lock);
	}
	return ret;
}

int server__start(int listen_fd, bool verbose, bool sampling, struct server **out)
{
	struct server *s = calloc(1, sizeof(*s));
	sigset_t stop, saved;
	int err, owner_err;

	if (!s) {
		close(listen_fd);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	err = init_cond(&s->metrics_cond);
	if (!err) {
		err = init_cond(&s->watchdog_cond);
		if (err)
			pthread_cond_destroy(&s->metrics_cond);
	}
	if (err) {
		close(listen_fd);
		free(s);
		return err;
	}
	s->pending_tail = &s->pending_head;
	s->sampling = sampling;
	owner_err = peer_owner__new(&s->owner);
	if (owner_err)
		log__warn(
		    "cannot look up the users of local clients (%s): each address is a client",
		    strerror(-owner_err));
	/* SIGINT and SIGTERM are the main thread's: it stops tracing. Threads inherit the mask. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &saved);
	/* Our thread accepts (admit); libmicrohttpd's is woken for each connection it is given. */
	s->daemon = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET |
		MHD_USE_ITC | (verbose ? MHD_USE_ERROR_LOG : 0),
	    0, NULL, NULL, on_request, s, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)DAEMON_CONNECTION_LIMIT,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_URI_LOG_CALLBACK,
	    on_request_line, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
	if (s->daemon) {
		err = -pthread_create(&s->watchdog, NULL, watch_deadlines, s);
		s->watchdog_started = !err;
		if (err)
			close(listen_fd);
		else
			err = acceptor__start(listen_fd, admit, s, &s->acceptor);
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (!s->daemon) {
		close(listen_fd);
		server__stop(s);
		return -EIO;
	}
	if (err) {
		server__stop(s);
		return err;
	}
	*out = s;
	return 0;
}

/*
 * The handlers told to stop have queued their 503s: MHD_stop_daemon would
 * close their sockets before the answers went out. New connections are
 * refused, and those left get STOP_GRACE_MS to finish (a client that keeps
 * its connection open, as Prometheus does, costs that much at exit).
 */
static void let_answers_go_out(struct server *s)
{
	const union MHD_DaemonInfo *info;
	int i;

	acceptor__stop(s->acceptor);
	s->acceptor = NULL;

	for (i = 0; i < STOP_GRACE_MS / 20; i++) {
		info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!info || !info->num_connections)
			break;
		usleep(20000);
	}
	MHD_stop_daemon(s->daemon);
}

void server__stop(struct server *s)
{
	struct profile_request *r;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->metrics_cond);
	pthread_cond_broadcast(&s->watchdog_cond);
	pthread_mutex_unlock(&s->lock);
	if (s->watchdog_started)
		pthread_join(s->watchdog, NULL);
	/* Requests never taken by the main thread: the handlers answer 503 and let go. */
	while ((r = server__next_request(s))) {
		pthread_mutex_lock(&s->lock);
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&s->lock);
		request_put(s, r);
	}
	if (s->daemon)
		let_answers_go_out(s);
	pthread_cond_destroy(&s->metrics_cond);
	pthread_cond_destroy(&s->watchdog_cond);
	pthread_mutex_destroy(&s->lock);
	peer_owner__free(s->owner);
	free(s->metrics);
	free(s);
}

void server__alive(struct server *s, uint64_t now_ns)
{
	pthread_mutex_lock(&s->lock);
	s->alive_ns = now_ns;
	pthread_mutex_unlock(&s->lock);
}

struct profile_request *server__next_request(struct server *s)
{
	struct profile_request *r;

	pthread_mutex_lock(&s->lock);
	r = s->pending_head;
	if (r) {
		s->pending_head = r->next;
		if (!s->pending_head)
			s->pending_tail = &s->pending_head;
		r->next = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

uint64_t profile_request__seconds(const struct profile_request *r)
{
	return r->seconds;
}

enum profile_kind profile_request__kind(const struct profile_request *r)
{
	return r->kind;
}

bool profile_request__cancelled(struct profile_request *r)
{
	bool cancelled;

	pthread_mutex_lock(&r->server->lock);
	cancelled = r->cancelled || r->server->stopping;
	pthread_mutex_unlock(&r->server->lock);
	return cancelled;
}

void profile_request__finish(struct profile_request *r, char *bytes, size_t size, int err)
{
	struct server *s = r->server;

	pthread_mutex_lock(&s->lock);
	r->bytes = bytes;
	r->size = size;
	r->err = err;
	r->done = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&s->lock);
	request_put(s, r);
}

bool server__metrics_wanted(struct server *s)
{
	bool wanted;

	pthread_mutex_lock(&s->lock);
	wanted = s->metrics_wanted > s->metrics_given;
	pthread_mutex_unlock(&s->lock);
	return wanted;
}

void server__set_metrics(struct server *s, char *text, size_t size, uint64_t answers)
{
	char *old;

	pthread_mutex_lock(&s->lock);
	old = s->metrics;
	s->metrics = text;
	s->metrics_size = size;
	if (answers > s->metrics_given)
		s->metrics_given = answers;
	pthread_cond_broadcast(&s->metrics_cond);
	pthread_mutex_unlock(&s->lock);
	free(old);
}

uint64_t server__metrics_ticket(struct server *s)
{
	uint64_t ticket;

	pthread_mutex_lock(&s->lock);
	ticket = s->metrics_wanted;
	pthread_mutex_unlock(&s->lock);
	return ticket;
}

uint32_t server__windows_open(struct server *s)
{
	uint32_t n;

	pthread_mutex_lock(&s->lock);
	n = s->windows_open;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void server__connection_drops(struct server *s, uint64_t *refused, uint64_t *cut)
{
	pthread_mutex_lock(&s->lock);
	*refused = s->connections_refused;
	*cut = s->connections_cut;
	pthread_mutex_unlock(&s->lock);
}
