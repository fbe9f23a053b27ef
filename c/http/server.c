/* server.c: HTTP/1.1 server on a unix socket (libuv streams + http-parser).
 * Each connection parses one request, pauses its parser and waits for the
 * handler's answer before reading the next pipelined one; other connections
 * are unaffected. A request outlives its connection (the handler may still
 * be working): it is then an orphan and rock_http_respond only frees it. */
#include "server.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/buf.h"
#include "../core/log.h"

#define MAX_BODY (256u << 20)

struct rock_http_server {
  uv_pipe_t listener;
  rock_http_handler_fn fn;
  void *data;
  rock_http_conn_t *conns; /* doubly linked */
  int inflight;
  int closing;
};

struct rock_http_conn {
  uv_pipe_t handle;
  http_parser parser;
  rock_http_server_t *server;
  rock_http_conn_t *prev, *next;
  rock_buf_t in; /* input; in.data[in_off..in.len) is not parsed yet */
  size_t in_off;
  char *url;
  size_t url_len;
  rock_buf_t body;
  rock_http_req_t *ready; /* parsed, not yet handed to the handler */
  rock_http_req_t *busy;  /* handed to the handler, not yet answered */
  int feeding, closing, keep_alive, too_big;
};

static http_parser_settings settings;

static void conn_closed(uv_handle_t *h) {
  rock_http_conn_t *c = h->data;
  rock_buf_free(&c->in);
  free(c->url);
  rock_buf_free(&c->body);
  free(c);
}

static void conn_close(rock_http_conn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  rock_http_server_t *s = c->server;
  if (c->prev) c->prev->next = c->next;
  else s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  rock_http_req_t *orphan = c->busy;
  c->busy = NULL;
  if (orphan) { /* the handler still owns it */
    orphan->conn = NULL;
    s->inflight--;
    if (orphan->on_abort) orphan->on_abort(orphan);
  }
  uv_close((uv_handle_t *)&c->handle, conn_closed);
}

static void req_free(rock_http_req_t *r) {
  free(r->path);
  free(r->body);
  free(r);
}

/* ---- parser callbacks: only collect bytes ---- */

static int on_message_begin(http_parser *p) {
  rock_http_conn_t *c = p->data;
  c->url_len = 0;
  c->body.len = 0;
  c->too_big = 0;
  return 0;
}

static int on_url(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  char *n = realloc(c->url, c->url_len + len + 1);
  if (!n) return -1;
  c->url = n;
  memcpy(c->url + c->url_len, at, len);
  c->url_len += len;
  c->url[c->url_len] = 0;
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
  rock_http_conn_t *c = p->data;
  if (c->body.len + len > MAX_BODY) {
    c->too_big = 1;
    return 0;
  }
  return rock_buf_append(&c->body, at, len);
}

static int on_message_complete(http_parser *p) {
  rock_http_conn_t *c = p->data;
  rock_http_req_t *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->method = http_method_str(p->method);
  r->path = strdup(c->url ? c->url : "/");
  r->body = malloc(c->body.len + 1);
  if (!r->path || !r->body) {
    req_free(r);
    return -1;
  }
  if (c->body.len) memcpy(r->body, c->body.data, c->body.len);
  r->body[c->body.len] = 0;
  r->body_len = c->too_big ? (size_t)-1 : c->body.len;
  char *q = strchr(r->path, '?');
  if (q) *q++ = 0;
  r->query = q ? q : r->path + strlen(r->path);
  r->conn = c;
  c->keep_alive = http_should_keep_alive(p);
  c->ready = r;
  http_parser_pause(p, 1);
  return 0;
}

static void write_done(uv_write_t *w, int status) {
  (void)status;
  free(w->data);
  free(w);
}

static void send_raw(rock_http_conn_t *c, int status, const char *ctype,
                     const char *body, size_t len) {
  char head[256];
  int hl = snprintf(head, sizeof head,
                    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
                    "Content-Length: %zu\r\n%s\r\n",
                    status, status < 300 ? "OK" : "Error", ctype, len,
                    c->keep_alive ? "" : "Connection: close\r\n");
  char *buf = malloc(hl + len);
  uv_write_t *w = malloc(sizeof *w);
  if (!buf || !w) {
    free(buf);
    free(w);
    conn_close(c);
    return;
  }
  memcpy(buf, head, hl);
  if (len) memcpy(buf + hl, body, len);
  w->data = buf;
  uv_buf_t b = uv_buf_init(buf, hl + len);
  if (uv_write(w, (uv_stream_t *)&c->handle, &b, 1, write_done)) {
    write_done(w, 0);
    conn_close(c);
    return;
  }
  if (!c->keep_alive) conn_close(c);
}

/* Parse what is buffered, one request at a time, until a request is in
 * flight or input runs out. Re-entered from rock_http_respond. */
static void feed(rock_http_conn_t *c) {
  if (c->feeding) return;
  c->feeding = 1;
  while (!c->busy && !c->closing && c->in_off < c->in.len) {
    size_t n = http_parser_execute(&c->parser, &settings, c->in.data + c->in_off,
                                   c->in.len - c->in_off);
    c->in_off += n;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) {
      http_parser_pause(&c->parser, 0);
    } else if (e != HPE_OK) {
      static const char msg[] =
          "{\"code\":\"bad_request\",\"message\":\"malformed http request\"}";
      c->keep_alive = 0;
      send_raw(c, 400, "application/json", msg, sizeof msg - 1);
      break;
    }
    if (c->ready) {
      rock_http_req_t *r = c->ready;
      c->ready = NULL;
      c->busy = r;
      c->server->inflight++;
      c->server->fn(r, c->server->data);
    } else if (n == 0) {
      break;
    }
  }
  if (!c->closing && c->in_off == c->in.len) c->in_off = c->in.len = 0;
  c->feeding = 0;
}

void rock_http_respond(rock_http_req_t *req, int status,
                       const char *content_type, const char *body,
                       size_t len) {
  rock_http_conn_t *c = req->conn;
  if (c) {
    c->server->inflight--;
    c->busy = NULL;
    send_raw(c, status, content_type, body, len);
    req_free(req);
    if (!c->closing) feed(c);
    return;
  }
  req_free(req);
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  rock_http_conn_t *c = h->data;
  (void)hint;
  if (c->in_off && c->in_off == c->in.len) c->in_off = c->in.len = 0;
  if (rock_buf_reserve(&c->in, 65536)) {
    *buf = uv_buf_init(NULL, 0);
    return;
  }
  *buf = uv_buf_init(c->in.data + c->in.len, c->in.cap - c->in.len - 1);
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  rock_http_conn_t *c = st->data;
  (void)buf;
  if (n < 0) {
    conn_close(c);
    return;
  }
  c->in.len += n;
  feed(c);
}

static void on_connection(uv_stream_t *l, int status) {
  rock_http_server_t *s = l->data;
  if (status < 0) return;
  rock_http_conn_t *c = calloc(1, sizeof *c);
  if (!c) return;
  c->server = s;
  uv_pipe_init(l->loop, &c->handle, 0);
  c->handle.data = c;
  if (uv_accept(l, (uv_stream_t *)&c->handle)) {
    uv_close((uv_handle_t *)&c->handle, conn_closed);
    return;
  }
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  uv_read_start((uv_stream_t *)&c->handle, alloc_cb, read_cb);
}

static void listener_closed(uv_handle_t *h) { free(h->data); }

int rock_http_server_start(rock_http_server_t **out, uv_loop_t *loop,
                           const char *path, rock_http_handler_fn fn,
                           void *data) {
  settings.on_message_begin = on_message_begin;
  settings.on_url = on_url;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;
  rock_http_server_t *s = calloc(1, sizeof *s);
  if (!s) return UV_ENOMEM;
  s->fn = fn;
  s->data = data;
  uv_pipe_init(loop, &s->listener, 0);
  s->listener.data = s;
  unlink(path);
  int rc = uv_pipe_bind(&s->listener, path);
  if (!rc) rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection);
  if (rc) {
    s->closing = 1;
    uv_close((uv_handle_t *)&s->listener, listener_closed);
    return rc;
  }
  *out = s;
  return 0;
}

void rock_http_server_close(rock_http_server_t *s) {
  if (!s || s->closing) return;
  s->closing = 1;
  while (s->conns) conn_close(s->conns);
  uv_close((uv_handle_t *)&s->listener, listener_closed);
}

int rock_http_server_inflight(rock_http_server_t *s) { return s->inflight; }
