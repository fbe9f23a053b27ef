/* child.c: the preamble of every child of the rocklet (see child.h).
 * Only async-signal-safe calls plus setenv run here. setenv after fork is
 * safe: the rocklet's only other threads are libuv's pool running editor
 * calls (routes_editor.c), which never take the environment's lock, and
 * glibc's fork leaves malloc usable in the child. */
#include "child.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

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

char **rock__child_env(const char *const *env) {
  if (!env || !env[0]) return environ;
  size_t n = 0, k = 0, bytes = 0;
  for (char **e = environ; *e; e++) n++;
  for (; env[k] && env[k + 1]; k += 2) bytes += strlen(env[k]) + strlen(env[k + 1]) + 2;
  char **v = malloc((n + k / 2 + 1) * sizeof *v + bytes);
  if (!v) return NULL;
  char *str = (char *)(v + n + k / 2 + 1);
  size_t m = 0;
  for (char **e = environ; *e; e++) { /* the rocklet's, less what env sets */
    const char *eq = strchr(*e, '=');
    size_t kl = eq ? (size_t)(eq - *e) : strlen(*e);
    int over = 0;
    for (size_t i = 0; i < k && !over; i += 2)
      over = strlen(env[i]) == kl && !memcmp(env[i], *e, kl);
    if (!over) v[m++] = *e;
  }
  for (size_t i = 0; i < k; i += 2) { /* a key given twice: the last wins */
    int later = 0;
    for (size_t j = i + 2; j < k && !later; j += 2) later = !strcmp(env[i], env[j]);
    if (later) continue;
    v[m++] = str;
    size_t kl = strlen(env[i]), vl = strlen(env[i + 1]);
    memcpy(str, env[i], kl);
    str[kl] = '=';
    memcpy(str + kl + 1, env[i + 1], vl + 1);
    str += kl + vl + 2;
  }
  v[m] = NULL;
  return v;
}

static const char *env_get(char *const *envp, const char *key) {
  size_t kl = strlen(key);
  for (; *envp; envp++)
    if (!strncmp(*envp, key, kl) && (*envp)[kl] == '=') return *envp + kl + 1;
  return NULL;
}

/* execve, and for a file the kernel cannot run (ENOEXEC) /bin/sh on it */
static void exec_one(const char *path, char *const *argv, char *const *envp) {
  execve(path, argv, envp);
  if (errno != ENOEXEC) return;
  size_t n = 0;
  while (argv[n]) n++;
  char *sh[n + 2];
  sh[0] = "/bin/sh";
  sh[1] = (char *)path;
  for (size_t i = 1; i <= n; i++) sh[i + 1] = argv[i];
  execve("/bin/sh", sh, envp);
  errno = ENOEXEC;
}

/* In the child: execvp's search, on envp's PATH. Returns the errno. */
static int exec_search(char *const *argv, char *const *envp) {
  const char *file = argv[0];
  if (!*file) return ENOENT;
  if (strchr(file, '/')) {
    exec_one(file, argv, envp);
    return errno;
  }
  const char *path = env_get(envp, "PATH");
  if (!path) path = "/bin:/usr/bin"; /* glibc's default */
  size_t fl = strlen(file);
  int seen_eacces = 0, last = ENOENT;
  for (const char *p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t dl = end ? (size_t)(end - p) : strlen(p);
    char buf[PATH_MAX];
    if (dl + fl + 2 <= sizeof buf) {
      memcpy(buf, p, dl);
      size_t at = dl;
      if (dl) buf[at++] = '/'; /* an empty entry is the cwd */
      memcpy(buf + at, file, fl + 1);
      exec_one(buf, argv, envp);
      last = errno;
      if (last == EACCES) seen_eacces = 1;
      else if (last != ENOENT && last != ENOTDIR && last != ESTALE && last != ENODEV &&
               last != ETIMEDOUT)
        return last; /* found, but it cannot run: as execvp, stop */
    }
    if (!end) break;
    p = end;
  }
  return seen_eacces ? EACCES : last;
}

pid_t rock__child_spawn(char *const *argv, char *const *envp, const char *cwd, int fd0,
                        int fd1, int fd2, int *err) {
  volatile int child_err = 0; /* shared with the vfork child */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pid_t parent = getpid();
  pid_t pid = vfork();
  if (pid == 0) {
    /* the child, on the rocklet's memory until exec: only system calls and
     * this stack. Dispositions are its own (no CLONE_SIGHAND). */
    for (int sig = 1; sig < NSIG; sig++) {
      struct sigaction sa = {.sa_handler = SIG_DFL};
      sigaction(sig, &sa, NULL);
    }
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137); /* it died before the prctl */
    int e = 0;
    if (dup2(fd0, 0) < 0 || dup2(fd1, 1) < 0 || dup2(fd2, 2) < 0) e = errno;
    if (!e && cwd && chdir(cwd) != 0) e = errno;
    if (!e) {
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, NULL);
      e = exec_search(argv, envp);
      sigprocmask(SIG_SETMASK, &all, NULL);
    }
    child_err = e ? e : EINVAL;
    _exit(e == ENOENT ? 127 : 126);
  }
  int e = pid < 0 ? errno : child_err;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e) *err = e;
  return e && pid > 0 ? -1 : pid < 0 ? -1 : pid;
}
