/* child.c: the preamble of every child of the rocklet (see child.h).
 * Only async-signal-safe calls plus setenv run here. setenv after fork is
 * safe: the rocklet's only other threads are libuv's pool running editor
 * calls (routes_editor.c), which never take the environment's lock, and
 * glibc's fork leaves malloc usable in the child. */
#include "child.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

void rock__child_preamble(int die_with_parent) {
  pid_t parent = getppid();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  setsid();
  if (die_with_parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137); /* it died before the prctl */
  }
}

int rock__child_setup(const char *const *env, const char *cwd) {
  for (size_t i = 0; env && env[i] && env[i + 1]; i += 2)
    if (setenv(env[i], env[i + 1], 1)) return errno;
  if (cwd && chdir(cwd) != 0) return errno;
  return 0;
}

int rock__child_become(const rock_user_t *u) {
  if (!u) return 0;
  /* root always switches (the groups too); a rocklet that is not root
   * can only be asked for itself */
  if (geteuid() == 0 || geteuid() != u->uid || getegid() != u->gid) {
    if (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid))
      return errno;
  }
  if (setenv("HOME", u->home, 1) || setenv("USER", u->name, 1) || setenv("LOGNAME", u->name, 1))
    return errno;
  return 0;
}

void rock__child_fail(int status_fd, int err) {
  if (status_fd >= 0 && write(status_fd, &err, sizeof err) < 0) _exit(127);
  _exit(err == ENOENT ? 127 : 126);
}

int rock__child_status(int status_fd) {
  int e = 0;
  ssize_t n;
  do n = read(status_fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof e ? e : 0;
}
