/* test_client.c: c/http/client.c against a tiny HTTP server on a unix
 * socket, run in a child process this test starts (and stops, by pid).
 *  - issue 7 item 5: two transfers complete in the same loop turn and the
 *    first one's callback cancels the second, which was already queued for
 *    delivery: the second's callback never runs and nothing freed is used
 *    (run under the ASan build too).
 *  - issue 7 item 13: peer_pid: a socket served by another process fails
 *    the request before a byte is sent; the right pid gets its answer.
 * Ends with every handle closed: uv_loop_close must return 0. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
