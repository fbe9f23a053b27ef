/* test_server.c: the HTTP server of c/http/server.c on a real uv loop with
 * real unix-socket clients. The server and its handler run on the loop in
 * the main thread; each case's client runs in a thread with blocking
 * sockets and reaches into the loop only through on_loop() (run a function
 * there and wait). Every case closes everything and checks uv_loop_close. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

#include "http/server.h"

#include "check.h"

/* ---- the server side (loop thread) ---- */

static uv_loop_t loop;
static rock_http_server_t *srv;
static char sock_path[108];
static char file_path[256]; /* where /file bodies go */
static int aborts, drops;   /* on_abort / on_drop calls */
static rock_http_req_t *slow[8]; /* /slow requests held unanswered */
static int nslow;
static uv_timer_t answer_timer;
static int use_tcp, tcp_port; /* the case's server listens on 127.0.0.1 */
static int drained;              /* drain's callback ran */

static void count_abort(rock_http_req_t *req) { (void)req, aborts++; }

/* /stream?n=N[&cut=K][&unknown]: a streamed answer of N bytes of the
 * chunk pattern, written on the loop while the client's queue is not
 * full (a relay's way: rock_http_stream_full, then DRAINED), ended short
 * (not ok) after K bytes with cut, without a Content-Length with unknown. */
static char chunk[1 << 20]; /* 1 MiB of a byte pattern */
static uv_timer_t pump_timer;
static struct {
  rock_http_stream_t *st;
  uint64_t size, sent, cut;
  int drained, gone, ended;
  size_t most_held; /* the most bytes the server held for the client */
} sm;

static void pump(uv_timer_t *t) {
  (void)t;
  while (sm.st && !sm.gone) {
    if ((sm.cut && sm.sent >= sm.cut) || sm.sent == sm.size) {
      rock_http_stream_end(sm.st, sm.sent == sm.size);
      sm.st = NULL;
      sm.ended++;
      return;
    }
    if (rock_http_stream_full(sm.st)) return; /* DRAINED starts it again */
    uint64_t left = sm.size - sm.sent;
    size_t n = left < (64u << 10) ? (size_t)left : (64u << 10);
    if (rock_http_stream_write(sm.st, chunk + sm.sent % sizeof chunk, n)) break;
    sm.sent += n;
    rock_http_server_stats_t st;
    rock_http_server_stats(srv, &st);
    if (st.writing > sm.most_held) sm.most_held = st.writing;
  }
  if (sm.st) { /* gone: its owner still ends it */
    rock_http_stream_end(sm.st, 0);
    sm.st = NULL;
  }
}

static void stream_event(void *arg, int event) {
  (void)arg;
  if (event == ROCK_HTTP_STREAM_DRAINED) sm.drained++;
  else sm.gone++;
  uv_timer_start(&pump_timer, pump, 0, 0);
}

static void stream_start(rock_http_req_t *req) {
  const char *q = req->query;
  memset(&sm, 0, sizeof sm);
  sm.size = strtoull(q + 2, NULL, 10); /* n= first */
  const char *cut = strstr(q, "cut=");
  sm.cut = cut ? strtoull(cut + 4, NULL, 10) : 0;
  sm.st = rock_http_respond_stream(req, 200, "Content-Type: application/octet-stream\r\n",
                                   strstr(q, "unknown") ? UINT64_MAX : sm.size, stream_event, NULL);
  pump(NULL);
}

static void get_stream(void *arg) {
  uint64_t *v = arg;
  v[0] = sm.sent, v[1] = (uint64_t)sm.drained, v[2] = (uint64_t)sm.gone, v[3] = (uint64_t)sm.ended;
  v[4] = sm.st != NULL;
  v[5] = sm.most_held;
}

/* /pull[?max=N]: a body its handler pulls as it comes (body_stream), as
 * a relay does: read on the loop in pieces of at most 64 KiB while not
 * stalled, its length and a checksum kept; answered "bytes sum" once
 * whole, or once answer_at bytes came (the server drops the rest), 413
 * or 400 for a chunked body too large or malformed. */
static uv_timer_t pull_timer;
static struct {
  rock_http_req_t *req;
  uint64_t got, sum, answer_at;
  int stalled, ready, gone, done;
  long result; /* the last read's: 0 whole, a ROCK_HTTP_BODY_ code, 1 answered early */
  char buf[64 << 10];
} pl;

static void pull_pump(uv_timer_t *t) {
  (void)t;
  while (pl.req && !pl.stalled) {
    long n = rock_http_body_read(pl.req, pl.buf, sizeof pl.buf);
    if (n == ROCK_HTTP_BODY_WAIT) return; /* on_body(READY) comes */
    if (n > 0) {
      for (long i = 0; i < n; i++) pl.sum = pl.sum * 31 + (unsigned char)pl.buf[i];
      pl.got += (uint64_t)n;
      if (!pl.answer_at || pl.got < pl.answer_at) continue;
    }
    char msg[64];
    int len = snprintf(msg, sizeof msg, "%llu %llu", (unsigned long long)pl.got,
                       (unsigned long long)pl.sum);
    int status = n >= 0 ? 200 : n == ROCK_HTTP_BODY_TOO_LARGE ? 413 : n == ROCK_HTTP_BODY_BAD ? 400 : 499;
    rock_http_req_t *r = pl.req;
    pl.req = NULL;
    pl.result = n > 0 ? 1 : n;
    pl.done++;
    rock_http_respond(r, status, "text/plain", msg, len); /* an orphan's: freed */
    return;
  }
}

static void pull_event(rock_http_req_t *req, int event) {
  (void)req;
  if (event == ROCK_HTTP_BODY_READY) pl.ready++;
  else pl.gone++;
  uv_timer_start(&pull_timer, pull_pump, 0, 0); /* read there, not inside the server */
}

static void pull_start(rock_http_req_t *req) {
  pl.req = req;
  pl.got = pl.sum = 0;
  req->on_body = pull_event;
  pull_pump(NULL);
}

static void drop_file(rock_http_req_t *req) {
  drops++;
  close(req->body_fd);
}

static void on_headers(rock_http_req_t *req, void *data) {
  (void)data;
  if (!strcmp(req->path, "/file")) {
    req->body_fd = open(file_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    req->max_body = UINT64_MAX;
    req->on_drop = drop_file;
  } else if (!strcmp(req->path, "/early")) {
    rock_http_respond(req, 403, "text/plain", "no", 2);
  } else if (!strcmp(req->path, "/pull")) {
    req->body_stream = 1;
    req->max_body = !strncmp(req->query, "max=", 4) ? strtoull(req->query + 4, NULL, 10) : UINT64_MAX;
  }
}

static void handler(rock_http_req_t *req, void *data) {
  (void)data;
  char msg[128];
  if (!strcmp(req->path, "/slow")) {
    req->on_abort = count_abort;
    slow[nslow++] = req;
    return;
  }
  if (!strcmp(req->path, "/file")) {
    close(req->body_fd);
    int n = snprintf(msg, sizeof msg, "%llu %d",
                     (unsigned long long)req->body_bytes, req->body_err);
    rock_http_respond(req, 200, "text/plain", msg, n);
    return;
  }
  if (!strcmp(req->path, "/echo")) { /* length and a checksum of the body */
    uint64_t sum = 0;
    for (size_t i = 0; i < req->body_len; i++) sum = sum * 31 + (unsigned char)req->body[i];
    int n = snprintf(msg, sizeof msg, "%zu %llu %d", req->body_len,
                     (unsigned long long)sum, req->body[req->body_len] == 0);
    rock_http_respond(req, 200, "text/plain", msg, n);
    return;
  }
  if (!strcmp(req->path, "/headers")) { /* the kept headers, the peer */
    char out[4096];
    size_t n = 0;
    for (size_t i = 0; i < req->headers_len && n < sizeof out - 64; i++)
      out[n++] = req->headers[i] ? req->headers[i] : '|';
    n += snprintf(out + n, sizeof out - n, "peer=%s", req->peer);
    rock_http_respond_headers(req, 201, "X-One: 1\r\nContent-Type: text/x-test\r\n", out, n);
    return;
  }
  if (!strcmp(req->path, "/answer-file")) { /* file_path, streamed */
    int fd = open(file_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    fstat(fd, &st);
    rock_http_respond_file(req, 200, "", fd, (uint64_t)st.st_size + (req->query[0] ? 10 : 0));
    return;
  }
  if (!strcmp(req->path, "/stream")) {
    stream_start(req);
    return;
  }
  if (!strcmp(req->path, "/pull") && !strcmp(req->query, "now")) { /* before any read */
    rock_http_respond(req, 404, "text/plain", "no", 2);
    return;
  }
  if (!strcmp(req->path, "/pull")) {
    pull_start(req);
    return;
  }
  if (!strcmp(req->path, "/hello")) {
    char *b = strdup("hello");
    rock_http_respond_take(req, 200, "text/plain", b, 5);
    return;
  }
  rock_http_respond(req, 404, "text/plain", "", 0);
}

static void answer_slow(void) {
  for (int i = 0; i < nslow; i++) rock_http_respond(slow[i], 200, "text/plain", "done", 4);
  nslow = 0;
}

/* on_loop: run fn(arg) on the loop thread and wait for it. */
static uv_async_t async;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static void (*call_fn)(void *);
static void *call_arg;
static int call_done;

static void on_async(uv_async_t *a) {
  (void)a;
  pthread_mutex_lock(&mu);
  if (call_fn && !call_done) {
    call_fn(call_arg);
    call_done = 1;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
}

static void on_loop(void (*fn)(void *), void *arg) {
  pthread_mutex_lock(&mu);
  call_fn = fn;
  call_arg = arg;
  call_done = 0;
  uv_async_send(&async);
  while (!call_done) pthread_cond_wait(&cv, &mu);
  call_fn = NULL;
  pthread_mutex_unlock(&mu);
}

static void get_stats(void *arg) { rock_http_server_stats(srv, arg); }
static void do_answer_slow(void *arg) { (void)arg, answer_slow(); }
static void get_counts(void *arg) {
  int *v = arg;
  v[0] = aborts, v[1] = drops, v[2] = nslow, v[3] = rock_http_server_inflight(srv);
}
static void finish(void *arg) {
  (void)arg;
  answer_slow(); /* orphans are just freed */
  if (uv_is_active((uv_handle_t *)&answer_timer)) uv_timer_stop(&answer_timer);
  uv_close((uv_handle_t *)&answer_timer, NULL);
  if (sm.st) rock_http_stream_end(sm.st, 0);
  sm.st = NULL;
  uv_close((uv_handle_t *)&pump_timer, NULL);
  if (pl.req) rock_http_respond(pl.req, 500, "text/plain", "", 0);
  pl.req = NULL;
  uv_close((uv_handle_t *)&pull_timer, NULL);
  rock_http_server_close(srv);
  uv_close((uv_handle_t *)&async, NULL);
}

static rock_http_server_stats_t stats(void) {
  rock_http_server_stats_t st;
  on_loop(get_stats, &st);
  return st;
}

/* Wait (polling the loop) until counts[i] == want; 0 if it never does. */
static int wait_count(int i, int want) {
  for (int k = 0; k < 10000; k++) {
    int v[4];
    on_loop(get_counts, v);
    if (v[i] == want) return 1;
    usleep(1000);
  }
  return 0;
}

/* ---- the client side (client thread) ---- */

typedef struct {
  int fd;
  char buf[1 << 16];
  size_t len;
} client_t;

static int sock_connect(int nonblock) {
  if (use_tcp) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(tcp_port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
      close(fd);
      return -1;
    }
    return fd;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
    close(fd);
    return -1;
  }
  if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

static void cl_open(client_t *c) {
  c->fd = sock_connect(0);
  c->len = 0;
}

static int send_all(int fd, const void *p, size_t n) {
  const char *s = p;
  while (n) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    s += w, n -= w;
  }
  return 0;
}

static int cl_send(client_t *c, const char *fmt, ...) {
  char req[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(req, sizeof req, fmt, ap);
  va_end(ap);
  return send_all(c->fd, req, n);
}

static char c_last_head[1024]; /* the head of the last response read */

/* Read one response: status, body into out (NUL-terminated). head: a
 * HEAD answer (no body follows its Content-Length). Returns the status,
 * 0 on EOF before a whole response, -1 on error. */
static int cl_response(client_t *c, char *out, size_t cap, int head) {
  for (;;) {
    char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    if (end) {
      size_t hl = end + 4 - c->buf;
      int status = atoi(c->buf + 9);
      char *cl = memmem(c->buf, hl, "Content-Length: ", 16);
      size_t bl = head || !cl ? 0 : strtoul(cl + 16, NULL, 10);
      snprintf(c_last_head, sizeof c_last_head, "%.*s", (int)hl, c->buf);
      if (status == 100) { /* interim: drop it */
        memmove(c->buf, c->buf + hl, c->len - hl);
        c->len -= hl;
        continue;
      }
      if (c->len >= hl + bl) {
        if (out) {
          size_t k = bl < cap - 1 ? bl : cap - 1;
          memcpy(out, c->buf + hl, k);
          out[k] = 0;
        }
        memmove(c->buf, c->buf + hl + bl, c->len - hl - bl);
        c->len -= hl + bl;
        return status;
      }
    }
    if (c->len == sizeof c->buf) return -1;
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    c->len += n;
  }
}

/* Is the connection closed by the server (EOF, nothing else to read)? */
static int cl_eof(client_t *c) {
  char b[64];
  ssize_t n;
  while ((n = read(c->fd, b, sizeof b)) < 0 && errno == EINTR) {}
  return n == 0 && c->len == 0;
}

static void cl_close(client_t *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

/* ---- running a case ---- */

static void *client_main(void *arg) {
  void (*fn)(void) = (void (*)(void))arg;
  fn();
  on_loop(finish, NULL);
  return NULL;
}

static int pre_fds[600];
static int npre;

/* Start a server with opts, run body in a client thread (pre runs first
 * on this thread, before the loop turns), close all, check the loop. */
static void run_case(const char *name, rock_http_server_opts_t opts,
                     void (*pre)(void), void (*body)(void)) {
  fprintf(stderr, "-- %s\n", name);
  aborts = drops = nslow = 0;
  CHECK(uv_loop_init(&loop) == 0);
  if (use_tcp) {
    CHECK(rock_http_server_start_tcp(&srv, &loop, "127.0.0.1", 0, &opts, handler, NULL) == 0);
    tcp_port = rock_http_server_port(srv);
    CHECK(tcp_port > 0);
  } else {
    CHECK(rock_http_server_start(&srv, &loop, sock_path, &opts, handler, NULL) == 0);
  }
  uv_async_init(&loop, &async, on_async);
  uv_timer_init(&loop, &answer_timer);
  uv_timer_init(&loop, &pump_timer);
  uv_timer_init(&loop, &pull_timer);
  memset(&pl, 0, sizeof pl);
  if (pre) pre();
  pthread_t th;
  pthread_create(&th, NULL, client_main, (void *)body);
  uv_run(&loop, UV_RUN_DEFAULT);
  pthread_join(th, NULL);
  CHECK(uv_loop_close(&loop) == 0);
  unlink(sock_path);
}

static rock_http_server_opts_t defaults(void) {
  rock_http_server_opts_t o = ROCK_HTTP_SERVER_OPTS_DEFAULT;
  o.on_headers = on_headers;
  return o;
}

/* ---- cases ---- */

static void fill_chunk(void) {
  for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = (char)(i * 7 + (i >> 9));
}

static void case_basics(void) {
  client_t c;
  char out[256];
  cl_open(&c);
  cl_send(&c, "POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200);
  CHECK(!strncmp(out, "5 ", 2) && out[strlen(out) - 1] == '1');
  /* pipelined: answered in order */
  cl_send(&c, "GET /hello HTTP/1.1\r\n\r\nPOST /echo HTTP/1.1\r\n"
              "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strncmp(out, "3 ", 2));
  /* malformed: 400, then closed */
  cl_send(&c, "BLAH\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 400);
  CHECK(cl_eof(&c));
  cl_close(&c);
}

/* issue 7 item 18: HEAD answers carry no body */
static void case_head(void) {
  client_t c;
  char out[64];
  cl_open(&c);
  cl_send(&c, "HEAD /hello HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 1) == 200);
  CHECK(!memcmp(c.buf, "HTTP/1.1 200", 12) || c.len == 0); /* no stray body */
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  cl_close(&c);
}

/* issue 7 item 4: a busy connection stops reading (50 MB pipelined behind
 * a slow request), and memory does not grow. */
static volatile int writer_done;
static int writer_fd;
static void *writer(void *arg) {
  (void)arg;
  char head[128];
  int n = snprintf(head, sizeof head, "POST /file HTTP/1.1\r\nContent-Length: %d\r\n\r\n", 50 << 20);
  send_all(writer_fd, head, n);
  for (int i = 0; i < 50; i++)
    if (send_all(writer_fd, chunk, sizeof chunk)) break;
  writer_done = 1;
  return NULL;
}

static void case_backpressure(void) {
  client_t c;
  char out[64];
  cl_open(&c);
  cl_send(&c, "POST /slow HTTP/1.1\r\n\r\n");
  CHECK(wait_count(2, 1));
  writer_done = 0;
  writer_fd = c.fd;
  pthread_t w;
  pthread_create(&w, NULL, writer, NULL);
  rock_http_server_stats_t st;
  size_t peak = 0;
  do { /* until the server stops reading, or the writer got it all in */
    usleep(1000);
    st = stats();
    if (st.buffered > peak) peak = st.buffered;
  } while (!st.paused && !writer_done);
  CHECK(st.paused == 1);
  CHECK(!writer_done);
  CHECK(peak <= ROCK_HTTP_READ_AHEAD + 4096);
  fprintf(stderr, "   paused with %zu bytes buffered\n", st.buffered);
  on_loop(do_answer_slow, NULL);
  while (!writer_done) { /* the body streams on through the file sink */
    st = stats();
    if (st.buffered > peak) peak = st.buffered;
    usleep(1000);
  }
  pthread_join(w, NULL);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "done"));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200);
  CHECK(!strcmp(out, "52428800 0"));
  CHECK(peak <= 2 * ROCK_HTTP_READ_AHEAD + 4096);
  fprintf(stderr, "   peak %zu bytes buffered for 50 MiB\n", peak);
  cl_close(&c);
}

/* on_abort fires when the client of an unanswered request goes away,
 * with nothing or a little pipelined behind it */
static void case_abort(void) {
  client_t c;
  cl_open(&c);
  cl_send(&c, "POST /slow HTTP/1.1\r\n\r\n");
  CHECK(wait_count(2, 1));
  cl_close(&c);
  CHECK(wait_count(0, 1));
  cl_open(&c);
  cl_send(&c, "POST /slow HTTP/1.1\r\n\r\nPOST /echo HTTP/1.1\r\nContent-Length: 20000\r\n\r\n");
  send_all(c.fd, chunk, 20000);
  CHECK(wait_count(2, 2));
  cl_close(&c);
  CHECK(wait_count(0, 2));
  CHECK(wait_count(3, 0)); /* nothing in flight */
  /* a streamed body cut short: its sink is dropped */
  cl_open(&c);
  cl_send(&c, "POST /file HTTP/1.1\r\nContent-Length: 10000000\r\n\r\n");
  send_all(c.fd, chunk, 100000);
  cl_close(&c);
  CHECK(wait_count(1, 1));
}

/* issue 7 item 14: oversized bodies are refused early with 413 */
static void case_too_large(void) {
  client_t c;
  char out[256];
  cl_open(&c);
  cl_send(&c, "POST /echo HTTP/1.1\r\nContent-Length: 314572800\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 413); /* no body sent */
  CHECK(strstr(out, "larger than 1048576") != NULL);
  CHECK(cl_eof(&c));
  cl_close(&c);
  cl_open(&c); /* chunked past the limit */
  cl_send(&c, "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  char hdr[32];
  int hl = snprintf(hdr, sizeof hdr, "%x\r\n", 65536);
  for (int i = 0; i < 64; i++) /* 4 MiB: stops when the server refuses */
    if (send_all(c.fd, hdr, hl) || send_all(c.fd, chunk, 65536) || send_all(c.fd, "\r\n", 2)) break;
  CHECK(cl_response(&c, out, sizeof out, 0) == 413);
  cl_close(&c);
  cl_open(&c); /* just under the limit: whole, NUL-terminated */
  cl_send(&c, "POST /echo HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n");
  send_all(c.fd, chunk, sizeof chunk);
  uint64_t sum = 0;
  for (size_t i = 0; i < sizeof chunk; i++) sum = sum * 31 + (unsigned char)chunk[i];
  char want[64];
  snprintf(want, sizeof want, "1048576 %llu 1", (unsigned long long)sum);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, want));
  /* answered from on_headers: the body is not read, the connection closes */
  cl_send(&c, "POST /early HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 403 && !strcmp(out, "no"));
  CHECK(cl_eof(&c));
  cl_close(&c);
  rock_http_server_stats_t st = stats();
  CHECK(st.buffered == 0);
}

static long rss_kib(void) {
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
    fclose(f);
  }
  return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* a 200 MiB body streams to a file: memory stays flat, bytes exact */
static void case_file_sink(void) {
  client_t c;
  char out[64];
  cl_open(&c);
  long before = rss_kib();
  cl_send(&c, "POST /file HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", 200 << 20);
  for (int i = 0; i < 200; i++) send_all(c.fd, chunk, sizeof chunk);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "209715200 0"));
  long grown = rss_kib() - before;
  fprintf(stderr, "   rss grew %ld KiB for a 200 MiB body\n", grown);
#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow and quarantine are not ours */
  CHECK(grown < 8 * 1024);
#endif
  int fd = open(file_path, O_RDONLY);
  static char back[1 << 20];
  int same = 1;
  for (int i = 0; i < 200 && same; i++)
    same = read(fd, back, sizeof back) == (ssize_t)sizeof back && !memcmp(back, chunk, sizeof back);
  CHECK(same && read(fd, back, 1) == 0);
  close(fd);
  cl_close(&c);
}

/* ---- pulled bodies (body_stream) ---- */

static void get_pull(void *arg) {
  uint64_t *v = arg;
  v[0] = pl.got, v[1] = (uint64_t)pl.ready, v[2] = (uint64_t)pl.gone, v[3] = (uint64_t)pl.done;
  v[4] = pl.req != NULL, v[5] = (uint64_t)pl.result, v[6] = (uint64_t)rock_http_server_inflight(srv);
}
static void set_stalled(void *arg) {
  pl.stalled = (int)(long)arg;
  if (!pl.stalled) uv_timer_start(&pull_timer, pull_pump, 0, 0);
}
static void set_answer_at(void *arg) { pl.answer_at = (uint64_t)(uintptr_t)arg; }

/* Wait until the pulled request's field i is want; 0 if it never is. */
static int wait_pull(int i, uint64_t want) {
  for (int k = 0; k < 10000; k++) {
    uint64_t v[7];
    on_loop(get_pull, v);
    if (v[i] == want) return 1;
    usleep(1000);
  }
  return 0;
}

/* "bytes sum" of n bytes of the chunk pattern, sent from offset 0 */
static void pattern_answer(char *want, size_t cap, uint64_t n) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum = sum * 31 + (unsigned char)chunk[i % sizeof chunk];
  snprintf(want, cap, "%llu %llu", (unsigned long long)n, (unsigned long long)sum);
}

static volatile uint64_t pull_sent;
static void do_drain(void *arg);
static void get_drained(void *arg);
static void *pull_writer(void *arg) { /* 50 MiB to /pull on writer_fd */
  (void)arg;
  char head[128];
  int n = snprintf(head, sizeof head, "PUT /pull HTTP/1.1\r\nContent-Length: %d\r\n\r\n", 50 << 20);
  send_all(writer_fd, head, n);
  for (int i = 0; i < 50 * 16; i++) {
    if (send_all(writer_fd, chunk + (i % 16) * 65536, 65536)) break;
    pull_sent += 65536;
  }
  writer_done = 1;
  return NULL;
}

static void case_pull(void) {
  client_t c;
  char out[256], want[64];
  cl_open(&c); /* 8 MiB with a Content-Length (and Expect): whole, exact; keep-alive after */
  cl_send(&c, "PUT /pull HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", 8 << 20);
  for (int i = 0; i < 8; i++) send_all(c.fd, chunk, sizeof chunk);
  pattern_answer(want, sizeof want, 8 << 20);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, want));
  uint64_t v[7];
  on_loop(get_pull, v);
  CHECK(v[1] > 0); /* it waited for bytes, and was told when they came */
  CHECK(v[2] == 0); /* a body read whole: no GONE */
  /* chunked, pipelined behind and ahead of others: exact, in order */
  cl_send(&c, "PUT /pull HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  size_t sizes[] = {1, 255, 65536, 3, 300000}, off = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char h[32];
    int hl = snprintf(h, sizeof h, "%zx\r\n", sizes[i]);
    send_all(c.fd, h, hl);
    send_all(c.fd, chunk + off, sizes[i]);
    send_all(c.fd, "\r\n", 2);
    off += sizes[i];
  }
  cl_send(&c, "0\r\n\r\nGET /hello HTTP/1.1\r\n\r\nPUT /pull HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  pattern_answer(want, sizeof want, off);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, want));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "0 0"));
  cl_close(&c);

  /* a reader that stops stops the client: the server reads no further
   * than its read-ahead; every byte comes once it reads on */
  on_loop(set_stalled, (void *)1L);
  cl_open(&c);
  writer_done = 0;
  pull_sent = 0;
  writer_fd = c.fd;
  pthread_t w;
  pthread_create(&w, NULL, pull_writer, NULL);
  rock_http_server_stats_t st;
  size_t peak = 0;
  do {
    usleep(1000);
    st = stats();
    if (st.buffered > peak) peak = st.buffered;
  } while (!st.paused && !writer_done);
  usleep(200000);
  uint64_t sent = pull_sent;
  usleep(200000);
  CHECK(st.paused == 1 && !writer_done);
  CHECK(pull_sent == sent); /* the client is held */
  CHECK(peak <= (1u << 20) + 4096);
  fprintf(stderr, "   stalled: the client sent %llu bytes, %zu buffered\n",
          (unsigned long long)sent, peak);
  on_loop(set_stalled, (void *)0L);
  while (!writer_done) {
    st = stats();
    if (st.buffered > peak) peak = st.buffered;
    usleep(1000);
  }
  pthread_join(w, NULL);
  pattern_answer(want, sizeof want, 50 << 20);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, want));
  CHECK(peak <= (1u << 20) + 4096 + ROCK_HTTP_READ_AHEAD);

  /* answered mid-body: the answer comes while the client still sends; the
   * rest (less than the drop's bound) is read and dropped, the reader told
   * GONE, and the connection goes on */
  on_loop(get_pull, v);
  uint64_t gone = v[2];
  on_loop(set_answer_at, (void *)(uintptr_t)(1u << 20));
  cl_send(&c, "PUT /pull HTTP/1.1\r\nContent-Length: %d\r\n\r\n", 3 << 20);
  for (int i = 0; i < 3; i++) CHECK(send_all(c.fd, chunk, sizeof chunk) == 0);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200);
  on_loop(get_pull, v);
  CHECK(v[5] == 1 && v[0] >= (1u << 20) && v[0] < (3u << 20)); /* answered early */
  CHECK(v[2] == gone + 1); /* its reader heard that no more comes */
  on_loop(set_answer_at, (void *)0);
  cl_send(&c, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  cl_close(&c);

  /* the client gone mid-body: its reader hears it, reads GONE */
  cl_open(&c);
  cl_send(&c, "PUT /pull HTTP/1.1\r\nContent-Length: %d\r\n\r\n", 64 << 20);
  for (int i = 0; i < 4; i++) send_all(c.fd, chunk, sizeof chunk);
  CHECK(wait_pull(0, 4u << 20));
  cl_close(&c);
  CHECK(wait_pull(2, gone + 2)); /* the early answer's GONE, then this one */
  CHECK(wait_pull(5, (uint64_t)(long)ROCK_HTTP_BODY_GONE));
  CHECK(wait_pull(6, 0)); /* nothing in flight */

  /* max_body: a Content-Length past it is refused before the handler; a
   * chunked body growing past it is TOO_LARGE, a malformed one BAD: the
   * connection closes after those answers */
  on_loop(get_pull, v);
  uint64_t done = v[3];
  cl_open(&c);
  cl_send(&c, "PUT /pull?max=1000 HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 413);
  CHECK(cl_eof(&c));
  cl_close(&c);
  on_loop(get_pull, v);
  CHECK(v[3] == done); /* never handed over */
  cl_open(&c);
  cl_send(&c, "PUT /pull?max=1000 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n");
  send_all(c.fd, chunk, 1000);
  cl_send(&c, "\r\n1\r\nx\r\n0\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 413 && !strncmp(out, "1000 ", 5));
  CHECK(cl_eof(&c));
  cl_close(&c);
  cl_open(&c);
  cl_send(&c, "PUT /pull HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\nzz\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 400);
  CHECK(cl_eof(&c));
  cl_close(&c);
  CHECK(stats().buffered == 0);
}

/* Closed by the server with nothing more sent: EOF (or a reset) before
 * any byte; 0 on bytes or when nothing comes in 5 s. */
static int cl_closed(client_t *c) {
  struct timeval tv = {.tv_sec = 5};
  setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (c->len) return 0;
  char b[256];
  ssize_t n;
  while ((n = read(c->fd, b, sizeof b)) < 0 && errno == EINTR) {}
  if (n > 0) fprintf(stderr, "   got: %.*s\n", (int)n, b);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

static client_t early_cl;
static void *early_writer(void *arg) { /* a chunked body to early_cl until the server stops it */
  (void)arg;
  for (int i = 0; i < 1024; i++) {
    if (send_all(early_cl.fd, "10000\r\n", 7) || send_all(early_cl.fd, chunk, 65536) ||
        send_all(early_cl.fd, "\r\n", 2))
      break;
    pull_sent += 65536;
  }
  writer_done = 1;
  return NULL;
}

/* A pulled body answered before its handler read any of it */
static void case_pull_early(void) {
  client_t c;
  char out[256], want[64];
  /* Expect: 100-continue: the 100 goes with the handler's first read */
  cl_open(&c);
  struct timeval tv = {.tv_sec = 5};
  setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  cl_send(&c, "PUT /pull HTTP/1.1\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n");
  char raw[64] = "";
  static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
  CHECK(read(c.fd, raw, sizeof cont - 1) == (ssize_t)sizeof cont - 1 && !memcmp(raw, cont, sizeof cont - 1));
  send_all(c.fd, chunk, 1000);
  pattern_answer(want, sizeof want, 1000);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, want));
  /* answered first: no 100, Connection: close, the body never read */
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nContent-Length: 3000000\r\nExpect: 100-continue\r\n\r\n");
  ssize_t n = read(c.fd, raw, 12);
  CHECK(n == 12 && !memcmp(raw, "HTTP/1.1 404", 12));
  memcpy(c.buf, raw, n > 0 ? (size_t)n : 0);
  c.len = n > 0 ? (size_t)n : 0;
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  CHECK(memmem(c_last_head, strlen(c_last_head), "Connection: close", 17) != NULL);
  CHECK(cl_closed(&c));
  cl_close(&c);

  /* a small rest is dropped: keep-alive goes on (chunked and not) */
  cl_open(&c);
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  cl_send(&c, "3\r\nabc\r\n0\r\n\r\nGET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nContent-Length: 100000\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  CHECK(!memmem(c_last_head, strlen(c_last_head), "Connection: close", 17));
  send_all(c.fd, chunk, 100000);
  cl_send(&c, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  /* a broken chunk while dropping: closed, no answer of its own */
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  cl_send(&c, "zz\r\nxxxxxxxx");
  CHECK(cl_closed(&c));
  cl_close(&c);

  /* a Content-Length past the drop's bound: Connection: close at once */
  cl_open(&c);
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nContent-Length: %d\r\n\r\n", 64 << 20);
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  CHECK(memmem(c_last_head, strlen(c_last_head), "Connection: close", 17) != NULL);
  CHECK(cl_closed(&c)); /* its FIN */
  /* it still reads a while (lingering): a client still sending is not
   * reset over its answer */
  CHECK(send_all(c.fd, chunk, 65536) == 0);
  usleep(50000);
  CHECK(send_all(c.fd, chunk, 65536) == 0);
  cl_close(&c);

  /* a chunked body that goes on past the bound: the answer reaches the
   * client (which reads it as it sends), then the connection closes */
  cl_open(&early_cl);
  writer_done = 0;
  pull_sent = 0;
  cl_send(&early_cl, "PUT /pull?now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  pthread_t w;
  pthread_create(&w, NULL, early_writer, NULL);
  CHECK(cl_response(&early_cl, out, sizeof out, 0) == 404);
  CHECK(cl_closed(&early_cl));
  pthread_join(w, NULL);
  fprintf(stderr, "   dropped then closed: the client sent %llu bytes\n",
          (unsigned long long)pull_sent);
  CHECK(pull_sent < (32u << 20));
  cl_close(&early_cl);

  /* a graceful stop while a body is dropped: closed once its drop ends */
  drained = 0;
  cl_open(&c);
  cl_send(&c, "PUT /pull?now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 404);
  CHECK(!memmem(c_last_head, strlen(c_last_head), "Connection: close", 17));
  on_loop(do_drain, NULL);
  cl_send(&c, "0\r\n\r\n");
  CHECK(cl_closed(&c));
  int d = 0;
  for (int k = 0; k < 1000 && !d; k++) {
    on_loop(get_drained, &d);
    if (!d) usleep(1000);
  }
  CHECK(d == 1);
  cl_close(&c);
}

/* a client that stops sending mid-body is closed at the idle timeout, its
 * reader waiting on it told */
static void case_pull_idle(void) {
  client_t c;
  cl_open(&c);
  cl_send(&c, "PUT /pull HTTP/1.1\r\nContent-Length: 100000\r\n\r\n");
  send_all(c.fd, chunk, 5000);
  CHECK(cl_eof(&c)); /* closed after 50 ms of nothing */
  cl_close(&c);
  CHECK(wait_pull(2, 1));
  CHECK(wait_pull(5, (uint64_t)(long)ROCK_HTTP_BODY_GONE));
  CHECK(wait_pull(6, 0));
}

/* issue 7 item 18: idle connections close; one with a request in flight
 * does not */
static void answer_later(uv_timer_t *t) { (void)t, answer_slow(); }
static void start_answer_timer(void *arg) {
  (void)arg;
  uv_timer_start(&answer_timer, answer_later, 200, 0); /* 4x the idle timeout */
}

static void case_idle(void) {
  client_t c;
  char out[64];
  cl_open(&c);
  CHECK(cl_eof(&c)); /* nothing sent: closed after 50 ms */
  cl_close(&c);
  cl_open(&c);
  cl_send(&c, "POST /slow HTTP/1.1\r\n\r\n");
  CHECK(wait_count(2, 1));
  on_loop(start_answer_timer, NULL);
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "done"));
  int v[4];
  on_loop(get_counts, v);
  CHECK(v[0] == 0); /* not aborted */
  CHECK(cl_eof(&c)); /* idle again afterwards */
  cl_close(&c);
}

/* issue 7 item 18: connections past the cap are closed at once */
static void case_conn_cap(void) {
  client_t a, b, x, y;
  char out[64];
  cl_open(&a);
  cl_open(&b);
  cl_send(&a, "GET /hello HTTP/1.1\r\n\r\n");
  cl_send(&b, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&a, out, sizeof out, 0) == 200);
  CHECK(cl_response(&b, out, sizeof out, 0) == 200);
  /* full of idle connections: a new one takes the oldest's place */
  cl_open(&x);
  cl_send(&x, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&x, out, sizeof out, 0) == 200);
  CHECK(cl_eof(&a)); /* a, the oldest idle one, was closed */
  cl_close(&a);
  /* full of half-sent headers: the same */
  cl_send(&b, "GET /hello HTTP/1.1\r\nHost: x\r\n");
  cl_send(&x, "GET /hello HTTP/1.1\r\nHo");
  usleep(20000); /* the server has read them */
  cl_open(&y);
  cl_send(&y, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&y, out, sizeof out, 0) == 200);
  CHECK(cl_eof(&b));
  cl_close(&b);
  cl_close(&x);
  cl_close(&y);
  /* full of requests in flight: a new one is closed at once */
  for (int i = 0; i < 200 && stats().conns > 0; i++) usleep(1000);
  cl_open(&a);
  cl_open(&b);
  cl_send(&a, "GET /slow HTTP/1.1\r\n\r\n");
  cl_send(&b, "GET /slow HTTP/1.1\r\n\r\n");
  CHECK(wait_count(2, 2)); /* both held by the handler */
  cl_open(&x);
  cl_send(&x, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&x, out, sizeof out, 0) <= 0); /* closed, no answer */
  cl_close(&x);
  on_loop(do_answer_slow, NULL);
  CHECK(cl_response(&a, out, sizeof out, 0) == 200);
  CHECK(cl_response(&b, out, sizeof out, 0) == 200);
  CHECK(stats().conns <= 2);
  cl_close(&a);
  cl_close(&b);
}

/* issue 7 item 11: 500 connects made before the server accepts any all
 * get in and get answered (the backlog was 128) */
#define NPRE 500
static void pre_connect(void) {
  npre = 0;
  int refused = 0;
  for (int i = 0; i < NPRE; i++) {
    int fd = sock_connect(1);
    if (fd < 0) refused++;
    else pre_fds[npre++] = fd;
  }
  fprintf(stderr, "   %d of %d connects refused\n", refused, NPRE);
}

static void case_many(void) {
  CHECK(npre == NPRE);
  int answered = 0;
  for (int i = 0; i < npre; i++) {
    static const char r[] = "GET /hello HTTP/1.1\r\n\r\n";
    send_all(pre_fds[i], r, sizeof r - 1);
  }
  for (int i = 0; i < npre; i++) {
    client_t *c = calloc(1, sizeof *c);
    char out[16];
    c->fd = pre_fds[i];
    answered += cl_response(c, out, sizeof out, 0) == 200;
    cl_close(c);
    free(c);
  }
  CHECK(answered == NPRE);
}

/* issue 7, hostile round: bodies read to memory at the same time share a
 * budget. Ten clients each sending a 32 MiB body (all but its last byte)
 * held 329 MB in the rocklet; now a request past the budget waits, unread,
 * and goes on when another is done: all are answered, whole. */
#define NBUDGET 6
static client_t budget_cl[NBUDGET];
static void *send_rest(void *arg) {
  client_t *c = arg;
  send_all(c->fd, chunk + 100000, sizeof chunk - 100000);
  return NULL;
}

static void case_body_budget(void) {
  for (int i = 0; i < NBUDGET; i++) { /* 100 kB each: fits the socket */
    cl_open(&budget_cl[i]);
    cl_send(&budget_cl[i], "POST /echo HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n");
    send_all(budget_cl[i].fd, chunk, 100000);
  }
  rock_http_server_stats_t st;
  for (int k = 0; k < 5000; k++) { /* until the server has seen them all */
    st = stats();
    if (st.waiting == NBUDGET - 2) break;
    usleep(1000);
  }
  fprintf(stderr, "   %u waiting, budget %llu bytes taken, %zu buffered\n", st.waiting,
          (unsigned long long)st.body_mem, st.buffered);
  CHECK(st.waiting == NBUDGET - 2);
  CHECK(st.body_mem <= 2 * ((1 << 20) + 1));
  CHECK(st.buffered <= 2 * ((1 << 20) + 1) + NBUDGET * (ROCK_HTTP_READ_AHEAD + 8192));
  pthread_t th[NBUDGET];
  for (int i = 0; i < NBUDGET; i++) pthread_create(&th[i], NULL, send_rest, &budget_cl[i]);
  uint64_t sum = 0;
  for (size_t i = 0; i < sizeof chunk; i++) sum = sum * 31 + (unsigned char)chunk[i];
  char want[64], out[64];
  snprintf(want, sizeof want, "1048576 %llu 1", (unsigned long long)sum);
  int answered = 0;
  for (int i = 0; i < NBUDGET; i++)
    answered += cl_response(&budget_cl[i], out, sizeof out, 0) == 200 && !strcmp(out, want);
  for (int i = 0; i < NBUDGET; i++) pthread_join(th[i], NULL);
  CHECK(answered == NBUDGET);
  st = stats();
  CHECK(st.body_mem == 0 && st.waiting == 0);
  for (int i = 0; i < NBUDGET; i++) cl_close(&budget_cl[i]);
}

/* ---- TCP, kept headers, answers with headers or a file, drain ---- */

static void case_tcp_headers(void) {
  client_t c;
  char out[4096];
  cl_open(&c);
  CHECK(c.fd >= 0);
  cl_send(&c, "GET /headers?x=1 HTTP/1.1\r\nHost: h\r\nX-Mixed-Case: A b\r\n"
              "X-Empty:\r\nX-Rep: 1\r\nX-Rep: 2\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 201);
  CHECK(!strcmp(out, "host|h|x-mixed-case|A b|x-empty||x-rep|1|x-rep|2|peer=127.0.0.1"));
  CHECK(strstr(c_last_head, "X-One: 1\r\nContent-Type: text/x-test\r\n") != NULL);
  /* headers past max_header (1 KiB here): 431, then closed */
  char big[2048];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  cl_send(&c, "GET /headers HTTP/1.1\r\nX-Big: %s\r\n\r\n", big);
  CHECK(cl_response(&c, out, sizeof out, 0) == 431);
  CHECK(strstr(out, "larger than 1024") != NULL);
  CHECK(cl_eof(&c));
  cl_close(&c);
  cl_open(&c); /* a URL past it too */
  cl_send(&c, "GET /%s HTTP/1.1\r\n\r\n", big);
  CHECK(cl_response(&c, out, sizeof out, 0) == 431);
  cl_close(&c);
  cl_open(&c); /* a Transfer-Encoding other than chunked: 501 */
  cl_send(&c, "POST /echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nxx");
  CHECK(cl_response(&c, out, sizeof out, 0) == 501);
  CHECK(strstr(out, "Transfer-Encoding") != NULL);
  cl_close(&c);
  cl_open(&c); /* CONNECT: 501 */
  cl_send(&c, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 501);
  cl_close(&c);
  cl_open(&c); /* still answering */
  cl_send(&c, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  cl_close(&c);
}

/* a 3 MiB file answered chunk by chunk, then a pipelined request */
static void case_answer_file(void) {
  FILE *f = fopen(file_path, "w");
  for (int i = 0; i < 3; i++) fwrite(chunk, 1, sizeof chunk, f);
  fclose(f);
  client_t c;
  cl_open(&c);
  cl_send(&c, "GET /answer-file HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\n\r\n");
  /* read the head, then exactly 3 MiB */
  char line[256];
  size_t got = 0, hl = 0;
  int same = 1;
  while (!hl) {
    ssize_t n = read(c.fd, c.buf + c.len, sizeof c.buf - c.len);
    if (n <= 0) break;
    c.len += n;
    char *e = memmem(c.buf, c.len, "\r\n\r\n", 4);
    if (e) hl = e + 4 - c.buf;
  }
  CHECK(hl > 0 && !memcmp(c.buf, "HTTP/1.1 200", 12));
  snprintf(line, sizeof line, "Content-Length: %d\r\n", 3 << 20);
  CHECK(memmem(c.buf, hl, line, strlen(line)) != NULL);
  memmove(c.buf, c.buf + hl, c.len - hl);
  c.len -= hl;
  while (got < (3u << 20)) {
    size_t take = c.len < (3u << 20) - got ? c.len : (3u << 20) - got;
    for (size_t i = 0; i < take && same; i++)
      same = c.buf[i] == chunk[(got + i) % sizeof chunk];
    got += take;
    memmove(c.buf, c.buf + take, c.len - take);
    c.len -= take;
    if (got == (3u << 20)) break;
    ssize_t n = read(c.fd, c.buf + c.len, sizeof c.buf - c.len);
    if (n <= 0) break;
    c.len += n;
  }
  CHECK(got == (3u << 20) && same);
  char out[64];
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  /* a file shorter than said: what it has, then the connection closes */
  cl_send(&c, "GET /answer-file?short HTTP/1.1\r\n\r\n");
  size_t total = 0;
  for (;;) {
    ssize_t n = read(c.fd, c.buf, sizeof c.buf);
    if (n <= 0) break;
    total += n;
  }
  CHECK(total > (3u << 20) && total < (3u << 20) + 200);
  cl_close(&c);
}

/* Read the head of an answer into c_last_head; the body's first bytes
 * stay in c->buf. The status, or 0. */
static int cl_head(client_t *c) {
  for (;;) {
    char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    if (end) {
      size_t hl = end + 4 - c->buf;
      snprintf(c_last_head, sizeof c_last_head, "%.*s", (int)hl, c->buf);
      memmove(c->buf, c->buf + hl, c->len - hl);
      c->len -= hl;
      return atoi(c_last_head + 9);
    }
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n <= 0) return 0;
    c->len += n;
  }
}

/* Read up to want body bytes (or to EOF), checking the chunk pattern;
 * returns the count, -1 on a wrong byte. */
static int64_t cl_body(client_t *c, uint64_t want) {
  uint64_t got = 0;
  for (;;) {
    size_t take = c->len < want - got ? c->len : (size_t)(want - got);
    for (size_t i = 0; i < take; i++)
      if (c->buf[i] != chunk[(got + i) % sizeof chunk]) return -1;
    got += take;
    memmove(c->buf, c->buf + take, c->len - take);
    c->len -= take;
    if (got == want) return (int64_t)got;
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return (int64_t)got;
    c->len += n;
  }
}

/* a streamed answer: its head at once, its body written only while the
 * client takes it (a client that reads nothing holds the writer at the
 * high mark), whole and exact, then the next pipelined request; cut
 * short (the connection closes); of unknown size (closed after it); a
 * HEAD (no body); a client gone mid-way (GONE, once) */
static void case_stream(void) {
  client_t c;
  char out[64], line[64];
  uint64_t v[6];
  cl_open(&c);
  cl_send(&c, "GET /stream?n=%d HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\n\r\n", 32 << 20);
  CHECK(cl_head(&c) == 200);
  snprintf(line, sizeof line, "Content-Length: %d\r\n", 32 << 20);
  CHECK(strstr(c_last_head, line) != NULL);
  usleep(200 * 1000); /* the client reads nothing: the writer waits (the
                       * sockets' buffers and the mark in flight) */
  on_loop(get_stream, v);
  CHECK(v[0] < (12u << 20) && v[4] == 1);
  CHECK(cl_body(&c, 32u << 20) == (32 << 20));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  on_loop(get_stream, v);
  CHECK(v[0] == (32u << 20) && v[1] > 0 && v[2] == 0 && v[3] == 1 && v[4] == 0);
  /* what the server held, sent or not, never passed the mark by more
   * than a piece (a piece sent at once is never held) */
  CHECK(v[5] <= ROCK_HTTP_STREAM_HIGH + (64u << 10));
  /* cut after 256 KiB of 1 MiB: what was sent, then EOF */
  cl_send(&c, "GET /stream?n=%d&cut=%d HTTP/1.1\r\n\r\n", 1 << 20, 256 << 10);
  CHECK(cl_head(&c) == 200);
  CHECK(cl_body(&c, 1u << 20) == (256 << 10));
  CHECK(cl_eof(&c));
  cl_close(&c);
  /* unknown size: no Content-Length, the connection ends the body */
  cl_open(&c);
  cl_send(&c, "GET /stream?n=300000&unknown HTTP/1.1\r\n\r\n");
  CHECK(cl_head(&c) == 200);
  CHECK(!strstr(c_last_head, "Content-Length") && strstr(c_last_head, "Connection: close"));
  CHECK(cl_body(&c, 1u << 30) == 300000);
  cl_close(&c);
  /* HEAD: the head with the size, no body; the next request goes on */
  cl_open(&c);
  cl_send(&c, "HEAD /stream?n=1000 HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&c, out, sizeof out, 1) == 200 && strstr(c_last_head, "Content-Length: 1000\r\n"));
  CHECK(cl_response(&c, out, sizeof out, 0) == 200 && !strcmp(out, "hello"));
  cl_close(&c);
  /* gone mid-way: GONE once, and the owner's end after it is fine */
  cl_open(&c);
  cl_send(&c, "GET /stream?n=%d HTTP/1.1\r\n\r\n", 1 << 30);
  CHECK(cl_head(&c) == 200);
  CHECK(cl_body(&c, 1u << 20) == (1 << 20));
  cl_close(&c);
  for (int k = 0; k < 2000; k++) {
    on_loop(get_stream, v);
    if (v[2] && !v[4]) break;
    usleep(1000);
  }
  CHECK(v[2] == 1 && v[4] == 0 && v[0] < (1u << 30));
  rock_http_server_stats_t st = stats();
  CHECK(st.conns == 0);
}

static void on_drained(void *arg) { (void)arg, drained++; }
static void do_drain(void *arg) { (void)arg, rock_http_server_drain(srv, on_drained, NULL); }
static void get_drained(void *arg) { *(int *)arg = drained; }

/* drain: idle connections close, the request in flight gets its answer
 * (with Connection: close), no new connection is taken, cb runs once */
static void case_drain(void) {
  client_t idle, busy;
  char out[64];
  drained = 0;
  cl_open(&idle);
  cl_send(&idle, "GET /hello HTTP/1.1\r\n\r\n");
  CHECK(cl_response(&idle, out, sizeof out, 0) == 200);
  cl_open(&busy);
  cl_send(&busy, "POST /slow HTTP/1.1\r\n\r\nGET /hello HTTP/1.1\r\n\r\n");
  CHECK(wait_count(2, 1));
  on_loop(do_drain, NULL);
  CHECK(cl_eof(&idle));
  int d;
  on_loop(get_drained, &d);
  CHECK(d == 0);
  client_t late;
  late.fd = sock_connect(0);
  late.len = 0;
  CHECK(late.fd < 0); /* not listening any more */
  if (late.fd >= 0) cl_close(&late);
  on_loop(do_answer_slow, NULL);
  CHECK(cl_response(&busy, out, sizeof out, 0) == 200 && !strcmp(out, "done"));
  CHECK(memmem(c_last_head, strlen(c_last_head), "Connection: close", 17) != NULL);
  CHECK(cl_eof(&busy)); /* the pipelined one was not read */
  for (int k = 0; k < 1000 && !d; k++) {
    on_loop(get_drained, &d);
    if (!d) usleep(1000);
  }
  CHECK(d == 1);
  on_loop(do_drain, NULL); /* twice: nothing changes */
  on_loop(get_drained, &d);
  CHECK(d == 1);
  cl_close(&idle);
  cl_close(&busy);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  fill_chunk();
  snprintf(sock_path, sizeof sock_path, "/tmp/rock-test-server-%d.sock", (int)getpid());
  snprintf(file_path, sizeof file_path, "/tmp/rock-test-server-%d.body", (int)getpid());
  rock_http_server_opts_t o = defaults();
  run_case("basics", o, NULL, case_basics);
  run_case("head", o, NULL, case_head);
  run_case("backpressure", o, NULL, case_backpressure);
  run_case("abort", o, NULL, case_abort);
  o.max_body = 1 << 20;
  run_case("too large", o, NULL, case_too_large);
  run_case("file sink", o, NULL, case_file_sink);
  o = defaults();
  o.idle_timeout_ms = 50;
  run_case("idle", o, NULL, case_idle);
  run_case("pulled bodies: a client that stops sending", o, NULL, case_pull_idle);
  o = defaults();
  o.max_conns = 2;
  run_case("connection cap", o, NULL, case_conn_cap);
  run_case("500 connects", defaults(), pre_connect, case_many);
  o = defaults();
  o.max_body = 1 << 20;
  o.max_body_mem = 2 * ((1 << 20) + 1);
  run_case("body budget", o, NULL, case_body_budget);
  use_tcp = 1;
  o = defaults();
  o.max_header = 1024;
  run_case("tcp and headers", o, NULL, case_tcp_headers);
  run_case("answer with a file", defaults(), NULL, case_answer_file);
  run_case("streamed answers (tcp)", defaults(), NULL, case_stream);
  use_tcp = 0;
  run_case("streamed answers", defaults(), NULL, case_stream);
  run_case("pulled bodies", defaults(), NULL, case_pull);
  use_tcp = 1;
  run_case("pulled bodies (tcp)", defaults(), NULL, case_pull);
  run_case("pulled bodies answered early (tcp)", defaults(), NULL, case_pull_early);
  use_tcp = 0;
  run_case("pulled bodies answered early", defaults(), NULL, case_pull_early);
  use_tcp = 1;
  run_case("drain", defaults(), NULL, case_drain);
  use_tcp = 0;
  run_case("drain (unix socket)", defaults(), NULL, case_drain);
  unlink(file_path);
  return check_report();
}
