/* pty_floor.c: the floor for a command round trip: write "true\n" to an
 * interactive bash on a PTY and read until its prompt comes back.
 *   pty_floor N   prints the mean microseconds per round trip */
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* read until the marker appears */
static int wait_for(int fd, const char *mark) {
  char buf[4096];
  size_t have = 0, ml = strlen(mark);
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n <= 0) return -1;
    have += n;
    buf[have] = 0;
    if (strstr(buf, mark)) return 0;
    if (have > ml) { /* keep only a tail that could start the marker */
      memmove(buf, buf + have - ml, ml);
      have = ml;
    }
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  struct termios t;
  memset(&t, 0, sizeof t);
  int master;
  pid_t pid = forkpty(&master, NULL, NULL, NULL);
  if (pid == 0) {
    tcgetattr(0, &t);
    t.c_lflag &= ~ECHO;
    tcsetattr(0, TCSANOW, &t);
    setenv("PS1", "@@P@@", 1);
    execl("/bin/bash", "bash", "--norc", "--noprofile", "--noediting", "-i", (char *)NULL);
    _exit(127);
  }
  const char *setup = "PS1='@@''P@@'; PROMPT_COMMAND=''\n";
  write(master, setup, strlen(setup));
  wait_for(master, "@@P@@");
  for (int i = 0; i < 100; i++) { /* warm up */
    write(master, "true\n", 5);
    wait_for(master, "@@P@@");
  }
  double t0 = now_us();
  for (int i = 0; i < n; i++) {
    write(master, "true\n", 5);
    if (wait_for(master, "@@P@@")) return 1;
  }
  double us = (now_us() - t0) / n;
  printf("%.1f\n", us);
  write(master, "exit\n", 5);
  close(master);
  return 0;
}
