/* jobs.c: background jobs (see jobs.h). The child's preamble is child.c's
 * (its own session, dying with the rocklet); procs.c reaps it; a job's
 * output is read back from its file, head and tail, by capture.c's
 * renderer. */
#include "jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bash.h"
#include "capture.h"
#include "child.h"
#include "procs.h"
#include "replace.h"

#define MAX_KILL 4096

static rock_job_t *first, *last;
static unsigned long counter;
static size_t nfinished;
static void (*end_hook)(rock_job_t *j);

void rock_jobs_set_on_end(void (*on_end)(rock_job_t *j)) { end_hook = on_end; }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void unlink_record(rock_job_t *j) {
  if (j->prev) j->prev->next = j->next;
  else first = j->next;
  if (j->next) j->next->prev = j->prev;
  else last = j->prev;
}

static void free_record(rock_job_t *j) {
  free(j->command);
  free(j);
}

/* Past ROCK_JOBS_KEEP finished records, drop the oldest finished ones
 * (with their default output files: nobody can ask for them any more). */
static void prune(void) {
  for (rock_job_t *j = first, *next; j && nfinished > ROCK_JOBS_KEEP; j = next) {
    next = j->next;
    if (j->running) continue;
    unlink_record(j);
    if (j->own_file) unlink(j->output_file);
    free_record(j);
    nfinished--;
  }
}

static void on_exit_cb(void *data, pid_t pid, int wstatus) {
  rock_job_t *j = data;
  (void)pid;
  j->running = 0;
  j->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  j->ended_at = now();
  nfinished++;
  if (end_hook) end_hook(j);
  prune();
}

/* The output file, open for writing: ours under dir/jobs (owner-only), or
 * the caller's with its parents made. A FIFO is opened without blocking
 * (no reader yet: ENXIO, an error, not a hung rocklet). Returns the fd or
 * -errno, with path filled. */
static int open_output(const rock_job_opts_t *o, unsigned long id, char *path, size_t cap) {
  int n;
  if (!o->output_file) {
    n = snprintf(path, cap, "%s/jobs", o->dir);
    if (n >= (int)cap) return -ENAMETOOLONG;
    if (mkdir(path, 0700) && errno != EEXIST) return -errno;
    n = snprintf(path, cap, "%s/jobs/%lu.out", o->dir, id);
    if (n >= (int)cap) return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    return fd < 0 ? -errno : fd;
  }
  if (o->output_file[0] == '/') {
    n = snprintf(path, cap, "%s", o->output_file);
  } else {
    char cwd[PATH_MAX];
    const char *base = o->cwd ? o->cwd : getcwd(cwd, sizeof cwd);
    if (!base) return -errno;
    n = snprintf(path, cap, "%s/%s", base, o->output_file);
  }
  if (n >= (int)cap) return -ENAMETOOLONG;
  int rc = rock_replace_mkdirs(path);
  if (rc) return rc;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return -errno;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

rock_err rock_jobs_start(const rock_job_opts_t *o, rock_job_t **out, char *msg,
                         size_t msg_cap) {
  *out = NULL;
  rock_job_t *j = calloc(1, sizeof *j);
  size_t clen = strlen(o->command);
  if (clen > ROCK_JOBS_COMMAND_KEPT) clen = ROCK_JOBS_COMMAND_KEPT;
  if (j) j->command = strndup(o->command, clen);
  if (!j || !j->command) {
    free(j);
    snprintf(msg, msg_cap, "no memory for a job");
    return ROCK_E_NO_MEMORY;
  }
  unsigned long id = counter + 1;
  int ofd = open_output(o, id, j->output_file, sizeof j->output_file);
  if (ofd < 0) {
    snprintf(msg, msg_cap, "output file %s: %s",
             o->output_file ? o->output_file : j->output_file, strerror(-ofd));
    free_record(j);
    return ofd == -ENAMETOOLONG ? ROCK_E_INVALID_ARGUMENT : ROCK_E_IO;
  }
  j->own_file = !o->output_file;
  char bash[PATH_MAX];
  const char *shell = rock_bash_find(bash, sizeof bash) ? bash : "/bin/sh";
  int ps[2];
  if (pipe2(ps, O_CLOEXEC)) {
    int e = errno;
    close(ofd);
    free_record(j);
    snprintf(msg, msg_cap, "pipe: %s", strerror(e));
    return ROCK_E_SPAWN_FAILED;
  }
  pid_t pid = fork();
  if (pid == 0) {
    rock__child_preamble(1); /* its own session; dies with the rocklet */
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(ofd, 1) < 0 || dup2(ofd, 2) < 0)
      rock__child_fail(ps[1], errno);
    int e = rock__child_setup(o->env, o->cwd);
    if (!e) {
      execl(shell, shell, "-c", o->command, (char *)NULL);
      e = errno;
    }
    rock__child_fail(ps[1], e);
  }
  int fork_errno = pid < 0 ? errno : 0;
  close(ps[1]);
  close(ofd);
  int child_errno = pid > 0 ? rock__child_status(ps[0]) : 0;
  close(ps[0]);
  int wrc = pid > 0 && !child_errno ? rock_procs_watch(pid, on_exit_cb, j) : 0;
  if (pid < 0 || child_errno || wrc) {
    int e = pid < 0 ? fork_errno : child_errno ? child_errno : -wrc;
    if (wrc) kill(pid, SIGKILL); /* reaped by procs.c, unwatched */
    if (j->own_file) unlink(j->output_file);
    if (o->cwd && e == ENOENT)
      snprintf(msg, msg_cap, "cwd '%s' or shell %s: %s", o->cwd, shell, strerror(e));
    else
      snprintf(msg, msg_cap, "shell %s: %s", shell, strerror(e));
    free_record(j);
    return wrc ? ROCK_E_NO_MEMORY : ROCK_E_SPAWN_FAILED;
  }
  counter = id;
  j->id = id;
  j->pid = pid;
  j->running = 1;
  j->started_at = now();
  j->prev = last;
  if (last) last->next = j;
  else first = j;
  last = j;
  *out = j;
  return 0;
}

rock_job_t *rock_jobs_find(unsigned long id) {
  for (rock_job_t *j = last; j; j = j->prev)
    if (j->id == id) return j;
  return NULL;
}

rock_job_t *rock_jobs_first(void) { return first; }

int rock_jobs_kill(rock_job_t *j, int sig) {
  if (!j->running) return 0;
  static pid_t tree[MAX_KILL];
  int n = rock_procs_collect(j->pid, j->pid, j->pid, 0, tree, MAX_KILL);
  rock_procs_signal(tree, n, sig);
  kill(-j->pid, sig);
  kill(j->pid, sig);
  return 1;
}

/* Read up to n bytes at off; returns the count read (short at EOF). */
static size_t read_at(int fd, char *p, size_t n, off_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, p + got, n - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  return got;
}

int rock_jobs_output(const rock_job_t *j, size_t max_output, rock_buf_t *out,
                     uint64_t *dropped, uint64_t *total) {
  *dropped = *total = 0;
  int fd = open(j->output_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    return 0;
  }
  uint64_t size = (uint64_t)st.st_size;
  int rc = 0;
  if (size <= max_output) {
    char *all = malloc(size + 1);
    if (!all) rc = -ENOMEM;
    else rc = rock_output_clean(out, all, read_at(fd, all, size, 0)) ? -ENOMEM : 0;
    free(all);
    *total = size;
  } else {
    size_t hn = max_output / 2, tn = max_output - hn;
    char *head = malloc(hn + 1), *tail = malloc(tn + 1);
    if (!head || !tail) {
      rc = -ENOMEM;
    } else {
      size_t h = read_at(fd, head, hn, 0);
      size_t t = read_at(fd, tail, tn, (off_t)(size - tn));
      rc = rock_capture_render_parts(out, head, h, tail, t, size, j->output_file, 0, dropped);
    }
    free(head);
    free(tail);
    *total = size;
  }
  close(fd);
  return rc;
}

void rock_jobs_free_all(void) {
  for (rock_job_t *j = first, *next; j; j = next) {
    next = j->next;
    free_record(j);
  }
  first = last = NULL;
  nfinished = 0;
}
