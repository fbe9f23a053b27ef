/* plain.c: HTTP/1.1 on libuv streams for rock's own peers (see plain.h).
 * A request takes a kept-alive connection to its target (or makes one:
 * connect, then for a unix socket with peer_pid the SO_PEERCRED check),
 * writes its bytes (uv_try_write: usually at once), and the connection's
 * read callback feeds http-parser until the response is complete; then
 * the connection goes back to the pool (or closes) before the callback
 * runs. Connections read while idle too, so a server that closes one is
 * seen at once. A request on a reused connection that dies before any
 * byte of the answer is sent again once on a new connection, as curl
 * does (the server closed an idle connection as the request went out). */
#include "plain.h"

#include <errno.h>
#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../core/buf.h"

#define MAX_IDLE 256   /* kept-alive connections, all targets */
#define READ_CHUNK 65536

typedef struct conn conn_t;

struct rock_plain {
  uv_loop_t *loop;
  conn_t *idle;           /* kept-alive connections, most recent first */
  int nidle;
  rock_plain_req_t *reqs; /* every request not yet delivered */
  int local;              /* of those, the ones to a unix socket */
  int no_proxy_env;       /* 1: no proxy variable is set */
  int closing, handles;   /* handles not yet closed (freed with the last) */
  char scratch[READ_CHUNK];
};

struct conn {
  union {
    uv_handle_t h;
    uv_stream_t s;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
  } u;
  uv_connect_t connect;
  uv_write_t write;
  rock_plain_t *p;
  char *key;               /* the target: "u<pid>:<path>" or "t<addr>" */
  rock_plain_req_t *req;   /* the request it carries; NULL when idle */
  conn_t *prev, *next;     /* the idle list */
  http_parser parser;
  int connected, writing, reused, closing;
};

struct rock_plain_req {
  rock_plain_t *p;
  rock_plain_req_t *prev, *next; /* p->reqs */
  conn_t *conn;
  char *key;
  char *socket_path;   /* unix socket, or NULL for TCP */
  struct sockaddr_storage addr; /* TCP */
  long peer_pid;
  int v6_port;         /* localhost: ::1's port, to try when 127.0.0.1 fails */
  rock_buf_t out;      /* the request's bytes */
  rock_buf_t head, body; /* the response */
  uv_timer_t *timer;   /* the whole exchange's deadline, or NULL */
  long timeout_ms;
  int is_head, got_bytes, complete, retried, last_header;
  int later_err;       /* a resend's connect failed at once (fail_later) */
  int counted;         /* in p->local */
  uint64_t max_body;   /* the most bytes of a body kept, or 0 = no bound */
  int too_large;       /* the body passed max_body */
  rock_http_done_fn fn;
  void *data;
};

static const http_parser_settings settings;
static void conn_close(conn_t *c);
static int conn_open(rock_plain_req_t *r);

/* ---- targets ---------------------------------------------------------- */

/* Split an http:// URL: authority [a, a_end), path from *path (NULL = "/").
 * 0, or -1 for what curl should judge (other schemes, odd bytes, userinfo). */
static int split_url(const char *url, const char **a, const char **a_end,
                     const char **path) {
  if (strncasecmp(url, "http://", 7)) return -1;
  for (const unsigned char *q = (const unsigned char *)url; *q; q++)
    if (*q <= ' ' || *q >= 0x7f) return -1;
  *a = url + 7;
  const char *e = *a + strcspn(*a, "/?#");
  if (memchr(*a, '@', e - *a)) return -1;
  *a_end = e;
  *path = *e ? e : NULL;
  return 0;
}

/* A TCP target: a numeric address or localhost, with a port (default 80).
 * localhost is 127.0.0.1 first, then ::1 (*v6_port: its port, else 0), as
 * curl, which never asks the resolver for it, tries both. */
static int tcp_target(const char *a, const char *a_end, struct sockaddr_storage *ss,
                      int *v6_port) {
  char host[64];
  const char *hend, *port = NULL;
  if (*a == '[') {
    hend = memchr(a, ']', a_end - a);
    if (!hend) return -1;
    a++;
    if (hend + 1 < a_end) {
      if (hend[1] != ':') return -1;
      port = hend + 2;
    }
  } else {
    hend = memchr(a, ':', a_end - a);
    if (hend) port = hend + 1;
    else hend = a_end;
  }
  if (hend - a <= 0 || hend - a >= (long)sizeof host) return -1;
  memcpy(host, a, hend - a);
  host[hend - a] = 0;
  long pn = 80;
  if (port) {
    char *pe;
    pn = strtol(port, &pe, 10);
    if (pe != a_end || port == a_end || pn <= 0 || pn > 65535) return -1;
  }
  *v6_port = 0;
  if (!strcasecmp(host, "localhost")) {
    strcpy(host, "127.0.0.1");
    *v6_port = (int)pn;
  }
  memset(ss, 0, sizeof *ss);
  if (!uv_ip4_addr(host, (int)pn, (struct sockaddr_in *)ss)) return 0;
  if (!uv_ip6_addr(host, (int)pn, (struct sockaddr_in6 *)ss)) return 0;
  return -1;
}

int rock_plain_takes(rock_plain_t *p, const rock_http_request_t *req) {
  if (req->body_file || req->out_file || req->on_chunk || req->sink || req->source) return 0;
  const char *a, *a_end, *path;
  if (split_url(req->url, &a, &a_end, &path)) return 0;
  /* a path too long for sun_path: libuv (1.44) would cut it and connect
   * to another socket; curl refuses it ("Unix socket path too long") */
  if (req->unix_socket) return strlen(req->unix_socket) < sizeof(struct sockaddr_un){0}.sun_path;
  struct sockaddr_storage ss;
  int v6_port;
  return p->no_proxy_env && !tcp_target(a, a_end, &ss, &v6_port);
}

/* ---- requests --------------------------------------------------------- */

static void timer_closed(uv_handle_t *h) {
  rock_plain_t *p = h->data;
  free(h);
  if (--p->handles == 0 && p->closing) free(p);
}

static void req_free(rock_plain_req_t *r) {
  rock_plain_t *p = r->p;
  if (r->prev) r->prev->next = r->next;
  else if (p->reqs == r) p->reqs = r->next;
  if (r->next) r->next->prev = r->prev;
  if (r->socket_path && r->counted) p->local--;
  if (r->timer) {
    r->timer->data = p;
    uv_close((uv_handle_t *)r->timer, timer_closed);
  }
  free(r->key);
  free(r->socket_path);
  rock_buf_free(&r->out);
  rock_buf_free(&r->head);
  rock_buf_free(&r->body);
  free(r);
}

/* Deliver r's outcome and free it. The connection was handed back (or
 * closed) first, so the callback may start or cancel anything. */
static void deliver(rock_plain_req_t *r, rock_http_response_t *res) {
  if (r->conn) {
    r->conn->req = NULL;
    r->conn = NULL;
  }
  if (r->prev) r->prev->next = r->next;
  else if (r->p->reqs == r) r->p->reqs = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = NULL;
  r->fn(r->data, res);
  req_free(r);
}

/* No response: err and why, the connection closed. */
static void fail(rock_plain_req_t *r, rock_err err, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(rock_plain_req_t *r, rock_err err, int sys_errno, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->conn) {
    conn_t *c = r->conn;
    c->req = NULL;
    r->conn = NULL;
    conn_close(c);
  }
  rock_http_response_t res = {.err = err, .message = msg, .sys_errno = sys_errno,
                              .too_large = r->too_large ? r->max_body : 0};
  deliver(r, &res);
}

static void on_timeout(uv_timer_t *t) {
  rock_plain_req_t *r = t->data;
  if (r->later_err)
    fail(r, ROCK_E_CONNECTION, -r->later_err, "Failed to connect to %s: %s",
         r->socket_path ? r->socket_path : "the server", uv_strerror(r->later_err));
  else
    fail(r, ROCK_E_TIMEOUT, 0, "Operation timed out after %ld milliseconds with %zu bytes received",
         r->timeout_ms, r->body.len);
}

/* A connect that failed at once (uv_tcp_connect), from inside a call that
 * must not deliver (rock_plain_request, or a resend under it): delivered
 * from the loop instead, through the request's timer. -1: no memory for a
 * timer (nothing done). */
static int fail_later(rock_plain_req_t *r, int uv_err) {
  if (!r->timer) {
    if (!(r->timer = malloc(sizeof *r->timer))) return -1;
    uv_timer_init(r->p->loop, r->timer);
    r->p->handles++;
    r->timer->data = r;
  }
  r->later_err = uv_err;
  uv_timer_start(r->timer, on_timeout, 0, 0);
  return 0;
}

int rock_http_probe_unix(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) return ENAMETOOLONG;
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int e = connect(fd, (struct sockaddr *)&a, sizeof a) ? errno : EAGAIN;
  close(fd);
  return e;
}

/* The connection went before the whole answer came: on a reused one with
 * nothing read, send again on a new one; else an http error (for a unix
 * socket with the errno of a new connect: ECONNREFUSED, its server is
 * gone). */
static void lost(rock_plain_req_t *r, int uv_status) {
  conn_t *c = r->conn;
  if (c && c->reused && !r->got_bytes && !r->retried) {
    c->req = NULL;
    r->conn = NULL;
    conn_close(c);
    r->retried = 1;
    /* a new connection, not another idle one: that may be dead too (the
     * server went since the loop last ran), and its failure would be
     * delivered from inside rock_plain_request */
    int e = conn_open(r);
    if (e && fail_later(r, e))
      fail(r, ROCK_E_CONNECTION, -e, "Failed to connect: %s", uv_strerror(e));
    return;
  }
  int e = r->socket_path ? rock_http_probe_unix(r->socket_path) : 0;
  if (e == EAGAIN) e = 0;
  if (!r->got_bytes)
    fail(r, ROCK_E_HTTP, e, "Empty reply from server (%s)", uv_strerror(uv_status));
  else
    fail(r, ROCK_E_HTTP, e, "the connection closed before the response ended (%s)",
         uv_strerror(uv_status));
}

/* ---- connections ------------------------------------------------------ */

static void conn_closed(uv_handle_t *h) {
  conn_t *c = h->data;
  rock_plain_t *p = c->p;
  free(c->key);
  free(c);
  if (--p->handles == 0 && p->closing) free(p);
}

static void idle_unlink(conn_t *c) {
  rock_plain_t *p = c->p;
  uv_ref(&c->u.h);
  if (c->prev) c->prev->next = c->next;
  else if (p->idle == c) p->idle = c->next;
  else return; /* not in the list */
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  p->nidle--;
}

static void conn_close(conn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  idle_unlink(c);
  uv_close(&c->u.h, conn_closed);
}

/* The response is complete: the connection is kept for the next request
 * to this target when both sides allow it. */
static void conn_release(conn_t *c, int keep) {
  rock_plain_t *p = c->p;
  c->req = NULL;
  if (!keep || c->writing || p->closing) {
    conn_close(c);
    return;
  }
  if (p->nidle >= MAX_IDLE) { /* drop the oldest */
    conn_t *old = p->idle;
    while (old->next) old = old->next;
    conn_close(old);
  }
  c->reused = 1;
  uv_unref(&c->u.h); /* an idle connection keeps no loop alive */
  c->next = p->idle;
  c->prev = NULL;
  if (p->idle) p->idle->prev = c;
  p->idle = c;
  p->nidle++;
}

static void finish(rock_plain_req_t *r, int keep) {
  conn_t *c = r->conn;
  r->conn = NULL;
  conn_release(c, keep);
  rock_http_response_t res = {
      .status = r->complete,
      .headers = r->head.data ? r->head.data : "",
      .headers_len = r->head.len,
      .body = r->body.data ? r->body.data : "",
      .body_len = r->body.len,
  };
  deliver(r, &res);
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  conn_t *c = h->data;
  (void)hint;
  *buf = uv_buf_init(c->p->scratch, sizeof c->p->scratch);
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  conn_t *c = s->data;
  rock_plain_req_t *r = c->req;
  if (n == 0) return;
  if (!r) { /* idle: the server closed it, or spoke out of turn */
    conn_close(c);
    return;
  }
  if (n < 0) {
    if (n == UV_EOF && r->got_bytes) { /* a body that ends with the connection */
      http_parser_execute(&c->parser, &settings, NULL, 0);
      if (r->complete) {
        finish(r, 0);
        return;
      }
    }
    lost(r, (int)n);
    return;
  }
  r->got_bytes = 1;
  size_t used = http_parser_execute(&c->parser, &settings, buf->base, (size_t)n);
  if (r->complete) { /* bytes past the answer: no pipelining here, close */
    finish(r, used == (size_t)n && r->complete != 101 && http_should_keep_alive(&c->parser));
    return;
  }
  if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK && r->too_large) {
    fail(r, ROCK_E_HTTP, 0, "the response body is larger than %llu bytes",
         (unsigned long long)r->max_body);
  } else if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK) {
    fail(r, ROCK_E_HTTP, 0, "malformed response: %s",
         http_errno_description(HTTP_PARSER_ERRNO(&c->parser)));
  }
}

static void write_cb(uv_write_t *w, int status) {
  conn_t *c = w->data;
  c->writing = 0;
  if (c->closing) return;
  if (status < 0 && c->req) lost(c->req, status);
  else if (!c->req) conn_close(c); /* answered before the request was all out */
}

static void send_req(conn_t *c) {
  rock_plain_req_t *r = c->req;
  http_parser_init(&c->parser, HTTP_RESPONSE);
  c->parser.data = c;
  /* send(2) rather than uv_try_write: MSG_NOSIGNAL, a peer that is gone
   * is an error here, not a SIGPIPE for the whole host */
  uv_os_fd_t fd;
  if (uv_fileno(&c->u.h, &fd)) {
    lost(r, UV_EBADF);
    return;
  }
  ssize_t n;
  do n = send(fd, r->out.data, r->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t)r->out.len) return;
  if (n < 0 && errno != EAGAIN) {
    lost(r, uv_translate_sys_error(errno));
    return;
  }
  if (n < 0) n = 0;
  uv_buf_t b = uv_buf_init(r->out.data + n, r->out.len - n);
  c->write.data = c;
  c->writing = 1;
  int e = uv_write(&c->write, &c->u.s, &b, 1, write_cb);
  if (e) {
    c->writing = 0;
    lost(r, e);
  }
}

static void connect_cb(uv_connect_t *req, int status) {
  conn_t *c = req->data;
  rock_plain_req_t *r = c->req;
  if (status == UV_ECANCELED || c->closing) return;
  if (!r) { /* its request was cancelled while connecting */
    conn_close(c);
    return;
  }
  if (status < 0 && r->v6_port) { /* localhost: ::1 then */
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&r->addr;
    uv_ip6_addr("::1", r->v6_port, a6);
    r->v6_port = 0;
    c->req = NULL;
    r->conn = NULL;
    conn_close(c);
    int e = conn_open(r);
    if (e) fail(r, ROCK_E_CONNECTION, -e, "Failed to connect to the server: %s", uv_strerror(e));
    return;
  }
  if (status < 0) {
    fail(r, ROCK_E_CONNECTION, -status, "Failed to connect to %s: %s",
         r->socket_path ? r->socket_path : "the server", uv_strerror(status));
    return;
  }
  c->connected = 1;
  if (r->peer_pid) {
    uv_os_fd_t fd;
    struct ucred cred = {.pid = -1};
    socklen_t len = sizeof cred;
    if (uv_fileno(&c->u.h, &fd) ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
      cred.pid = -1;
    if (cred.pid != r->peer_pid) {
      long seen = cred.pid > 0 ? cred.pid : -1;
      char msg[512];
      snprintf(msg, sizeof msg, "socket %s is served by pid %ld, not by pid %ld",
               r->socket_path, seen, r->peer_pid);
      c->req = NULL;
      r->conn = NULL;
      conn_close(c);
      rock_http_response_t res = {.err = ROCK_E_CONNECTION, .message = msg, .peer_pid = seen};
      deliver(r, &res);
      return;
    }
  }
  if (uv_read_start(&c->u.s, alloc_cb, read_cb)) {
    lost(r, UV_EIO);
    return;
  }
  send_req(c);
}

/* A new connection for r (r->conn set; the connect finishes later). */
static int conn_open(rock_plain_req_t *r) {
  rock_plain_t *p = r->p;
  conn_t *c = calloc(1, sizeof *c);
  if (!c || !(c->key = strdup(r->key))) {
    free(c);
    return UV_ENOMEM;
  }
  c->p = p;
  int e = r->socket_path ? uv_pipe_init(p->loop, &c->u.pipe, 0)
                         : uv_tcp_init_ex(p->loop, &c->u.tcp, r->addr.ss_family); /* its socket now */
  if (e) {
    free(c->key);
    free(c);
    return e;
  }
  c->u.h.data = c;
  p->handles++;
  c->connect.data = c;
  c->req = r;
  r->conn = c;
  if (r->socket_path) {
    uv_pipe_connect(&c->connect, &c->u.pipe, r->socket_path, connect_cb);
    return 0;
  }
  uv_tcp_nodelay(&c->u.tcp, 1);
  uv_os_fd_t fd;
  if (!uv_fileno(&c->u.h, &fd)) rock_http_tcp_tune(fd); /* a peer gone is found */
  e = uv_tcp_connect(&c->connect, &c->u.tcp, (const struct sockaddr *)&r->addr, connect_cb);
  if (e) {
    c->req = NULL;
    r->conn = NULL;
    conn_close(c);
  }
  return e;
}

/* Send r: on an idle connection to its target (a write that fails there
 * comes back through lost(), which connects anew), else on a new
 * connection. Returns 0, or a uv error when no connection could be made. */
static int start(rock_plain_req_t *r) {
  for (conn_t *c = r->p->idle; c; c = c->next) {
    if (strcmp(c->key, r->key)) continue;
    idle_unlink(c);
    c->req = r;
    r->conn = c;
    send_req(c);
    return 0;
  }
  return conn_open(r);
}

/* ---- the request's bytes ---------------------------------------------- */

static int has_header(const char *const *h, const char *name) {
  size_t n = strlen(name);
  for (; h && *h; h++)
    if (!strncasecmp(*h, name, n) && (*h)[n] == ':') return 1;
  return 0;
}

static int build(rock_plain_req_t *r, const rock_http_request_t *req,
                 const char *a, const char *a_end, const char *path) {
  int has_body = req->body != NULL;
  const char *method = req->method ? req->method : has_body ? "POST" : "GET";
  r->is_head = !strcmp(method, "HEAD");
  rock_buf_t *o = &r->out;
  int bad = rock_buf_puts(o, method) | rock_buf_puts(o, " ");
  if (!path) bad |= rock_buf_puts(o, "/");
  else {
    size_t pl = strcspn(path, "#");
    if (*path != '/') bad |= rock_buf_puts(o, "/");
    bad |= rock_buf_append(o, path, pl);
  }
  bad |= rock_buf_puts(o, " HTTP/1.1\r\n");
  if (!has_header(req->headers, "Host")) {
    bad |= rock_buf_puts(o, "Host: ");
    bad |= rock_buf_append(o, a, a_end - a);
    bad |= rock_buf_puts(o, "\r\n");
  }
  for (const char *const *h = req->headers; h && *h; h++) {
    const char *colon = strchr(*h, ':');
    if (!colon || strpbrk(*h, "\r\n")) return ROCK_E_INVALID_ARGUMENT;
    const char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    if (!*v) continue; /* "Name:" asks for no such header, as with curl */
    bad |= rock_buf_puts(o, *h);
    bad |= rock_buf_puts(o, "\r\n");
  }
  if (!has_header(req->headers, "Content-Length") &&
      (has_body || !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH")))
    bad |= rock_buf_puts(o, "Content-Length: ") | rock_buf_putu(o, has_body ? req->body_len : 0) |
           rock_buf_puts(o, "\r\n");
  bad |= rock_buf_puts(o, "\r\n");
  if (has_body) bad |= rock_buf_append(o, req->body, req->body_len);
  return bad ? ROCK_E_NO_MEMORY : ROCK_E_OK;
}

rock_err rock_plain_request(rock_plain_t *p, const rock_http_request_t *req,
                            rock_http_done_fn fn, void *data, rock_plain_req_t **out) {
  const char *a, *a_end, *path;
  if (p->closing || split_url(req->url, &a, &a_end, &path)) return ROCK_E_INVALID_ARGUMENT;
  rock_plain_req_t *r = calloc(1, sizeof *r);
  if (!r) return ROCK_E_NO_MEMORY;
  r->p = p;
  r->fn = fn;
  r->data = data;
  r->peer_pid = req->unix_socket ? req->peer_pid : 0;
  r->max_body = req->max_body;
  rock_buf_t key = {0};
  int bad;
  if (req->unix_socket) {
    if (strlen(req->unix_socket) >= sizeof(struct sockaddr_un){0}.sun_path) {
      free(r);
      return ROCK_E_INVALID_ARGUMENT; /* rock_plain_takes said no */
    }
    r->socket_path = strdup(req->unix_socket);
    bad = !r->socket_path || rock_buf_puts(&key, "u") || rock_buf_putu(&key, (unsigned long)r->peer_pid) ||
          rock_buf_puts(&key, ":") || rock_buf_puts(&key, req->unix_socket); /* peer_pid >= 0 */
  } else {
    bad = tcp_target(a, a_end, &r->addr, &r->v6_port) ? ROCK_E_INVALID_ARGUMENT : 0;
    if (!bad) bad = rock_buf_puts(&key, "t") || rock_buf_append(&key, a, a_end - a);
  }
  r->key = key.data;
  rock_err e = bad ? ROCK_E_NO_MEMORY : build(r, req, a, a_end, path);
  if (!e && req->timeout > 0) {
    double ms = req->timeout * 1000;
    /* whole milliseconds, at least one (curl's unit); past what a long
     * of ms holds (math.huge) as good as none */
    r->timeout_ms = ms >= 2147483647.0 ? 2147483647L : ms < 1 ? 1 : (long)ms;
    if (!(r->timer = malloc(sizeof *r->timer))) e = ROCK_E_NO_MEMORY;
    else {
      uv_timer_init(p->loop, r->timer);
      p->handles++;
      r->timer->data = r;
      uv_update_time(p->loop); /* from now, not from the loop's last turn */
      uv_timer_start(r->timer, on_timeout, (uint64_t)r->timeout_ms, 0);
    }
  }
  if (e) {
    req_free(r);
    return e;
  }
  r->next = p->reqs;
  if (p->reqs) p->reqs->prev = r;
  p->reqs = r;
  if (r->socket_path) p->local++, r->counted = 1;
  if (out) *out = r;
  int ce = start(r);
  if (ce && fail_later(r, ce)) { /* its errno comes from the loop; no memory: fn never runs */
    r->fn = NULL;
    req_free(r);
    return ROCK_E_NO_MEMORY;
  }
  return ROCK_E_OK;
}

void rock_plain_cancel(rock_plain_req_t *r) {
  if (r->conn) {
    conn_t *c = r->conn;
    c->req = NULL;
    r->conn = NULL;
    conn_close(c); /* mid-exchange: not reusable */
  }
  req_free(r);
}

/* ---- response parsing ------------------------------------------------- */

static rock_plain_req_t *req_of(http_parser *hp) { return ((conn_t *)hp->data)->req; }

static int on_message_begin(http_parser *hp) {
  rock_plain_req_t *r = req_of(hp);
  r->last_header = 0;
  return 0;
}

/* "HTTP/1.1 200 " as the server sent it (callers see the status line) */
static int put_status_line(rock_buf_t *h, const http_parser *hp) {
  return rock_buf_puts(h, "HTTP/") | rock_buf_putu(h, hp->http_major) | rock_buf_puts(h, ".") |
         rock_buf_putu(h, hp->http_minor) | rock_buf_puts(h, " ") | rock_buf_putu(h, hp->status_code) |
         rock_buf_puts(h, " ");
}

static int on_status(http_parser *hp, const char *at, size_t n) {
  rock_plain_req_t *r = req_of(hp);
  if (!r->last_header) { /* the first piece of the status line */
    if (put_status_line(&r->head, hp)) return -1;
    r->last_header = 3;
  }
  return rock_buf_append(&r->head, at, n);
}

static int on_header_field(http_parser *hp, const char *at, size_t n) {
  rock_plain_req_t *r = req_of(hp);
  if (r->last_header != 1) rock_buf_puts(&r->head, "\r\n");
  r->last_header = 1;
  return rock_buf_append(&r->head, at, n);
}

static int on_header_value(http_parser *hp, const char *at, size_t n) {
  rock_plain_req_t *r = req_of(hp);
  if (r->last_header != 2) rock_buf_puts(&r->head, ": ");
  r->last_header = 2;
  return rock_buf_append(&r->head, at, n);
}

/* The most a Content-Length makes room for at once: a larger body (or a
 * length that lies) grows the buffer as it comes. */
#define RESERVE_MAX ((uint64_t)1 << 30)

static int on_headers_complete(http_parser *hp) {
  rock_plain_req_t *r = req_of(hp);
  if (!r->last_header && put_status_line(&r->head, hp)) return -1; /* a status line without a reason */
  if (rock_buf_puts(&r->head, "\r\n\r\n")) return -1;
  r->last_header = 0;
  if (r->is_head) return 1; /* no body follows */
  uint64_t cl = hp->content_length; /* ULLONG_MAX: not given */
  if (cl == (uint64_t)-1 || cl == 0) return 0;
  if (r->max_body && cl > r->max_body) {
    r->too_large = 1;
    return -1;
  }
  /* the body lands in one allocation of its size: no doubling copies */
  return rock_buf_reserve(&r->body, cl < RESERVE_MAX ? cl : RESERVE_MAX) ? -1 : 0;
}

static int on_body(http_parser *hp, const char *at, size_t n) {
  rock_plain_req_t *r = req_of(hp);
  if (r->max_body && n > r->max_body - r->body.len) { /* (len never passes max_body) */
    r->too_large = 1;
    return -1;
  }
  return rock_buf_append(&r->body, at, n);
}

static int on_message_complete(http_parser *hp) {
  rock_plain_req_t *r = req_of(hp);
  /* interim; a 101 (the server switched protocols) is the last HTTP answer */
  if (hp->status_code >= 100 && hp->status_code < 200 && hp->status_code != 101) return 0;
  r->complete = (int)hp->status_code;
  http_parser_pause(hp, 1); /* what follows is not this answer's */
  return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_status = on_status,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- the client -------------------------------------------------------- */

int rock_plain_local_pending(const rock_plain_t *p) { return p->local; }

static int proxy_set(void) {
  static const char *const names[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *v = getenv(names[i]);
    if (v && *v) return 1;
  }
  return 0;
}

int rock_plain_init(rock_plain_t **out, uv_loop_t *loop) {
  rock_plain_t *p = calloc(1, sizeof *p);
  if (!p) return ROCK_E_NO_MEMORY;
  p->loop = loop;
  p->no_proxy_env = !proxy_set();
  *out = p;
  return ROCK_E_OK;
}

void rock_plain_close(rock_plain_t *p) {
  if (p->closing) return;
  p->closing = 1;
  while (p->reqs) rock_plain_cancel(p->reqs);
  while (p->idle) conn_close(p->idle);
  if (p->handles == 0) free(p);
}
