/* SPDX-License-Identifier: GPL-2.0 */
/*
 * offcpu serve's HTTP side, on libmicrohttpd: a thread that accepts
 * (acceptor.h), a thread per connection admitted (at most
 * SERVER_MAX_CONNECTIONS), none of which ever touches
 * the profile. A request for a profile is queued for the main thread, which
 * records its window and hands back the finished bytes; /metrics asks the
 * main thread for a fresh rendering and serves the text it hands over.
 * The main thread never waits for a client: it takes and gives under one
 * mutex, held for a list operation at a time.
 */
#ifndef OFFCPU_SERVER_H
#define OFFCPU_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Threads: one per connection, slow and stuck clients included. A client
 * is a user for a peer on this host (whatever its source addresses: any of
 * 127/8 can be bound, and ::1 besides), an address for a remote one; one
 * client holds at most a sixteenth of the connections, so others still get
 * in. A connection past a client's cap is answered 429 and closed at the
 * accept, one past the cap of all 503, with no thread made for either.
 */
#define SERVER_MAX_CONNECTIONS 256
#define SERVER_MAX_CONNECTIONS_PER_CLIENT 16
/* Profile windows recorded at once, and for one client; more get 429. */
#define SERVER_MAX_WINDOWS 8
#define SERVER_MAX_WINDOWS_PER_CLIENT 4
/*
 * /debug/pprof/offcpu?seconds=N (and -F's paths): 1..300, default 30 as Go's net/http/pprof.
 * Parca and Pyroscope ask for their scrape interval, 10-60 s; 600 s windows
 * held every slot for ten minutes.
 */
#define SERVER_DEFAULT_SECONDS 30
#define SERVER_MAX_SECONDS 300

struct server;
struct profile_request;

/*
 * What a profile request records. With -F (sampling), besides the waits:
 * /debug/pprof/profile, the on-CPU samples as Go's CPU profile, at the
 * path Parca and Pyroscope scrape one; /debug/pprof/wall, both.
 */
enum profile_kind {
	PROFILE_OFF_CPU, /* /debug/pprof/offcpu */
	PROFILE_CPU,	 /* /debug/pprof/profile */
	PROFILE_WALL,	 /* /debug/pprof/wall */
};

/*
 * Serves on listen_fd (bound, listening; the server owns it from here);
 * without sampling, the -F paths answer 404 saying so.
 */
int server__start(int listen_fd, bool verbose, bool sampling, struct server **out);
/* Answers every waiting request 503, stops the threads, frees all. NULL is fine. */
void server__stop(struct server *s);

/* The main thread's side. */
/* Tracing works as of now_ns: /healthz says 200 while this is recent. */
void server__alive(struct server *s, uint64_t now_ns);
/* The next profile request to record, or NULL; the main thread holds it until it finishes it. */
struct profile_request *server__next_request(struct server *s);
uint64_t profile_request__seconds(const struct profile_request *r);
enum profile_kind profile_request__kind(const struct profile_request *r);
/* The client hung up or the server stops: drop the window. */
bool profile_request__cancelled(struct profile_request *r);
/* The profile's bytes (malloc'ed, taken), or NULL and an errno; releases r. */
void profile_request__finish(struct profile_request *r, char *bytes, size_t size, int err);
/* Whether a /metrics client waits for a rendering. */
bool server__metrics_wanted(struct server *s);
/* The requests asked for so far: a rendering begun now answers them. */
uint64_t server__metrics_ticket(struct server *s);
/*
 * The rendering (malloc'ed, taken) begun at ticket answers, for the
 * clients waiting and the next ones.
 */
void server__set_metrics(struct server *s, char *text, size_t size, uint64_t answers);
/* Profile requests being recorded or waiting to be. */
uint32_t server__windows_open(struct server *s);
/*
 * Connections refused at the accept, past their client's cap, and cut
 * past a deadline: headers not in, or an answer not out, in time.
 */
void server__connection_drops(struct server *s, uint64_t *refused, uint64_t *cut);

#endif
