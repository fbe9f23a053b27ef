/* bash.c: bash on a PTY, with its command and output pipes (see bash.h).
 * The fork/exec preamble is child.c's; what bash is sent, and when, is
 * session.c's. */
#include "bash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "child.h"

#define OUT_PIPE_SIZE (1 << 20)

static const char *const defaults[] = {
    "PAGER", "cat", "GIT_PAGER", "cat", "MANPAGER", "cat", "SYSTEMD_PAGER", "",
    "LESS", "-R", "TQDM_DISABLE", "1", "PIP_PROGRESS_BAR", "off", "TERM", "dumb",
    "PYTHONUNBUFFERED", "1", "DEBIAN_FRONTEND", "noninteractive", NULL,
};

const char *rock_bash_find(char *buf, size_t cap) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  const char *p = path;
  while (*p) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(buf, cap, "%.*s/bash", (int)n, p);
    if (access(buf, X_OK) == 0) return buf;
    p += n + (e ? 1 : 0);
  }
  return NULL;
}

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

/* In the child: the PTY as controlling terminal (no echo, no CR added),
 * the pipes at their fds, then exec bash. */
/* Move fd above every target fd (0-2, 252-254), close-on-exec. */
static int high(int fd, int st_w) {
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 256);
  if (h < 0) rock__child_fail(st_w, errno);
  return h;
}

/* In the child: the PTY as controlling terminal (no echo, no CR added),
 * the pipes at their fds, then exec bash (as user, when given). */
static void child(const char *slave, int po_w, int cp_r, int st_w,
                  const char *path, const char *const *env, const char *cwd,
                  const rock_user_t *user, int cmd_fd) {
  rock__child_preamble(0);
  st_w = high(st_w, st_w);
  int sl = open(slave, O_RDWR | O_CLOEXEC);
  if (sl < 0) rock__child_fail(st_w, errno);
  ioctl(sl, TIOCSCTTY, 0);
  if (user && fchown(sl, user->uid, (gid_t)-1)) rock__child_fail(st_w, errno); /* /dev/tty */
  struct termios t;
  if (tcgetattr(sl, &t) == 0) {
    t.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOKE);
    t.c_oflag &= ~ONLCR;
    tcsetattr(sl, TCSANOW, &t);
  }
  struct winsize ws = {.ws_row = 50, .ws_col = 200};
  ioctl(sl, TIOCSWINSZ, &ws);
  /* every end first goes above the targets, so no dup2 below overwrites
   * an end still to be moved, however many fds the rocklet holds; the
   * copies are close-on-exec, the dup2 targets not */
  po_w = high(po_w, st_w);
  cp_r = high(cp_r, st_w);
  sl = high(sl, st_w);
  if (user && cmd_fd >= 0) cmd_fd = high(cmd_fd, st_w);
  if (dup2(po_w, ROCK_BASH_OUT_FD) < 0 || dup2(po_w, ROCK_BASH_MARK_FD) < 0 ||
      dup2(cp_r, 0) < 0 || dup2(sl, 1) < 0 || dup2(sl, 2) < 0 ||
      (user && cmd_fd >= 0 && dup2(cmd_fd, ROCK_BASH_CMD_FD) < 0))
    rock__child_fail(st_w, errno);
  int e = rock__child_setup(defaults, NULL);
  if (!e) e = rock__child_become(user); /* before cwd: entered as the user */
  if (!e) e = rock__child_setup(env, cwd);
  if (e) rock__child_fail(st_w, e);
  unsetenv("HISTFILE");
  execl(path, "bash", "--noprofile", "--norc", "--noediting", "-i", (char *)NULL);
  rock__child_fail(st_w, errno);
}

int rock_bash_spawn(rock_bash_t *b, const char *path, const char *const *env,
                    const char *cwd, const rock_user_t *user, int cmd_fd) {
  int m = -1, po[2] = {-1, -1}, cp[2] = {-1, -1}, st[2] = {-1, -1}, e = 0;
  char slave[128];
  m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0 || grantpt(m) || unlockpt(m) || ptsname_r(m, slave, sizeof slave) ||
      pipe2(po, O_CLOEXEC) || pipe2(cp, O_CLOEXEC) || pipe2(st, O_CLOEXEC)) {
    e = errno ? errno : EIO;
    int fds[] = {m, po[0], po[1], cp[0], cp[1], st[0], st[1]};
    close_all(fds, 7);
    return -e;
  }
  fcntl(po[0], F_SETPIPE_SZ, OUT_PIPE_SIZE); /* fewer wakeups for big outputs */
  pid_t pid = fork();
  if (pid == 0) child(slave, po[1], cp[0], st[1], path, env, cwd, user, cmd_fd);
  e = pid < 0 ? errno : 0;
  int mine[] = {po[1], cp[0], st[1]};
  close_all(mine, 3);
  if (!e) e = rock__child_status(st[0]); /* the child is reaped by procs.c */
  close(st[0]);
  if (e) {
    int fds[] = {m, po[0], cp[1]};
    close_all(fds, 3);
    b->pid = 0; /* a child that failed is reaped by procs.c like any other */
    return -e;
  }
  b->pid = pid;
  b->master = m;
  b->out_r = po[0];
  b->cmd_w = cp[1];
  fcntl(cp[1], F_SETFL, fcntl(cp[1], F_GETFL) | O_NONBLOCK);
  fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
  fcntl(po[0], F_SETFL, fcntl(po[0], F_GETFL) | O_NONBLOCK);
  return 0;
}
