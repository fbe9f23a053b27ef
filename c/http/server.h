/* server.h: a small HTTP/1.1 server on libuv + http-parser.
 * It listens on a unix socket or a TCP address, parses one request at a time per connection
 * (keep-alive; a pipelined request waits for the answer to the one before)
 * and hands each complete request to one handler, which may answer later
 * (after a command finishes): a connection waits for its answer while every
 * other connection goes on. Memory is bounded: a busy connection reads at
 * most ROCK_HTTP_READ_AHEAD bytes past its request, a body goes to memory
 * only up to a limit (413 past it), the bodies being read at one time share
 * a budget (past it a connection waits) and a handler may stream a body to
 * a file instead (on_headers + body_fd), or take the request before its
 * body is read and the body as it comes (body_stream +
 * rock_http_body_read: a relay). Used by the rocklet (see rocklet/main.c
 * and rocklet/upload.c) and by rock.http.serve (lua_serve.c), which also
 * wants the request headers (max_header), TCP, answers with headers, a
 * file or a stream (a body relayed as it comes), bodies relayed as they
 * come, and a graceful stop (rock_http_server_drain). */
#ifndef ROCK_HTTP_SERVER_H
#define ROCK_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct rock_http_server rock_http_server_t;
typedef struct rock_http_conn rock_http_conn_t;

/* Bytes a connection reads ahead of the request it is parsing or waiting
 * on; past it the server stops reading that connection until its answer
 * is sent (backpressure). The read-ahead lets it see a client hang up.
 * While a body streams to a file (body_fd) it reads 256 KiB at a time,
 * to its handler (body_stream) 1 MiB. */
#define ROCK_HTTP_READ_AHEAD (64u << 10)

/* Header fields a request may have when the headers are kept (past it
 * 431): each costs a fixed time to hand over, which 64 KiB of tiny
 * fields would multiply by 16,000 before anyone is authenticated. */
#define ROCK_HTTP_MAX_FIELDS 256

/* A request. Owned by the server until handed to the handler, then by the
 * handler until rock_http_respond (which frees it). */
typedef struct rock_http_req {
  const char *method; /* "GET", "POST", "HEAD", ... */
  char *path;         /* without the query string */
  char *query;        /* after '?', or "" */
  /* The body when it went to memory: NUL-terminated, body_len bytes, the
   * parsed buffer itself (not a copy), valid until the handler returns:
   * then the server frees it (a handler that answers later copies what it
   * needs). With a body_fd sink it is "" and body_len 0. */
  char *body;
  size_t body_len;
  /* Content-Length as sent, or UINT64_MAX when the body is chunked. */
  uint64_t content_length;
  /* Set by on_headers, read by the server while the body arrives:
   * max_body: the largest body taken (starts at the server's max_body;
   *   past it the server answers 413 and closes the connection: before
   *   reading anything when Content-Length says so, else when the
   *   chunks reach it).
   * body_fd: -1 (the default) keeps the body in memory; a file
   *   descriptor makes the server write() every body byte to it as it
   *   arrives, never holding the body. The handler owns the fd.
   * body_stream: 1 hands the request to the handler now, its body not
   *   read: the handler takes it as it comes (rock_http_body_read), the
   *   client read no faster than that (a relay: lua_serve.c). */
  uint64_t max_body;
  int body_fd;
  int body_stream;
  /* Filled by the server for a body_fd sink (and a body_stream): bytes
   * received and the first write error (an errno; later bytes are then
   * dropped). */
  uint64_t body_bytes;
  int body_err;
  /* The request headers when the server keeps them (opts.max_header > 0):
   * name\0value\0 pairs, names lowercased, in the order sent; owned by
   * the request. NULL otherwise. */
  char *headers;
  size_t headers_len;
  char peer[48]; /* the client's address (TCP), or "" (unix socket) */
  rock_http_conn_t *conn; /* NULL once the client went away */
  void *user;             /* free for the handler's use */
  void *abort_arg;        /* free for the handler's use, e.g. by on_abort */
  /* Set by a handler that answers later: called once if the client goes
   * away before the answer (the request is then an orphan; the handler
   * still calls rock_http_respond, which only frees it). */
  void (*on_abort)(struct rock_http_req *req);
  /* Set by on_headers when it acquired something (a file): called once
   * if the request dies before it is complete (client gone, malformed or
   * too large body). The handler never sees the request; the server frees
   * it after on_drop returns. */
  void (*on_drop)(struct rock_http_req *req);
  /* Keep the connection open after the answer (as the client asked);
   * a handler may clear it to close the connection after its answer. */
  int keep_alive;
  /* Set by the handler of a body_stream request: called from the loop
   * with ROCK_HTTP_BODY_READY once bytes came after a read said
   * ROCK_HTTP_BODY_WAIT (read again), and with ROCK_HTTP_BODY_GONE when
   * the client goes mid-body or the request is answered before its body
   * is over (from inside rock_http_respond, before req is freed): no more
   * comes to it. Either may be inside any call on its connection: only
   * note it there. body_arg is free for its use. */
  void (*on_body)(struct rock_http_req *req, int event);
  void *body_arg;
} rock_http_req_t;

typedef void (*rock_http_handler_fn)(rock_http_req_t *req, void *data);

typedef struct {
  /* Bodies to memory larger than this are refused with 413. */
  uint64_t max_body;
  /* The bytes all bodies being read to memory may take together; a
   * request past it waits, unread, until others are done (one body is
   * always let in alone); a chunked one growing past it is refused with
   * 503 (no_memory). 0: no budget. */
  uint64_t max_body_mem;
  /* Open connections past this: a new one takes the place of the oldest
   * with nothing under way (idle, or still sending its headers), else it
   * is accepted and closed at once; 0: no cap. */
  unsigned max_conns;
  /* Close a connection with no request in flight after this many ms
   * without input; 0: never. */
  uint64_t idle_timeout_ms;
  /* Called (with the server's data) when a request's headers are
   * complete, before its body is read; may be NULL. It may pick a sink
   * (body_fd, max_body, on_drop) or answer at once with rock_http_respond
   * (the body is then not read and the connection closes after the
   * answer). Otherwise the handler gets the request once it is whole. */
  rock_http_handler_fn on_headers;
  /* Keep the request headers (req->headers) and refuse with 431 a request
   * whose URL and header names and values pass this many bytes, or that
   * has more than ROCK_HTTP_MAX_FIELDS header fields; 0: the headers are
   * not kept (http-parser's own 80 KiB limit holds; past it also 431). */
  size_t max_header;
} rock_http_server_opts_t;

/* The defaults (rock_http_server_start with opts NULL): 32 MiB bodies, 65 MiB for the
 * bodies in memory at once (two of the largest), 4096 connections, 600 s
 * idle timeout, no on_headers. */
#define ROCK_HTTP_SERVER_OPTS_DEFAULT                                          \
  {.max_body = (uint64_t)32 << 20, .max_body_mem = (uint64_t)65 << 20,         \
   .max_conns = 4096, .idle_timeout_ms = 600000, .on_headers = NULL,          \
   .max_header = 0}

/* Listen on a unix socket at path (a dead socket there, whose connect is
 * refused, is replaced; a live server's is UV_EADDRINUSE and a path that
 * is no socket UV_EEXIST, both left alone),
 * owner-only (0600, whatever the umask, from before anyone can connect),
 * with the listen backlog as large as the kernel allows; *opts is copied
 * (NULL: the defaults). Returns 0 or a negative libuv error. */
int rock_http_server_start(rock_http_server_t **out, uv_loop_t *loop,
                           const char *path, const rock_http_server_opts_t *opts,
                           rock_http_handler_fn fn, void *data);
/* The same on TCP: host is a numeric IPv4 or IPv6 address (only it is
 * bound), port 0 picks a free port (rock_http_server_port tells which). */
int rock_http_server_start_tcp(rock_http_server_t **out, uv_loop_t *loop,
                               const char *host, int port,
                               const rock_http_server_opts_t *opts,
                               rock_http_handler_fn fn, void *data);
/* The TCP port bound, or 0 on a unix socket. */
int rock_http_server_port(rock_http_server_t *s);
/* Start a graceful stop: stop accepting, close the connections with no
 * request under way, let the others finish the request they are reading
 * or waiting on (its answer says Connection: close; nothing pipelined
 * behind it is read) and close. cb(arg) runs once, when no connection is
 * left (at once if none is), unless rock_http_server_close comes first.
 * Safe to call twice (the second call changes nothing). The server stays
 * allocated until rock_http_server_close. */
void rock_http_server_drain(rock_http_server_t *s, void (*cb)(void *arg),
                            void *arg);
/* Stop listening and close every connection; requests not yet answered
 * become orphans (conn == NULL) that rock_http_respond just frees. Frees
 * the server (once its handles have closed). */
void rock_http_server_close(rock_http_server_t *s);
/* Number of requests received but not yet answered. */
int rock_http_server_inflight(rock_http_server_t *s);

/* What the server holds now (for tests and diagnostics). */
typedef struct {
  unsigned conns;       /* open connections */
  unsigned paused;      /* connections not read because of backpressure */
  unsigned waiting;     /* connections waiting for the body budget */
  uint64_t body_mem;    /* bytes of the body budget taken */
  size_t buffered;      /* bytes allocated for input and bodies in memory */
  size_t writing;       /* bytes of answers held until written (and freed) */
} rock_http_server_stats_t;
void rock_http_server_stats(rock_http_server_t *s, rock_http_server_stats_t *st);

/* Answer req with status and body (copied) and free req. Exactly once.
 * To a HEAD request only the headers go, with the Content-Length of body.
 * rock_http_respond_take takes body (malloc'ed; freed once written)
 * instead of copying it. */
void rock_http_respond(rock_http_req_t *req, int status,
                       const char *content_type, const char *body,
                       size_t len);
void rock_http_respond_take(rock_http_req_t *req, int status,
                            const char *content_type, char *body, size_t len);
/* The same with the caller's header lines: headers is a block of "Name:
 * value\r\n" lines (copied; "" for none), Content-Type among them if
 * wanted; the server adds Content-Length and Connection. The caller
 * checked the lines (no CR or LF inside one). */
void rock_http_respond_headers(rock_http_req_t *req, int status,
                               const char *headers, const char *body,
                               size_t len);
/* The same taking body (malloc'ed; freed once written): no copy. */
void rock_http_respond_headers_take(rock_http_req_t *req, int status,
                                    const char *headers, char *body, size_t len);
/* Answer with size bytes read from fd (taken: closed once sent or when
 * the connection goes), streamed as the client takes them: by sendfile
 * from fd's offset while the socket takes it (no byte in our memory), a
 * 64 KiB chunk through libuv while it is full; read + write with at most
 * two 64 KiB chunks in memory where sendfile cannot serve. A file shorter
 * than size closes the connection after what it had. */
void rock_http_respond_file(rock_http_req_t *req, int status,
                            const char *headers, int fd, uint64_t size);

/* A streamed answer: a body given piece by piece as it comes from
 * elsewhere (rock serve relaying a rocklet's body: lua_serve.c), never
 * whole in memory. The stream belongs to whoever started it until
 * rock_http_stream_end; its connection may go before (GONE). */
typedef struct rock_http_stream rock_http_stream_t;
enum {
  ROCK_HTTP_STREAM_DRAINED = 1, /* a write found the client's queue full;
                                 * it is low again: write on */
  ROCK_HTTP_STREAM_GONE = 2,    /* the client went away: stop (and still
                                 * call rock_http_stream_end) */
};
/* Called from the loop: DRAINED from a write's completion (the owner may
 * write again right there), GONE when the connection closes, which may
 * be inside rock_http_stream_write (a write that failed): the owner then
 * only notes it, and ends the stream later. */
typedef void (*rock_http_stream_fn)(void *arg, int event);
/* Bytes held for a client (queued, or sent but not yet freed: a write's
 * memory goes a loop turn after the socket took it) past which
 * rock_http_stream_full says wait, and below which DRAINED is sent. */
#define ROCK_HTTP_STREAM_HIGH (1u << 20)
#define ROCK_HTTP_STREAM_LOW (256u << 10)
/* Answer req with status and header lines (as rock_http_respond_headers)
 * and a body of size bytes to come by rock_http_stream_write
 * (UINT64_MAX: not known: no Content-Length, the connection closes after
 * the body). The head is sent now; req is freed. Returns the stream, or
 * NULL when the client is gone already (nothing to send to). To a HEAD
 * request only the head goes: writes are then dropped. */
rock_http_stream_t *rock_http_respond_stream(rock_http_req_t *req, int status,
                                             const char *headers, uint64_t size,
                                             rock_http_stream_fn fn, void *arg);
/* Send p[0..n) (copied unless the socket takes it at once). 0, or -1
 * when the client is gone (nothing sent; GONE may have been called from
 * here). Bytes past the size said are dropped (-1). */
int rock_http_stream_write(rock_http_stream_t *st, const char *p, size_t n);
/* More than ROCK_HTTP_STREAM_HIGH bytes wait for the client: hold the
 * next write until DRAINED (which this call arms). 0 when the client is
 * gone (a write then says so). */
int rock_http_stream_full(rock_http_stream_t *st);
/* The body is over: whole (ok), or cut (ok 0, or fewer bytes than the
 * size said): then the connection closes after what was sent, so the
 * client sees a short body. The connection goes on with its next request
 * when whole. Frees st; fn is not called again. */
void rock_http_stream_end(rock_http_stream_t *st, int ok);

/* A body taken as it comes (req->body_stream, set by on_headers): the
 * handler has the request before its body is read and reads the body
 * piece by piece, each piece copied straight from what the server read
 * of the client into dst; the client is read no further ahead than the
 * connection's read-ahead (1 MiB), so a reader that stops stops the
 * client (back-pressure). max_body holds (a Content-Length past it is
 * refused before the handler sees the request). Answering before the body
 * is over is fine: the reader is told GONE and the server reads the rest
 * and drops it (the client, which may still be sending, reads its answer)
 * and goes on with the connection, for a rest of at most 4 MiB (or
 * max_body when smaller): a Content-Length with more to come has its
 * answer say Connection: close and nothing more read, and a chunked body
 * going past it closes the connection once the answer is out, as does a
 * chunk header broken while dropping (each of these closes lingering: a
 * FIN after the answer, input read and dropped for up to 1 s or 4 MiB
 * more, so a client still sending reads its answer, not a reset). After
 * a BAD or TOO_LARGE body it
 * closes. A client's Expect: 100-continue is answered at the handler's
 * first read: answered before that, the body is not wanted (never read;
 * the connection closes after the answer). */
enum {
  ROCK_HTTP_BODY_WAIT = -1,      /* nothing here now: on_body(READY) comes */
  ROCK_HTTP_BODY_GONE = -2,      /* the client went away mid-body */
  ROCK_HTTP_BODY_BAD = -3,       /* malformed (a chunked body's framing) */
  ROCK_HTTP_BODY_TOO_LARGE = -4, /* a chunked body grew past max_body */
};
enum { ROCK_HTTP_BODY_READY = 1 }; /* on_body's events, and ..._GONE */
/* Take up to cap (> 0) bytes of req's body into dst: how many (> 0), 0
 * once the body is over (whole), or one of the codes above. From the loop,
 * outside the server's own calls (a client library's callback is fine). */
long rock_http_body_read(rock_http_req_t *req, char *dst, size_t cap);

/* The value of the first request header called name (lowercase), or
 * NULL: absent, or the server keeps no headers (opts.max_header 0). */
const char *rock_http_req_header(const rock_http_req_t *req, const char *name);

#endif
