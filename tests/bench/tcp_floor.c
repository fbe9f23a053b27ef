/* tcp_floor.c: the floor for an HTTP hop on this machine: two C processes,
 * a keep-alive client and a server on loopback TCP (TCP_NODELAY), trading
 * a request and an answer of the sizes rock serve's run_in_session has.
 * No parsing, no allocation: what is left is the kernel's TCP and the two
 * wake-ups a hop costs.
 *   tcp_floor N   prints the p50 microseconds per round trip */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n < 1) n = 1;
  char req[210], ans[250];
  memset(req, 'q', sizeof req);
  memset(ans, 'a', sizeof ans);
  int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
      getsockname(l, (struct sockaddr *)&a, &al)) {
    perror("tcp_floor: listen");
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) { /* the server: an answer for every request read */
    int c = accept(l, NULL, NULL);
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buf[4096];
    size_t got = 0;
    for (;;) {
      ssize_t r = read(c, buf, sizeof buf);
      if (r <= 0) _exit(0);
      for (got += (size_t)r; got >= sizeof req; got -= sizeof req)
        if (write(c, ans, sizeof ans) != (ssize_t)sizeof ans) _exit(1);
    }
  }
  close(l);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a)) {
    perror("tcp_floor: connect");
    kill(pid, SIGKILL);
    return 1;
  }
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  double *lat = malloc(sizeof *lat * (size_t)n);
  char buf[4096];
  for (int i = -100; i < n; i++) { /* 100 to warm up */
    double t = now_us();
    if (write(s, req, sizeof req) != (ssize_t)sizeof req) return 1;
    for (size_t got = 0; got < sizeof ans;) {
      ssize_t r = read(s, buf, sizeof buf);
      if (r <= 0) return 1;
      got += (size_t)r;
    }
    if (i >= 0) lat[i] = now_us() - t;
  }
  close(s);
  waitpid(pid, NULL, 0);
  qsort(lat, (size_t)n, sizeof *lat, cmp);
  printf("%.1f\n", lat[n / 2]);
  free(lat);
  return 0;
}
