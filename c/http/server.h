/* server.h: a small HTTP/1.1 server on libuv + http-parser.
 * It listens on a unix socket, parses one request at a time per connection
 * (keep-alive, pipelining handled by pausing the parser), and hands each
 * complete request to one handler. The handler may answer later (after a
 * command finishes): a connection waits for its answer while every other
 * connection goes on. Used by the rocklet; see rocklet/main.c. */
#ifndef ROCK_HTTP_SERVER_H
#define ROCK_HTTP_SERVER_H

#include <stddef.h>
#include <uv.h>

typedef struct rock_http_server rock_http_server_t;
typedef struct rock_http_conn rock_http_conn_t;

/* A parsed request. Owned by the server; valid until rock_http_respond. */
typedef struct rock_http_req {
  const char *method; /* "GET", "POST", ... */
  char *path;         /* without the query string */
  char *query;        /* after '?', or "" */
  char *body;         /* NUL-terminated, body_len bytes */
  size_t body_len;
  rock_http_conn_t *conn; /* NULL once the client went away */
  void *user;             /* free for the handler's use */
  /* Set by a handler that answers later: called once if the client goes
   * away before the answer (the request is then an orphan; the handler
   * still calls rock_http_respond, which only frees it). */
  void (*on_abort)(struct rock_http_req *req);
} rock_http_req_t;

typedef void (*rock_http_handler_fn)(rock_http_req_t *req, void *data);

/* Listen on a unix socket at path (an existing socket file is replaced).
 * Returns 0 or a negative libuv error. */
int rock_http_server_start(rock_http_server_t **out, uv_loop_t *loop,
                           const char *path, rock_http_handler_fn fn,
                           void *data);
/* Stop listening and close every connection; requests not yet answered
 * become orphans (conn == NULL) that rock_http_respond just frees. */
void rock_http_server_close(rock_http_server_t *s);
/* Number of requests received but not yet answered. */
int rock_http_server_inflight(rock_http_server_t *s);

/* Answer req with status and body (copied) and free req. Exactly once. */
void rock_http_respond(rock_http_req_t *req, int status,
                       const char *content_type, const char *body,
                       size_t len);

#endif
