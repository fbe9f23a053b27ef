/* bytes_floor.c: the raw floors the byte routes are measured against.
 *   bytes_floor spawn N     median microseconds of posix_spawnp("true") + waitpid
 *   bytes_floor pipe R CMD ARGS...  median ms of CMD's stdout into a pipe,
 *                           read whole (`cat FILE`, `seq 1000000`)
 *   bytes_floor sock FILE R median ms of FILE's bytes (read into memory
 *                           first) over a unix socket, read whole: no
 *                           processing at either end
 *   bytes_floor write FILE R median ms of writing FILE's bytes (in memory)
 *                           to a new file beside it (what an upload's
 *                           disk costs)
 * and a minimal C client of the rocklet (one connection, no parsing past
 * the head, the body read into memory), to tell the rocklet's own cost
 * from a Lua client's:
 *   bytes_floor get SOCK PATH R     median ms of GET /file?path=PATH
 *   bytes_floor put SOCK PATH FILE R  median ms of PUT /file?path=PATH, FILE's bytes
 *   bytes_floor post SOCK URL BODY N [raw]  median us of POST URL with BODY
 *                           (JSON); raw: with Accept: application/octet-stream */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return v[n / 2];
}

/* read fd to its end into buf (cap bytes); returns the count */
static size_t drain(int fd, char *buf, size_t cap) {
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, cap - have > (1 << 20) ? 1 << 20 : cap - have);
    if (n <= 0) return have;
    have += (size_t)n;
  }
}

static int connect_to(const char *sock) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) exit(1);
  return fd;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) exit(1);
    p += w, n -= (size_t)w;
  }
}

/* read one answer: the head, then Content-Length bytes into buf; returns
 * the body's length (the status must be 2xx) */
static size_t read_answer(int fd, char **buf, size_t *cap) {
  size_t have = 0;
  char *end = NULL;
  for (;;) {
    if (have + 65536 > *cap) *buf = realloc(*buf, *cap = (have + 65536) * 2);
    ssize_t n = read(fd, *buf + have, *cap - have - 1);
    if (n <= 0) exit(1);
    have += (size_t)n;
    (*buf)[have] = 0;
    if ((end = strstr(*buf, "\r\n\r\n"))) break;
  }
  if (strncmp(*buf + 9, "2", 1)) {
    fprintf(stderr, "%.*s\n", (int)(end - *buf), *buf);
    exit(1);
  }
  char *cl = strcasestr(*buf, "content-length:");
  size_t len = cl ? strtoull(cl + 15, NULL, 10) : 0, head = (size_t)(end + 4 - *buf);
  if (head + len > *cap) *buf = realloc(*buf, *cap = head + len + 1);
  while (have < head + len) {
    ssize_t n = read(fd, *buf + have, head + len - have);
    if (n <= 0) exit(1);
    have += (size_t)n;
  }
  return len;
}

static int client(int argc, char **argv) {
  int fd = connect_to(argv[2]);
  char *buf = NULL, req[8192];
  size_t cap = 0;
  if (!strcmp(argv[1], "post")) {
    int n = atoi(argv[5]);
    double *v = calloc(n, sizeof *v);
    size_t bl = strlen(argv[4]);
    const char *acc = argc > 6 && !strcmp(argv[6], "raw") ? "Accept: application/octet-stream\r\n" : "";
    int hl = snprintf(req, sizeof req,
                      "POST %s HTTP/1.1\r\nHost: r\r\n%sContent-Length: %zu\r\n\r\n%s",
                      argv[3], acc, bl, argv[4]);
    for (int i = -20; i < n; i++) { /* 20 to warm up */
      double t = now_us();
      write_all(fd, req, (size_t)hl);
      read_answer(fd, &buf, &cap);
      if (i >= 0) v[i] = now_us() - t;
    }
    printf("%.1f\n", median(v, n));
    return 0;
  }
  int put = !strcmp(argv[1], "put");
  int r = atoi(argv[put ? 5 : 4]);
  char *src = NULL;
  size_t size = 0;
  if (put) {
    struct stat st;
    int in = open(argv[4], O_RDONLY);
    if (in < 0 || fstat(in, &st)) return 1;
    size = (size_t)st.st_size;
    src = malloc(size + 1);
    if (drain(in, src, size + 1) != size) return 1;
    close(in);
  }
  double *v = calloc(r + 1, sizeof *v);
  for (int i = -1; i < r; i++) { /* one to warm up */
    int hl = put ? snprintf(req, sizeof req,
                            "PUT /file?path=%s HTTP/1.1\r\nHost: r\r\nContent-Length: %zu\r\n\r\n",
                            argv[3], size)
                 : snprintf(req, sizeof req, "GET /file?path=%s HTTP/1.1\r\nHost: r\r\n\r\n",
                            argv[3]);
    double t = now_us();
    write_all(fd, req, (size_t)hl);
    if (put) write_all(fd, src, size);
    read_answer(fd, &buf, &cap);
    if (i >= 0) v[i] = (now_us() - t) / 1e3;
  }
  printf("%.2f\n", median(v, r));
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 5 && (!strcmp(argv[1], "get") || !strcmp(argv[1], "post") ||
                    (!strcmp(argv[1], "put") && argc >= 6)))
    return client(argc, argv);
  if (argc < 3) {
    fprintf(stderr, "usage: bytes_floor spawn N | pipe R CMD... | sock FILE R | write FILE R | get | put | post\n");
    return 2;
  }
  if (!strcmp(argv[1], "spawn")) {
    int n = atoi(argv[2]);
    double *v = calloc(n, sizeof *v);
    char *args[] = {"true", NULL};
    for (int i = 0; i < n; i++) {
      double t = now_us();
      pid_t pid;
      int st;
      if (posix_spawnp(&pid, "true", NULL, NULL, args, environ)) return 1;
      waitpid(pid, &st, 0);
      v[i] = now_us() - t;
    }
    printf("%.1f\n", median(v, n));
    return 0;
  }
  if (!strcmp(argv[1], "pipe") && argc > 3) {
    int r = atoi(argv[2]);
    double *v = calloc(r + 1, sizeof *v);
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    for (int i = -1; i < r; i++) { /* one to warm up */
      int p[2];
      if (pipe(p)) return 1;
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_adddup2(&fa, p[1], 1);
      posix_spawn_file_actions_addclose(&fa, p[0]);
      double t = now_us();
      pid_t pid;
      if (posix_spawnp(&pid, argv[3], &fa, NULL, argv + 3, environ)) return 1;
      close(p[1]);
      size_t have = 0;
      for (;;) { /* into memory, as a server would hold it */
        if (have + (1 << 16) > cap) buf = realloc(buf, cap *= 2);
        ssize_t n = read(p[0], buf + have, cap - have);
        if (n <= 0) break;
        have += (size_t)n;
      }
      waitpid(pid, NULL, 0);
      if (i >= 0) v[i] = (now_us() - t) / 1e3;
      close(p[0]);
      posix_spawn_file_actions_destroy(&fa);
    }
    printf("%.2f\n", median(v, r));
    return 0;
  }
  const char *file = argv[2];
  int r = argc > 3 ? atoi(argv[3]) : 5;
  struct stat sb;
  if (stat(file, &sb)) return 1;
  size_t size = (size_t)sb.st_size, cap = size + 1;
  char *buf = malloc(cap), *src = malloc(cap);
  double *v = calloc(r, sizeof *v);
  int in = open(file, O_RDONLY);
  if (in < 0 || drain(in, src, cap) != size) return 1;
  close(in);
  for (int i = 0; i < r; i++) {
    if (!strcmp(argv[1], "write")) {
      char out[4096];
      snprintf(out, sizeof out, "%s.floor", file);
      double t = now_us();
      int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0) return 1;
      for (size_t off = 0; off < size;) {
        ssize_t n = write(fd, src + off, size - off);
        if (n <= 0) return 1;
        off += (size_t)n;
      }
      close(fd);
      v[i] = (now_us() - t) / 1e3;
      unlink(out);
    } else {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;
      pid_t pid = fork();
      if (pid == 0) { /* the sender: wait for the go, write it all */
        char go;
        close(sv[0]);
        if (read(sv[1], &go, 1) != 1) _exit(1);
        for (size_t off = 0; off < size;) {
          ssize_t n = write(sv[1], src + off, size - off);
          if (n <= 0) _exit(1);
          off += (size_t)n;
        }
        _exit(0);
      }
      close(sv[1]);
      double t = now_us();
      if (write(sv[0], "g", 1) != 1) return 1;
      size_t got = drain(sv[0], buf, cap);
      v[i] = (now_us() - t) / 1e3;
      close(sv[0]);
      waitpid(pid, NULL, 0);
      if (got != size) return 1;
    }
  }
  printf("%.2f\n", median(v, r));
  return 0;
}
