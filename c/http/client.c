/* client.c: libcurl multi on libuv (see client.h); plain.c's requests
 * ride the same transfer handles.
 * Flow: curl asks to watch sockets (socket_cb -> uv_poll) and to set a timer
 * (timer_cb -> uv_timer); their callbacks call curl_multi_socket_action,
 * then collect_done() moves finished transfers to the done queue; the idle
 * handle drains the queue and runs the user callbacks. A transfer with a
 * sink relays its 2xx answer from curl's callbacks as it comes, paused
 * (CURL_WRITEFUNC_PAUSE) while the sink is full and resumed when it says;
 * a transfer with a source sends its body as the source has it, paused
 * (CURL_READFUNC_PAUSE) while it has none; a sink's or source's abort
 * takes the transfer out of curl from the idle handle. */
#include "client.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../core/buf.h"
#include "../core/log.h"
#include "plain.h"

struct rock_http_xfer {
  rock_http_client_t *client;
  CURL *easy;
  struct curl_slist *headers;
  char *body;
  rock_buf_t resp_body, resp_headers;
  FILE *in;        /* body_file, being sent */
  FILE *out;       /* out_file, being written (2xx only) */
  char *out_path;
  int body_sink;   /* 0 = not chosen yet, 1 = memory, 2 = out file */
  void (*on_chunk)(void *data, const char *p, size_t n);
  rock_http_done_fn fn;
  void *data;
  CURLcode result;
  char errbuf[CURL_ERROR_SIZE];
  long peer_pid;      /* required peer of a unix socket, or 0 */
  uint64_t max_body;  /* the request's bound on a body in memory, or 0 */
  int too_large;      /* the body passed it: the transfer was ended */
  long peer_seen;     /* the wrong peer a connect found (-1 unknown), or 0 */
  char *socket_path;  /* unix_socket, for messages and connect_errno */
  struct curl_slist *connect_to; /* keeps peer-checked connections apart */
  curl_socket_t new_fd;          /* a connection made for this transfer */
  rock_http_xfer_t *next_done;
  rock_http_xfer_t *prev, *next; /* the client's list of transfers */
  rock_plain_req_t *plain;       /* a request plain.c carries (no easy) */
  rock_http_sink_t *sink;        /* a 2xx answer's destination, or NULL */
  rock_http_source_t *source;    /* the body's origin, or NULL */
  size_t head_from;              /* where the last head starts in resp_headers */
  rock_err abort_err;            /* rock_http_xfer_abort's, or 0 */
  const char *abort_msg;
  unsigned sink_started : 1, paused : 1, /* the sink or the source paused it */
      queued : 1; /* out of curl: in the done queue, or delivered */
};

struct rock_http_client {
  uv_loop_t *loop;
  CURLM *multi;
  uv_timer_t timer;
  uv_idle_t idle;
  rock_http_xfer_t *done_head, *done_tail;
  rock_http_xfer_t *xfers; /* every transfer not yet freed */
  int chunks_pending;      /* some on_chunk transfer has undelivered bytes */
  int aborts_pending;      /* rock_http_xfer_abort marked some transfer */
  CURL *spare[16];         /* easy handles of finished transfers, for reuse */
  int nspare;
  struct sock *socks;      /* every socket watched */
  rock_plain_t *plain;     /* rock's own peers, without curl (plain.c) */
  int closing, handles;
};

typedef struct sock {
  uv_poll_t poll;
  curl_socket_t fd;
  rock_http_client_t *client;
  struct sock *prev, *next;
} sock_t;

static void deliver(uv_idle_t *h);

/* Where a body goes is chosen at its first byte, once the status is known:
 * a 2xx body to out_file when one is set, anything else (an error answer)
 * to memory so its message can be read. */
static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  rock_http_xfer_t *x = ud;
  n *= size;
  if (x->sink_started) { /* relayed: nothing kept here */
    if (x->abort_err) return 0;
    int r = x->sink->write(x->sink, p, n);
    if (r == 1) x->paused = 1;
    return r == 0 ? n : r == 1 ? CURL_WRITEFUNC_PAUSE : 0;
  }
  if (!x->body_sink) {
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    int ok = status >= 200 && status < 300;
    x->body_sink = 1;
    if (ok && x->out_path) {
      if (!(x->out = fopen(x->out_path, "wb"))) return 0;
      x->body_sink = 2;
    }
    if (!ok) x->on_chunk = NULL;
  }
  if (x->body_sink == 2) return fwrite(p, 1, n, x->out) == n ? n : 0;
  if (x->max_body && n > x->max_body - x->resp_body.len) {
    x->too_large = 1; /* (len never passes max_body) */
    return 0;
  }
  if (rock_buf_append(&x->resp_body, p, n)) return 0;
  if (x->on_chunk) {
    x->client->chunks_pending = 1;
    uv_idle_start(&x->client->idle, deliver);
  }
  return n;
}

static size_t on_read(char *p, size_t size, size_t n, void *ud) {
  rock_http_xfer_t *x = ud;
  size_t got = fread(p, 1, size * n, x->in);
  return ferror(x->in) ? CURL_READFUNC_ABORT : got;
}

/* The body from a source: what it has now, or a pause until it has more. */
static size_t on_source_read(char *p, size_t size, size_t n, void *ud) {
  rock_http_xfer_t *x = ud;
  if (x->abort_err) return CURL_READFUNC_ABORT;
  long got = x->source->read(x->source, x, p, size * n);
  if (got == -2) {
    x->paused = 1;
    return CURL_READFUNC_PAUSE;
  }
  return got < 0 ? CURL_READFUNC_ABORT : (size_t)got;
}

/* The body's size a head says (Content-Length), or UINT64_MAX. */
static uint64_t head_length(const char *h, size_t len) {
  const char *end = h + len;
  for (const char *line = h; line < end;) {
    const char *eol = memchr(line, '\n', end - line);
    if (!eol) eol = end;
    if (eol - line > 15 && !strncasecmp(line, "content-length:", 15)) {
      const char *v = line + 15;
      while (v < eol && (*v == ' ' || *v == '\t')) v++;
      uint64_t n = 0;
      int digits = 0;
      for (; v < eol && *v >= '0' && *v <= '9' && n <= (UINT64_MAX - 9) / 10; v++, digits++)
        n = n * 10 + (uint64_t)(*v - '0');
      return digits ? n : UINT64_MAX;
    }
    line = eol + 1;
  }
  return UINT64_MAX;
}

/* Header lines, kept; a sink's transfer starts its relay once the final
 * head (not a 1xx) of a 2xx answer is whole. */
static size_t on_header(char *p, size_t size, size_t n, void *ud) {
  rock_http_xfer_t *x = ud;
  n *= size;
  if (n >= 5 && !memcmp(p, "HTTP/", 5)) x->head_from = x->resp_headers.len;
  if (rock_buf_append(&x->resp_headers, p, n)) return 0;
  if (!x->sink || x->sink_started || !(n == 2 || n == 1) || (p[0] != '\r' && p[0] != '\n'))
    return n;
  long status = 0;
  curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) return n; /* 1xx: more to come; else to memory */
  const char *h = x->resp_headers.data + x->head_from;
  size_t hl = x->resp_headers.len - x->head_from;
  x->sink_started = 1;
  if (x->sink->start(x->sink, x, status, h, hl, head_length(h, hl))) return 0;
  return n;
}

static void xfer_free(rock_http_xfer_t *x) {
  rock_http_client_t *c = x->client;
  if (x->prev) x->prev->next = x->next;
  else if (c->xfers == x) c->xfers = x->next;
  if (x->next) x->next->prev = x->prev;
  if (x->easy) { /* kept for the next request: init and free cost more */
    if (c->nspare < (int)(sizeof c->spare / sizeof c->spare[0]) && !c->closing) {
      curl_easy_reset(x->easy);
      c->spare[c->nspare++] = x->easy;
    } else {
      curl_easy_cleanup(x->easy);
    }
  }
  curl_slist_free_all(x->headers);
  curl_slist_free_all(x->connect_to);
  if (x->in) fclose(x->in);
  if (x->out) { /* still open: cancelled mid-body, no partial file */
    fclose(x->out);
    unlink(x->out_path);
  }
  free(x->out_path);
  free(x->socket_path);
  free(x->body);
  free(x->resp_body.data);
  free(x->resp_headers.data);
  free(x);
}

/* Hand each streaming transfer's new bytes to its on_chunk. A callback
 * may cancel transfers, so the list is walked again after each call. */
static void deliver_chunks(rock_http_client_t *c) {
  int again = 1;
  while (again) {
    again = 0;
    for (rock_http_xfer_t *x = c->xfers; x; x = x->next) {
      if (!x->on_chunk || !x->resp_body.len) continue;
      rock_buf_t b = x->resp_body;
      x->resp_body.len = 0;
      x->on_chunk(x->data, b.data, b.len);
      again = 1;
      break;
    }
  }
  c->chunks_pending = 0;
}

/* Why a connect failed (also asked when a unix socket's server dropped a
 * connection mid-exchange: ECONNREFUSED then says it is gone). curl keeps no errno for a unix socket whose
 * backlog is full (its non-blocking connect's EAGAIN passes for "in
 * progress", then fails), so a failed unix connect is tried once more here,
 * non-blocking: EAGAIN means the server is there but busy; ECONNREFUSED or
 * ENOENT that nobody serves the path. A probe that connects means room was
 * made since: reported as EAGAIN too (try again). */
static int connect_errno(rock_http_xfer_t *x) {
  long os = 0;
  curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os);
  if (!x->socket_path) return (int)os;
  return rock_http_probe_unix(x->socket_path);
}

/* Completions are popped one at a time: a callback may cancel (free) any
 * other transfer, queued ones included (rock_http_xfer_cancel unlinks it
 * from the queue), so nothing read before a callback is used after it. The
 * transfer being delivered leaves the client's list first, so even a
 * client closed from its callback does not free it under us. */
static void queue_done(rock_http_client_t *c, rock_http_xfer_t *x) {
  x->queued = 1;
  x->next_done = NULL;
  if (c->done_tail) c->done_tail->next_done = x;
  else c->done_head = x;
  c->done_tail = x;
  uv_idle_start(&c->idle, deliver);
}

/* Transfers ended by rock_http_xfer_abort leave curl (here: outside its
 * callbacks) for the done queue. */
static void run_aborts(rock_http_client_t *c) {
  c->aborts_pending = 0;
  for (rock_http_xfer_t *x = c->xfers; x; x = x->next) {
    if (!x->abort_err || x->queued || !x->easy) continue;
    curl_multi_remove_handle(c->multi, x->easy);
    x->result = CURLE_ABORTED_BY_CALLBACK;
    queue_done(c, x);
  }
}

static void deliver(uv_idle_t *h) {
  rock_http_client_t *c = h->data;
  if (c->chunks_pending) deliver_chunks(c);
  if (c->aborts_pending) run_aborts(c);
  uv_idle_stop(&c->idle);
  rock_http_xfer_t *x;
  while ((x = c->done_head)) {
    c->done_head = x->next_done;
    if (!c->done_head) c->done_tail = NULL;
    x->next_done = NULL;
    if (x->prev) x->prev->next = x->next;
    else if (c->xfers == x) c->xfers = x->next;
    if (x->next) x->next->prev = x->prev;
    x->prev = x->next = NULL;
    rock_http_response_t r = {0};
    char msg[CURL_ERROR_SIZE + 256];
    if (x->abort_err) { /* its sink's reason, whatever curl said */
      r.err = x->abort_err;
      r.message = x->abort_msg;
    } else if (x->result == CURLE_OK) {
      curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r.status);
    } else if (x->too_large) {
      r.err = ROCK_E_HTTP;
      r.too_large = x->max_body;
      snprintf(msg, sizeof msg, "the response body is larger than %llu bytes",
               (unsigned long long)x->max_body);
      r.message = msg;
    } else if (x->peer_seen) {
      r.err = ROCK_E_CONNECTION;
      r.peer_pid = x->peer_seen;
      snprintf(msg, sizeof msg, "socket %s is served by pid %ld, not by pid %ld",
               x->socket_path ? x->socket_path : "?", x->peer_seen, x->peer_pid);
      r.message = msg;
    } else {
      r.err = x->result == CURLE_OPERATION_TIMEDOUT ? ROCK_E_TIMEOUT
              : x->result == CURLE_COULDNT_CONNECT  ? ROCK_E_CONNECTION
                                                    : ROCK_E_HTTP;
      r.message = x->errbuf[0] ? x->errbuf : curl_easy_strerror(x->result);
      if (x->result == CURLE_COULDNT_CONNECT) {
        r.sys_errno = connect_errno(x);
      } else if (x->socket_path && (x->result == CURLE_GOT_NOTHING ||
                                    x->result == CURLE_RECV_ERROR ||
                                    x->result == CURLE_SEND_ERROR)) {
        /* the server dropped the connection: is it still there at all? */
        int e = connect_errno(x);
        if (e != EAGAIN) r.sys_errno = e;
      }
    }
    if (x->out && fclose(x->out) && r.err == ROCK_E_OK) {
      r.err = ROCK_E_IO;
      r.message = "cannot write the response body to its file";
    }
    x->out = NULL;
    if (x->out_path && x->body_sink != 2 && r.err == ROCK_E_OK && r.status >= 200 &&
        r.status < 300) { /* a 2xx with no body (a 0-byte file): its file is empty */
      FILE *f = fopen(x->out_path, "wb");
      if (!f || fclose(f)) {
        r.err = ROCK_E_IO;
        r.message = "cannot write the response body to its file";
      }
    }
    /* no partial file: out_file exists only when the whole 2xx body is in */
    if (x->out_path && (r.err || r.status < 200 || r.status >= 300))
      unlink(x->out_path);
    r.headers = x->resp_headers.data ? x->resp_headers.data : "";
    r.headers_len = x->resp_headers.len;
    r.body = x->resp_body.data ? x->resp_body.data : "";
    r.body_len = x->resp_body.len;
    x->fn(x->data, &r);
    xfer_free(x);
  }
}

static void collect_done(rock_http_client_t *c) {
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(c->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    rock_http_xfer_t *x;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
    x->result = m->data.result;
    curl_multi_remove_handle(c->multi, x->easy);
    queue_done(c, x);
  }
}

static void on_poll(uv_poll_t *p, int status, int events) {
  sock_t *s = p->data;
  int flags = status < 0 ? CURL_CSELECT_ERR : 0, running;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  rock_http_client_t *c = s->client;
  curl_multi_socket_action(c->multi, s->fd, flags, &running);
  collect_done(c);
}

static void on_timer(uv_timer_t *t) {
  rock_http_client_t *c = t->data;
  int running;
  curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  collect_done(c);
}

static void client_handle_closed(uv_handle_t *h) {
  rock_http_client_t *c = h->data;
  if (--c->handles == 0) free(c);
}

static void sock_closed(uv_handle_t *h) {
  sock_t *s = h->data;
  rock_http_client_t *c = s->client;
  free(s);
  if (c->closing && --c->handles == 0) free(c);
}

static void sock_close(rock_http_client_t *c, sock_t *s) {
  if (s->prev) s->prev->next = s->next;
  else c->socks = s->next;
  if (s->next) s->next->prev = s->prev;
  if (c->closing) c->handles++;
  uv_close((uv_handle_t *)&s->poll, sock_closed);
}

static sock_t *sock_find(rock_http_client_t *c, curl_socket_t fd) {
  for (sock_t *s = c->socks; s; s = s->next)
    if (s->fd == fd) return s;
  return NULL;
}

/* A kept-alive connection's socket is handed back to curl between
 * requests (CURL_POLL_REMOVE) but stays open: its poll handle is only
 * stopped, and reused by the next request on it. The handle goes when
 * curl closes the socket (close_cb). */
static int socket_cb(CURL *e, curl_socket_t fd, int what, void *userp,
                     void *socketp) {
  rock_http_client_t *c = userp;
  sock_t *s = socketp;
  (void)e;
  if (what == CURL_POLL_REMOVE) {
    if (s) {
      curl_multi_assign(c->multi, fd, NULL);
      uv_poll_stop(&s->poll);
    }
    return 0;
  }
  if (!s && (s = sock_find(c, fd))) curl_multi_assign(c->multi, fd, s);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->fd = fd;
    s->client = c;
    if (uv_poll_init_socket(c->loop, &s->poll, fd)) {
      free(s);
      return -1;
    }
    s->poll.data = s;
    s->next = c->socks;
    if (c->socks) c->socks->prev = s;
    c->socks = s;
    curl_multi_assign(c->multi, fd, s);
  }
  int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) |
           (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
  uv_poll_start(&s->poll, ev, on_poll);
  return 0;
}

static int close_cb(void *clientp, curl_socket_t fd) {
  rock_http_client_t *c = clientp;
  sock_t *s = sock_find(c, fd);
  if (s) sock_close(c, s); /* stops watching before the fd goes */
  return close(fd);
}

/* The peer check of a unix socket. curl connects; the new socket is noted
 * here (sockopt_cb, before its connect) and checked by prereq_cb, which
 * runs once the connection is made, before any byte of the request is sent:
 * the kernel says which process serves the socket (SO_PEERCRED), and a
 * process other than peer_pid fails the transfer. A reused connection was
 * checked when it was made: requests with a peer_pid only share connections
 * with requests for the same pid (a CURLOPT_CONNECT_TO name per pid keeps
 * them apart in curl's cache). Connecting ourselves and handing curl the
 * socket (CURL_SOCKOPT_ALREADY_CONNECTED) would be simpler, but libcurl
 * 7.88 connects such a socket again and fails (curl issue #10626). */
static int sockopt_cb(void *clientp, curl_socket_t fd, curlsocktype purpose) {
  rock_http_xfer_t *x = clientp;
  (void)purpose;
  x->new_fd = fd;
  return CURL_SOCKOPT_OK;
}

void rock_http_tcp_tune(int fd) {
  int on = 1, idle = 10, intvl = 5;
  const char *env = getenv("ROCK_TCP_PEER_TIMEOUT");
  double secs = env && *env ? strtod(env, NULL) : 20;
  unsigned int ms = secs > 0 && secs < 86400 ? (unsigned int)(secs * 1000) : 20000;
  if (ms == 0) ms = 1;
  /* best effort: a socket without them still works, as before */
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

static int tcp_sockopt_cb(void *clientp, curl_socket_t fd, curlsocktype purpose) {
  (void)clientp, (void)purpose;
  rock_http_tcp_tune(fd);
  return CURL_SOCKOPT_OK;
}

static int prereq_cb(void *clientp, char *ip, char *local_ip, int port,
                     int local_port) {
  rock_http_xfer_t *x = clientp;
  (void)ip, (void)local_ip, (void)port, (void)local_port;
  if (x->new_fd == CURL_SOCKET_BAD) return CURL_PREREQFUNC_OK; /* reused */
  struct ucred cred = {.pid = -1};
  socklen_t len = sizeof cred;
  if (getsockopt(x->new_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) cred.pid = -1;
  x->new_fd = CURL_SOCKET_BAD;
  if (cred.pid == x->peer_pid) return CURL_PREREQFUNC_OK;
  x->peer_seen = cred.pid > 0 ? cred.pid : -1;
  return CURL_PREREQFUNC_ABORT;
}

static int timer_cb(CURLM *m, long ms, void *userp) {
  rock_http_client_t *c = userp;
  (void)m;
  if (ms < 0) uv_timer_stop(&c->timer);
  else uv_timer_start(&c->timer, on_timer, (uint64_t)ms, 0);
  return 0;
}

/* A plain.c request is done (called from the loop, outside curl): as in
 * deliver(), the transfer leaves the client's list before its callback. */
static void plain_done(void *data, const rock_http_response_t *r) {
  rock_http_xfer_t *x = data;
  x->plain = NULL;
  rock_http_client_t *c = x->client;
  if (x->prev) x->prev->next = x->next;
  else if (c->xfers == x) c->xfers = x->next;
  if (x->next) x->next->prev = x->prev;
  x->prev = x->next = NULL;
  x->fn(x->data, r);
  xfer_free(x);
}

int rock_http_client_init(rock_http_client_t **out, uv_loop_t *loop) {
  static int global_done;
  if (!global_done) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) return ROCK_E_INTERNAL;
    global_done = 1;
  }
  rock_http_client_t *c = calloc(1, sizeof *c);
  if (!c) return ROCK_E_NO_MEMORY;
  c->loop = loop;
  if (rock_plain_init(&c->plain, loop)) {
    free(c);
    return ROCK_E_NO_MEMORY;
  }
  c->multi = curl_multi_init();
  curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
  curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
  curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
  curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
  curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 256L);
  uv_timer_init(loop, &c->timer);
  uv_idle_init(loop, &c->idle);
  c->timer.data = c->idle.data = c;
  *out = c;
  return ROCK_E_OK;
}

rock_err rock_http_client_request(rock_http_client_t *c,
                                  const rock_http_request_t *req,
                                  rock_http_done_fn fn, void *data,
                                  rock_http_xfer_t **out) {
  if (!req->url || c->closing) return ROCK_E_INVALID_ARGUMENT;
  rock_http_xfer_t *x = calloc(1, sizeof *x);
  if (!x) return ROCK_E_NO_MEMORY;
  x->client = c;
  x->fn = fn;
  x->data = data;
  x->next = c->xfers;
  if (c->xfers) c->xfers->prev = x;
  c->xfers = x;
  if (rock_plain_takes(c->plain, req)) {
    rock_err e = rock_plain_request(c->plain, req, plain_done, x, &x->plain);
    if (e) {
      xfer_free(x);
      return e;
    }
    if (out) *out = x;
    return ROCK_E_OK;
  }
  x->easy = c->nspare ? c->spare[--c->nspare] : curl_easy_init();
  if (!x->easy) {
    xfer_free(x);
    return ROCK_E_NO_MEMORY;
  }
  CURL *e = x->easy;
  curl_easy_setopt(e, CURLOPT_URL, req->url);
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, close_cb);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
  x->max_body = req->max_body;
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  if (req->unix_socket) { /* local: no proxy, no compression */
    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, req->unix_socket);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    x->peer_pid = req->peer_pid;
    if (!(x->socket_path = strdup(req->unix_socket))) {
      xfer_free(x);
      return ROCK_E_NO_MEMORY;
    }
    if (req->peer_pid) {
      char to[48];
      snprintf(to, sizeof to, "::rock-peer-%ld:", req->peer_pid);
      if (!(x->connect_to = curl_slist_append(NULL, to))) {
        xfer_free(x);
        return ROCK_E_NO_MEMORY;
      }
      x->new_fd = CURL_SOCKET_BAD;
      curl_easy_setopt(e, CURLOPT_CONNECT_TO, x->connect_to);
      curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
      curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, x);
      curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
      curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    }
  } else {
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, tcp_sockopt_cb);
  }
  /* a timeout past what curl's millisecond long holds (math.huge, 1e30)
   * is as good as none: clamped to INT_MAX ms (24.8 days), never UB */
  if (req->timeout > 0)
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     req->timeout * 1000 >= INT_MAX ? (long)INT_MAX
                                                    : (long)(req->timeout * 1000));
  x->on_chunk = req->on_chunk;
  if (req->out_file && !(x->out_path = strdup(req->out_file))) {
    xfer_free(x);
    return ROCK_E_NO_MEMORY;
  }
  /* a body to or from a file, or relayed, moves in big reads and writes,
   * not curl's 16 KiB (and 64 KiB up): fewer syscalls and callbacks per
   * byte (a source: as much as the server reads ahead, 1 MiB) */
  x->sink = req->sink;
  if (req->out_file || req->sink) curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
  if (req->body_file) curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 2L * 1024 * 1024);
  if (req->source) curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
  struct stat st;
  if (req->body_file) {
    if (!(x->in = fopen(req->body_file, "rb")) || fstat(fileno(x->in), &st)) {
      xfer_free(x);
      return ROCK_E_IO;
    }
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)st.st_size);
  } else if (req->source) {
    x->source = req->source;
    uint64_t size = req->source->size;
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_source_read);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    /* -1: not known: curl sends it chunked */
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     size == UINT64_MAX ? (curl_off_t)-1 : (curl_off_t)size);
  } else if (req->body) {
    x->body = malloc(req->body_len + 1);
    if (!x->body) {
      xfer_free(x);
      return ROCK_E_NO_MEMORY;
    }
    memcpy(x->body, req->body, req->body_len);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
  }
  int has_body = req->body || req->body_file || req->source;
  const char *method = req->method ? req->method : has_body ? "POST" : "GET";
  if (!strcmp(method, "HEAD")) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  else if (strcmp(method, has_body ? "POST" : "GET"))
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
  /* no "Expect: 100-continue" round trip for large bodies */
  x->headers = curl_slist_append(NULL, "Expect:");
  for (const char *const *h = req->headers; h && *h; h++)
    x->headers = curl_slist_append(x->headers, *h);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
  if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
    xfer_free(x);
    return ROCK_E_INTERNAL;
  }
  if (out) *out = x;
  return ROCK_E_OK;
}

int rock_http_client_local_pending(const rock_http_client_t *c) {
  return rock_plain_local_pending(c->plain);
}

void rock_http_xfer_cancel(rock_http_xfer_t *x) {
  rock_http_client_t *c = x->client;
  if (x->plain) {
    rock_plain_cancel(x->plain);
    xfer_free(x);
    return;
  }
  /* still in curl, or already queued for delivery? */
  rock_http_xfer_t **pp = &c->done_head, *prev = NULL;
  while (*pp && *pp != x) prev = *pp, pp = &(*pp)->next_done;
  if (*pp) {
    *pp = x->next_done;
    if (c->done_tail == x) c->done_tail = prev;
  } else {
    curl_multi_remove_handle(c->multi, x->easy);
  }
  xfer_free(x);
}

void rock_http_xfer_resume(rock_http_xfer_t *x) {
  if (!x->paused || !x->easy || x->queued) return;
  x->paused = 0; /* both directions go on: a side still stuck pauses again */
  curl_easy_pause(x->easy, CURLPAUSE_CONT); /* may write (and pause) at once */
}

void rock_http_xfer_abort(rock_http_xfer_t *x, rock_err err, const char *message) {
  if (!x->abort_err) {
    x->abort_err = err ? err : ROCK_E_CANCELLED;
    x->abort_msg = message;
  }
  if (x->queued || !x->easy) return; /* out of curl already: err still holds */
  x->client->aborts_pending = 1;
  uv_idle_start(&x->client->idle, deliver);
}

void rock_http_client_close(rock_http_client_t *c) {
  if (c->closing) return;
  c->closing = 1;
  c->done_head = c->done_tail = NULL;
  while (c->xfers) {
    rock_http_xfer_t *x = c->xfers;
    if (x->plain) rock_plain_cancel(x->plain);
    else curl_multi_remove_handle(c->multi, x->easy); /* no-op if already out */
    xfer_free(x);
  }
  rock_plain_close(c->plain);
  c->handles += 2; /* timer and idle; sockets closed above are counted already */
  curl_multi_cleanup(c->multi); /* may close sockets: socket_cb above */
  while (c->nspare) curl_easy_cleanup(c->spare[--c->nspare]);
  while (c->socks) sock_close(c, c->socks); /* those it did not */
  uv_close((uv_handle_t *)&c->timer, client_handle_closed);
  uv_close((uv_handle_t *)&c->idle, client_handle_closed);
}
