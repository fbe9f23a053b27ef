/* test_client.c: c/http/client.c against a tiny HTTP server on a unix
 * socket, run in a child process this test starts (and stops, by pid).
 *  - issue 7 item 5: two transfers complete in the same loop turn and the
 *    first one's callback cancels the second, which was already queued for
 *    delivery: the second's callback never runs and nothing freed is used
 *    (run under the ASan build too).
 *  - issue 7 item 13: peer_pid: a socket served by another process fails
 *    the request before a byte is sent; the right pid gets its answer.
 *  - issue 18: a body from a source (rock serve's PUT relay), its bytes
 *    coming in pieces with pauses between (CURL_READFUNC_PAUSE, then
 *    rock_http_xfer_resume), of a known size or chunked, and a source
 *    that ends its transfer mid-body; another child server checks what
 *    arrived.
 * Ends with every handle closed: uv_loop_close must return 0. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "http/client.h"

#include "check.h"

static const char ANSWER[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* Read one request (headers only: the test sends GETs) from fd. */
static int read_request(int fd) {
  char buf[4096];
  size_t n = 0;
  while (n < sizeof buf - 1) {
    ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
    if (r <= 0) return -1;
    n += r;
    buf[n] = 0;
    if (strstr(buf, "\r\n\r\n")) return 0;
  }
  return -1;
}

/* The server: phase 1 takes two requests, says so on `up`, waits for a
 * byte on `go`, answers both at once and says so; phase 2 answers each
 * request as it comes, until killed. */
static void serve(const struct sockaddr_un *a, int up, int go) {
  /* listen here: SO_PEERCRED names the process that called listen() */
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, (const struct sockaddr *)a, sizeof *a) || listen(lfd, 16) ||
      write(up, "L", 1) != 1)
    _exit(2);
  int c[2];
  char b = 0;
  for (int i = 0; i < 2; i++) {
    c[i] = accept(lfd, NULL, NULL);
    if (c[i] < 0 || read_request(c[i])) _exit(2);
  }
  if (write(up, "A", 1) != 1 || read(go, &b, 1) != 1) _exit(2);
  for (int i = 0; i < 2; i++)
    if (write(c[i], ANSWER, sizeof ANSWER - 1) < 0) _exit(2);
  if (write(up, "B", 1) != 1) _exit(2);
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) _exit(errno == EINTR ? 0 : 2);
    while (!read_request(fd))
      if (write(fd, ANSWER, sizeof ANSWER - 1) < 0) break;
    close(fd);
  }
}

/* ---- the body server: for each request, the bytes of its body (by
 * Content-Length or chunked) and their checksum, answered
 * "length sum"; a connection cut mid-body is closed ---- */

typedef struct {
  int fd;
  char buf[1 << 16];
  size_t len, off;
} rd_t;

static int rd_byte(rd_t *r) {
  if (r->off == r->len) {
    ssize_t n = read(r->fd, r->buf, sizeof r->buf);
    if (n <= 0) return -1;
    r->len = (size_t)n, r->off = 0;
  }
  return (unsigned char)r->buf[r->off++];
}

static int rd_line(rd_t *r, char *out, size_t cap) { /* without its CRLF */
  size_t n = 0;
  for (int ch; (ch = rd_byte(r)) >= 0;) {
    if (ch == '\n') {
      if (n && out[n - 1] == '\r') n--;
      out[n] = 0;
      return 0;
    }
    if (n < cap - 1) out[n++] = (char)ch;
  }
  return -1;
}

static int rd_body(rd_t *r, uint64_t n, uint64_t *len, uint64_t *sum) {
  for (; n; n--) {
    int ch = rd_byte(r);
    if (ch < 0) return -1;
    *sum = *sum * 31 + (unsigned)ch;
    ++*len;
  }
  return 0;
}

static void serve_bodies(const struct sockaddr_un *a, int up) {
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, (const struct sockaddr *)a, sizeof *a) || listen(lfd, 16) ||
      write(up, "L", 1) != 1)
    _exit(2);
  static rd_t r;
  for (;;) {
    r.fd = accept(lfd, NULL, NULL), r.len = r.off = 0;
    if (r.fd < 0) _exit(errno == EINTR ? 0 : 2);
    char line[512];
    while (!rd_line(&r, line, sizeof line)) { /* the request line */
      uint64_t cl = 0, len = 0, sum = 0;
      int chunked = 0, ok = 0;
      while (!rd_line(&r, line, sizeof line) && line[0]) {
        if (!strncasecmp(line, "content-length:", 15)) cl = strtoull(line + 15, NULL, 10);
        if (!strncasecmp(line, "transfer-encoding: chunked", 26)) chunked = 1;
      }
      if (!chunked) {
        ok = !rd_body(&r, cl, &len, &sum);
      } else {
        for (;;) {
          if (rd_line(&r, line, sizeof line)) break;
          uint64_t n = strtoull(line, NULL, 16);
          if (!n) { /* the last chunk, then the end of the trailers */
            ok = !rd_line(&r, line, sizeof line);
            break;
          }
          if (rd_body(&r, n, &len, &sum) || rd_line(&r, line, sizeof line)) break;
        }
      }
      if (!ok) break; /* cut mid-body */
      char body[64], head[128];
      int bl = snprintf(body, sizeof body, "%llu %llu", (unsigned long long)len,
                        (unsigned long long)sum);
      int hl = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", bl);
      if (write(r.fd, head, hl) < 0 || write(r.fd, body, bl) < 0) break;
    }
    close(r.fd);
  }
}

/* A source whose bytes arrive 256 KiB a tick (1 ms) and are read as they
 * do: a read with nothing new pauses the transfer, the next tick resumes
 * it; abort_at ends the transfer there. */
typedef struct {
  rock_http_source_t src;
  rock_http_xfer_t *x;
  uint64_t sent, avail, abort_at;
  int waits, waiting;
  uv_timer_t tick;
} src_t;

static unsigned char pattern(uint64_t i) { return (unsigned char)(i * 7 + (i >> 9)); }

static long src_read(rock_http_source_t *k, rock_http_xfer_t *x, char *p, size_t n) {
  src_t *s = (src_t *)k;
  s->x = x;
  uint64_t total = s->src.size == UINT64_MAX ? 1048583 : s->src.size;
  if (s->abort_at && s->sent >= s->abort_at) {
    rock_http_xfer_abort(x, ROCK_E_CANCELLED, "the source ends it");
    return -1;
  }
  uint64_t left = (s->avail < total ? s->avail : total) - s->sent;
  if (!left && s->sent == total) return 0;
  if (!left) {
    s->waits++;
    s->waiting = 1;
    return -2;
  }
  if (n > left) n = (size_t)left;
  for (size_t i = 0; i < n; i++) p[i] = (char)pattern(s->sent + i);
  s->sent += n;
  return (long)n;
}

static void src_tick(uv_timer_t *t) {
  src_t *s = t->data;
  s->avail += 256u << 10;
  if (s->waiting) {
    s->waiting = 0;
    rock_http_xfer_resume(s->x);
  }
}

static void pattern_answer(char *want, size_t cap, uint64_t n) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum = sum * 31 + pattern(i);
  snprintf(want, cap, "%llu %llu", (unsigned long long)n, (unsigned long long)sum);
}

typedef struct {
  int calls;
  rock_err err;
  long status;
  char body[64], message[128];
} body_res_t;

static void on_body_done(void *data, const rock_http_response_t *r) {
  body_res_t *b = data;
  b->calls++;
  b->err = r->err;
  b->status = r->status;
  snprintf(b->body, sizeof b->body, "%.*s", (int)r->body_len, r->body ? r->body : "");
  snprintf(b->message, sizeof b->message, "%s", r->message ? r->message : "");
}

/* PUT a source's body of size bytes (UINT64_MAX: chunked) to the body
 * server; abort_at: the source ends it there. */
static body_res_t put_source(uv_loop_t *loop, rock_http_client_t *c, const char *sock,
                             uint64_t size, uint64_t abort_at, int *waits) {
  body_res_t res = {0};
  src_t s = {.src = {.size = size, .read = src_read}, .abort_at = abort_at};
  uv_timer_init(loop, &s.tick);
  s.tick.data = &s;
  uv_timer_start(&s.tick, src_tick, 1, 1);
  rock_http_request_t req = {.url = "http://t/put", .unix_socket = sock, .method = "PUT",
                             .source = &s.src, .timeout = 20};
  REQUIRE(rock_http_client_request(c, &req, on_body_done, &res, NULL) == ROCK_E_OK);
  while (!res.calls) uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&s.tick, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
  *waits = s.waits;
  return res;
}

typedef struct {
  rock_http_xfer_t *xfer[2];
  int calls[2];
  long status[2];
  rock_err err;
  long peer_pid;
} state_t;

static state_t st;

static void on_done_cancel_other(void *data, const rock_http_response_t *r) {
  int i = (int)(long)data;
  st.calls[i]++;
  st.status[i] = r->status;
  st.xfer[i] = NULL;
  if (st.xfer[1 - i]) { /* still queued: the walk must not reach it */
    rock_http_xfer_cancel(st.xfer[1 - i]);
    st.xfer[1 - i] = NULL;
  }
}

static void on_done(void *data, const rock_http_response_t *r) {
  int i = (int)(long)data;
  st.calls[i]++;
  st.status[i] = r->status;
  st.err = r->err;
  st.peer_pid = r->peer_pid;
}

static void watchdog(uv_timer_t *t) {
  (void)t;
  fprintf(stderr, "FAIL: the test hung\n");
  exit(1);
}

int main(void) {
  char dir[] = "/tmp/rock-test-client.XXXXXX";
  REQUIRE(mkdtemp(dir));
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s/s.sock", dir);
  int up[2], go[2];
  REQUIRE(!pipe(up) && !pipe(go));
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(up[0]);
    close(go[1]);
    serve(&a, up[1], go[0]);
  }
  close(up[1]);
  close(go[0]);
  char b;
  REQUIRE(read(up[0], &b, 1) == 1 && b == 'L'); /* listening */

  uv_loop_t loop;
  REQUIRE(!uv_loop_init(&loop));
  uv_timer_t dog;
  uv_timer_init(&loop, &dog);
  uv_timer_start(&dog, watchdog, 20000, 0);
  uv_unref((uv_handle_t *)&dog);
  rock_http_client_t *c;
  REQUIRE(rock_http_client_init(&c, &loop) == ROCK_E_OK);

  /* issue 18: bodies from a source, against the body server */
  struct sockaddr_un ba = {.sun_family = AF_UNIX};
  snprintf(ba.sun_path, sizeof ba.sun_path, "%s/bodies.sock", dir);
  int bup[2];
  REQUIRE(!pipe(bup));
  pid_t bodies = fork();
  REQUIRE(bodies >= 0);
  if (bodies == 0) {
    close(bup[0]);
    serve_bodies(&ba, bup[1]);
  }
  close(bup[1]);
  REQUIRE(read(bup[0], &b, 1) == 1 && b == 'L');
  close(bup[0]);
  char want[64];
  int waits = 0;
  body_res_t br = put_source(&loop, c, ba.sun_path, 4u << 20, 0, &waits);
  pattern_answer(want, sizeof want, 4u << 20);
  CHECK(br.calls == 1 && br.err == ROCK_E_OK && br.status == 200 && !strcmp(br.body, want));
  CHECK(waits > 0); /* it paused for bytes, and went on */
  br = put_source(&loop, c, ba.sun_path, UINT64_MAX, 0, &waits);
  pattern_answer(want, sizeof want, 1048583);
  CHECK(br.calls == 1 && br.err == ROCK_E_OK && !strcmp(br.body, want)); /* chunked */
  br = put_source(&loop, c, ba.sun_path, 0, 0, &waits);
  CHECK(br.calls == 1 && br.err == ROCK_E_OK && !strcmp(br.body, "0 0"));
  br = put_source(&loop, c, ba.sun_path, 4u << 20, 1u << 20, &waits);
  CHECK(br.calls == 1 && br.err == ROCK_E_CANCELLED && !strcmp(br.message, "the source ends it"));
  br = put_source(&loop, c, ba.sun_path, 1000, 0, &waits); /* the server is still there */
  pattern_answer(want, sizeof want, 1000);
  CHECK(br.calls == 1 && br.err == ROCK_E_OK && !strcmp(br.body, want));
  kill(bodies, SIGTERM);
  int bst;
  REQUIRE(waitpid(bodies, &bst, 0) == bodies);
  unlink(ba.sun_path);
  printf("ok   a body from a source: in pieces with pauses, known size or chunked, ended mid-way\n");

  /* item 5: both answers arrive in one turn; the first cancels the second */
  rock_http_request_t req = {.url = "http://t/", .unix_socket = a.sun_path, .timeout = 20};
  for (long i = 0; i < 2; i++)
    REQUIRE(rock_http_client_request(c, &req, on_done_cancel_other, (void *)i,
                                   &st.xfer[i]) == ROCK_E_OK);
  struct pollfd pfd = {.fd = up[0], .events = POLLIN};
  while (poll(&pfd, 1, 1) == 0) uv_run(&loop, UV_RUN_NOWAIT); /* until both sent */
  REQUIRE(read(up[0], &b, 1) == 1 && b == 'A');
  REQUIRE(write(go[1], "g", 1) == 1);
  REQUIRE(read(up[0], &b, 1) == 1 && b == 'B'); /* both answers are written */
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(st.calls[0] + st.calls[1] == 1);
  REQUIRE(st.status[0] == 200 || st.status[1] == 200);
  printf("ok   same-turn completions, the first cancels the second\n");

  /* item 13: the peer check */
  memset(&st, 0, sizeof st);
  req.peer_pid = getpid(); /* not the server */
  REQUIRE(rock_http_client_request(c, &req, on_done, (void *)0, NULL) == ROCK_E_OK);
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(st.calls[0] == 1 && st.err == ROCK_E_CONNECTION && st.peer_pid == child);
  memset(&st, 0, sizeof st);
  req.peer_pid = child;
  REQUIRE(rock_http_client_request(c, &req, on_done, (void *)0, NULL) == ROCK_E_OK);
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(st.calls[0] == 1 && st.err == ROCK_E_OK && st.status[0] == 200);
  /* that checked connection is kept alive, but only for the same pid */
  memset(&st, 0, sizeof st);
  req.peer_pid = getpid();
  REQUIRE(rock_http_client_request(c, &req, on_done, (void *)0, NULL) == ROCK_E_OK);
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(st.calls[0] == 1 && st.err == ROCK_E_CONNECTION && st.peer_pid == child);
  printf("ok   peer_pid: another process's socket fails, the right one answers\n");

  /* a failed connect says why: nobody listens there */
  memset(&st, 0, sizeof st);
  rock_http_request_t gone = {.url = "http://t/", .unix_socket = "/nonexistent/rock.sock"};
  REQUIRE(rock_http_client_request(c, &gone, on_done, (void *)0, NULL) == ROCK_E_OK);
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(st.calls[0] == 1 && st.err == ROCK_E_CONNECTION);
  printf("ok   no server: connection error\n");

  /* closing a client while a curl transfer (out_file: not plain's) waits
   * on an open connection: the socket curl closes as the transfer is
   * removed is counted with the client's handles, which are freed once,
   * after the last close (a count overwritten there freed the client
   * early, then again: glibc's "double free", ASan's use after free) */
  char hold_path[sizeof a.sun_path], out_path[256];
  snprintf(hold_path, sizeof hold_path, "%s/hold.sock", dir);
  snprintf(out_path, sizeof out_path, "%s/out", dir);
  struct sockaddr_un ha = {.sun_family = AF_UNIX};
  strcpy(ha.sun_path, hold_path);
  int hold = socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(hold >= 0 && !bind(hold, (struct sockaddr *)&ha, sizeof ha) && !listen(hold, 4));
  rock_http_client_t *c2;
  REQUIRE(rock_http_client_init(&c2, &loop) == ROCK_E_OK);
  memset(&st, 0, sizeof st);
  rock_http_request_t held = {.url = "http://t/", .unix_socket = hold_path, .out_file = out_path};
  REQUIRE(rock_http_client_request(c2, &held, on_done, (void *)0, NULL) == ROCK_E_OK);
  struct pollfd hp = {.fd = hold, .events = POLLIN};
  while (poll(&hp, 1, 1) == 0) uv_run(&loop, UV_RUN_NOWAIT); /* until curl connects */
  int waiting = accept(hold, NULL, NULL); /* never answered: curl waits on it */
  REQUIRE(waiting >= 0);
  for (int i = 0; i < 20; i++) uv_run(&loop, UV_RUN_NOWAIT); /* the request goes out */
  rock_http_client_close(c2);
  rock_http_client_close(c);
  uv_close((uv_handle_t *)&dog, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  REQUIRE(uv_loop_close(&loop) == 0);
  kill(child, SIGTERM);
  int status;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(st.calls[0] == 0); /* closed: no callback */
  printf("ok   a client closed with a curl transfer waiting on its connection\n");
  close(waiting);
  close(hold);
  unlink(hold_path);
  unlink(out_path);
  unlink(a.sun_path);
  rmdir(dir);
  return check_report();
}
