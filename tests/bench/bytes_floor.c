/* bytes_floor.c: the raw floors the byte routes are measured against.
 *   bytes_floor spawn N     median microseconds of posix_spawnp("true") + waitpid
 *   bytes_floor cat FILE R  median ms of `cat FILE` into a pipe, read whole
 *   bytes_floor sock FILE R median ms of FILE's bytes (read into memory
 *                           first) over a unix socket, read whole: no
 *                           processing at either end */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bytes_floor spawn N | cat FILE R | sock FILE R\n");
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
    if (!strcmp(argv[1], "cat")) {
      int p[2];
      if (pipe(p)) return 1;
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_adddup2(&fa, p[1], 1);
      posix_spawn_file_actions_addclose(&fa, p[0]);
      char *args[] = {"cat", (char *)file, NULL};
      double t = now_us();
      pid_t pid;
      if (posix_spawnp(&pid, "cat", &fa, NULL, args, environ)) return 1;
      close(p[1]);
      size_t got = drain(p[0], buf, cap);
      v[i] = (now_us() - t) / 1e3;
      close(p[0]);
      waitpid(pid, NULL, 0);
      posix_spawn_file_actions_destroy(&fa);
      if (got != size) return 1;
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
