/* client.h: the host's HTTP client, driven by a libuv loop. Plain HTTP/1.1
 * to rock's own peers (unix sockets, numeric addresses; plain.c) goes over
 * kept-alive libuv streams; the rest over libcurl's multi interface: no
 * blocking call and no thread per request, curl's sockets watched with
 * uv_poll and its timer with a uv_timer, connections kept alive in the
 * multi handle's cache. curl's completions are queued and delivered from a
 * uv_idle callback, plain's from its read callback once the connection is
 * handed back; never from inside curl or the parser, so a done callback may
 * start or cancel requests. A request's body may come from memory, a file
 * or a source (read as it arrives elsewhere), its 2xx answer go to
 * memory, a file or a sink. lua_http.c is the Lua face. */
#ifndef ROCK_HTTP_CLIENT_H
#define ROCK_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "../core/err.h"

typedef struct rock_http_client rock_http_client_t;
typedef struct rock_http_xfer rock_http_xfer_t;

/* Where a 2xx answer goes instead of memory or a file: relayed on as it
 * arrives (rock serve passing a rocklet's body to its own client:
 * lua_serve.c). Its functions run from inside curl's callbacks: they
 * update C state and write to sockets, and call neither curl nor Lua. */
typedef struct rock_http_sink rock_http_sink_t;
struct rock_http_sink {
  /* The final head of a 2xx answer is in: status, that head's lines
   * (headers[0..len), "Name: value\r\n" each), the body's size
   * (UINT64_MAX: not said). x is the transfer, for resume and abort.
   * 0: go on; -1: end the transfer (the sink called
   * rock_http_xfer_abort to say why). */
  int (*start)(rock_http_sink_t *k, rock_http_xfer_t *x, long status,
               const char *headers, size_t len, uint64_t size);
  /* Body bytes: 0 taken; 1 not now (the transfer pauses, and the same
   * bytes come again after rock_http_xfer_resume); -1 end the transfer
   * (as for start). */
  int (*write)(rock_http_sink_t *k, const char *p, size_t n);
};

/* Where a request body comes from instead of memory or a file: read as
 * it arrives elsewhere (rock serve passing its client's upload on to a
 * rocklet: lua_serve.c). read runs from inside curl's callback: it
 * updates C state and reads sockets, and calls neither curl nor Lua
 * (rock_http_xfer_abort excepted). */
typedef struct rock_http_source rock_http_source_t;
struct rock_http_source {
  uint64_t size; /* the body's bytes; UINT64_MAX: not known (sent chunked) */
  /* Up to n bytes into p: how many (> 0); 0 at the body's end; -1 end the
   * transfer (the source called rock_http_xfer_abort to say why); -2 none
   * now: the transfer pauses until rock_http_xfer_resume. x is the
   * transfer. */
  long (*read)(rock_http_source_t *s, rock_http_xfer_t *x, char *p, size_t n);
};

typedef struct {
  const char *method;      /* default "GET" ("POST" when body is set) */
  const char *url;         /* required */
  const char *unix_socket; /* optional: connect here instead of the host */
  /* With unix_socket: the process that must be serving it (SO_PEERCRED),
   * checked when a connection is made; 0 = any. A kept-alive connection
   * was checked when it was made, so a socket path swapped afterwards
   * (a symlink to another server) reaches nobody else. */
  long peer_pid;
  const char *const *headers; /* "Name: value" strings, NULL-terminated */
  const char *body;
  size_t body_len;
  double timeout; /* seconds for the whole transfer; 0 = none; at most
                   * INT_MAX ms (larger values are clamped) */
  /* Streaming, for large bodies (image save/load, pull progress): */
  const char *body_file; /* send this file as the body (instead of body) */
  const char *out_file;  /* a 2xx body goes to this file, not to memory;
                          * the file is removed unless the whole body came
                          * (an error, a cancel, a non-2xx answer) */
  /* Called from the loop with each piece of a 2xx body as it arrives
   * (it still also reaches res->body unless out_file is set). */
  void (*on_chunk)(void *data, const char *p, size_t n);
  /* The most bytes of a body kept in memory; past it the transfer ends
   * with ROCK_E_HTTP and res->too_large set to it. 0 = no bound. */
  uint64_t max_body;
  /* A 2xx answer (head and body) goes here as it comes, nothing of it to
   * res (whose body is then ""); any other answer's body comes to memory
   * as usual. Not copied: it must outlive the transfer. */
  rock_http_sink_t *sink;
  /* The body comes from here as it is read (instead of body or
   * body_file), no faster than the transfer sends it on. Not copied: it
   * must outlive the transfer. */
  rock_http_source_t *source;
} rock_http_request_t;

typedef struct {
  rock_err err;     /* ROCK_E_OK, or why no response came */
  const char *message; /* set when err != OK */
  int sys_errno;    /* a failed connect's errno (EAGAIN: backlog full), or 0;
                     * for a unix socket whose server dropped the connection,
                     * a new connect's (ECONNREFUSED: nobody serves it now) */
  long peer_pid;    /* a connect refused for its peer: the pid found there
                     * (-1 unknown), else 0 */
  uint64_t too_large; /* the body passed the request's max_body (this), else 0 */
  long status;      /* HTTP status */
  const char *headers; /* raw header block, all responses' lines */
  size_t headers_len;
  const char *body;
  size_t body_len;
} rock_http_response_t;

/* Called once per request unless it was cancelled; res is valid only for
 * the duration of the call. */
typedef void (*rock_http_done_fn)(void *data, const rock_http_response_t *res);

/* A new TCP socket, before its connect (both paths call it): it finds out
 * when its peer is gone (the host down, a partition) instead of waiting on
 * it forever. Keepalive probes once idle 10 s, every 5 s; and
 * TCP_USER_TIMEOUT: a connect or data unacknowledged for
 * $ROCK_TCP_PEER_TIMEOUT seconds (default 20) fails the connection
 * (ETIMEDOUT, a connection_failed). A peer that is up but slow to answer
 * (its kernel acks) is never cut. */
void rock_http_tcp_tune(int fd);

int rock_http_client_init(rock_http_client_t **out, uv_loop_t *loop);
/* Cancel every transfer (no callbacks) and free the client once its handles
 * have closed. */
void rock_http_client_close(rock_http_client_t *c);

/* Start a request; everything in req is copied. *out (may be NULL) gets a
 * handle valid until the callback runs or the transfer is cancelled.
 * Returns ROCK_E_OK or an error (then fn is never called). */
rock_err rock_http_client_request(rock_http_client_t *c,
                                  const rock_http_request_t *req,
                                  rock_http_done_fn fn, void *data,
                                  rock_http_xfer_t **out);
/* Abandon a transfer: its callback will not run. */
void rock_http_xfer_cancel(rock_http_xfer_t *x);
/* A transfer paused by its sink's write (1) or its source's read (-2):
 * go on (the write comes again, the read is asked again). Call from the
 * loop, not from inside a sink or source function; a no-op unless
 * paused. */
void rock_http_xfer_resume(rock_http_xfer_t *x);
/* End a sink's or source's transfer: its callback runs, later, from the
 * loop, with err and message (static: not copied), whatever else
 * happened. Safe from inside a sink or source function and twice (the
 * first reason stays). */
void rock_http_xfer_abort(rock_http_xfer_t *x, rock_err err, const char *message);

/* Requests under way to a peer on this machine over a unix socket (a
 * rocklet, the engine) that plain.c carries: the host's loop polls briefly
 * before it sleeps only while one is (lua/rock/task.lua). */
int rock_http_client_local_pending(const rock_http_client_t *c);

#endif
