/* plain.h: HTTP/1.1 for rock's own peers without libcurl. A rocklet over
 * its unix socket, the engine's socket, a `rock serve` on a numeric
 * address: plain http, no TLS, no proxy, no redirect, a body in memory
 * both ways (one allocation of the answer's Content-Length). For those a request is one write and one read on a
 * kept-alive libuv stream, where libcurl's per-request machinery (URL and
 * connection-cache work, liveness polls, watching and unwatching the
 * socket, a timer turn to start) cost this host more than the exchange
 * itself (tests/bench/serve). client.c sends what plain does not take
 * (rock_plain_takes) through libcurl; its callers see one client.
 * Responses are parsed with http-parser, as the server's requests are. */
#ifndef ROCK_HTTP_PLAIN_H
#define ROCK_HTTP_PLAIN_H

#include <uv.h>

#include "client.h"

typedef struct rock_plain rock_plain_t;
typedef struct rock_plain_req rock_plain_req_t;

int rock_plain_init(rock_plain_t **out, uv_loop_t *loop);
/* Cancel every request (no callbacks) and free p once its handles have
 * closed (the loop must run). */
void rock_plain_close(rock_plain_t *p);

/* 1 when req is plain's: an http:// URL whose host is a numeric address
 * or localhost (and no proxy is set in the environment), or any http://
 * URL with unix_socket whose path fits in sun_path; and no body_file,
 * out_file or on_chunk (curl streams those). max_body is kept. */
int rock_plain_takes(rock_plain_t *p, const rock_http_request_t *req);

/* Start req (everything in it is copied). fn runs once, from the loop,
 * unless the request is cancelled; never from inside this call. Returns
 * ROCK_E_OK, or an error and fn never runs. */
rock_err rock_plain_request(rock_plain_t *p, const rock_http_request_t *req,
                            rock_http_done_fn fn, void *data, rock_plain_req_t **out);
/* Abandon a request: its callback will not run. */
void rock_plain_cancel(rock_plain_req_t *r);

/* Requests under way to a unix socket (a peer on this machine). */
int rock_plain_local_pending(const rock_plain_t *p);

/* Why a connection to the unix socket at path fails now: EAGAIN when a
 * server is there (busy, or it made room), else connect's errno. */
int rock_http_probe_unix(const char *path);

#endif
