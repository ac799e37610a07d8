// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "serve/server.h"

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

struct profile_request {
	struct server *server;
	struct profile_request *next; /* pending list */
	unsigned int refs;	      /* the handler's, the main thread's */
	uint64_t seconds;
	bool cancelled;
	bool done;
	char *bytes;
	size_t size;
	int err;
	pthread_cond_t cond;
};

struct server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;
	pthread_cond_t metrics_cond;
	struct profile_request *pending_head, **pending_tail;
	uint32_t windows_open;
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

/* /debug/pprof/offcpu?seconds=N: blocks this connection's thread only. */
static enum MHD_Result serve_profile(struct server *s, struct MHD_Connection *conn)
{
	const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	uint64_t seconds = SERVER_DEFAULT_SECONDS;
	struct profile_request *r;
	struct timespec ts;
	bool watch = true, gone = false;
	enum MHD_Result ret;

	if (arg && parse__uint(arg, 1, SERVER_MAX_SECONDS, &seconds))
		return respond_text(conn, MHD_HTTP_BAD_REQUEST,
				    "seconds: a whole number from 1 to 600\n");
	r = calloc(1, sizeof(*r));
	if (!r || init_cond(&r->cond)) {
		free(r);
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
	}
	r->server = s;
	r->seconds = seconds;
	r->refs = 2;
	pthread_mutex_lock(&s->lock);
	if (s->stopping || s->windows_open >= SERVER_MAX_WINDOWS) {
		bool stopping = s->stopping;

		pthread_mutex_unlock(&s->lock);
		pthread_cond_destroy(&r->cond);
		free(r);
		return respond_text(
		    conn, stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_TOO_MANY_REQUESTS,
		    stopping ? "offcpu is stopping\n"
			     : "too many profiles being recorded at once\n");
	}
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* A body is not read: no path takes one. */
	if (*upload_data_size)
		return respond_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no body expected\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(s, conn);
	if (!strcmp(url, "/debug/pprof/offcpu"))
		return serve_profile(s, conn);
	if (!strcmp(url, "/healthz"))
		return serve_health(s, conn);
	return respond_text(conn, MHD_HTTP_NOT_FOUND,
			    "not found: /metrics, /debug/pprof/offcpu?seconds=N, /healthz\n");
}

int server__start(int listen_fd, bool verbose, struct server **out)
{
	struct server *s = calloc(1, sizeof(*s));
	sigset_t stop, saved;
	int err;

	if (!s) {
		close(listen_fd);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	err = init_cond(&s->metrics_cond);
	if (err) {
		close(listen_fd);
		free(s);
		return err;
	}
	s->pending_tail = &s->pending_head;
	/* SIGINT and SIGTERM are the main thread's: it stops tracing. Threads inherit the mask. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &saved);
	s->daemon = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
		(verbose ? MHD_USE_ERROR_LOG : 0),
	    0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)SERVER_MAX_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (!s->daemon) {
		close(listen_fd);
		server__stop(s);
		return -EIO;
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
	int listen_fd = MHD_quiesce_daemon(s->daemon), i;

	for (i = 0; i < STOP_GRACE_MS / 20; i++) {
		info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!info || !info->num_connections)
			break;
		usleep(20000);
	}
	MHD_stop_daemon(s->daemon);
	if (listen_fd >= 0)
		close(listen_fd);
}

void server__stop(struct server *s)
{
	struct profile_request *r;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->metrics_cond);
	pthread_mutex_unlock(&s->lock);
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
	pthread_mutex_destroy(&s->lock);
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
