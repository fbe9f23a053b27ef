/* exec.c: one process outside any session (see exec.h). It is started
 * directly, argv as given (a string command is /bin/sh -c's argv): vfork
 * and execve in child.c, no copy of the rocklet's memory, no shell.
 * capture.c keeps each stream within its cap; procs.c reaps the child and
 * finds its tree to kill. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "child.h"
#include "procs.h"
#include "session.h"

extern char **environ;

#define MAX_KILL 1024
#define DRAIN_MS 200

typedef struct {
  uv_pipe_t pipe;
  rock_capture_t cap;
  int open;
  int direct; /* the read under way goes straight into cap (no copy) */
} stream_t;

struct rock_exec {
  rock_exec_done_fn done;
  void *data;
  pid_t pid;
  int exited, wstatus;
  const char *reason; /* why it was killed, or NULL */
  stream_t out, err;
  uv_timer_t timer;
  int handles;
  int raw;
};

static void job_free(uv_handle_t *h) {
  rock_exec_t *j = h->data;
  if (--j->handles) return;
  rock_capture_free(&j->out.cap);
  rock_capture_free(&j->err.cap);
  free(j);
}

static void maybe_done(rock_exec_t *j) {
  if (!j->exited || j->out.open || j->err.open || !j->done) return;
  uv_timer_stop(&j->timer);
  rock_exec_result_t r = {0};
  if (j->raw) {
    rock_capture_take_raw(&j->out.cap, &r.out, &r.out_dropped);
    rock_capture_take_raw(&j->err.cap, &r.err, &r.err_dropped);
  } else {
    rock_capture_render(&j->out.cap, &r.out, &r.out_dropped);
    rock_capture_render(&j->err.cap, &r.err, &r.err_dropped);
  }
  r.exit_code = WIFEXITED(j->wstatus) ? WEXITSTATUS(j->wstatus) : 128 + WTERMSIG(j->wstatus);
  r.failure_reason = j->reason ? j->reason : "";
  rock_exec_done_fn done = j->done;
  j->done = NULL;
  done(&r, j->data);
  rock_buf_free(&r.out);
  rock_buf_free(&r.err);
  uv_close((uv_handle_t *)&j->timer, job_free);
}

static void close_stream(stream_t *s) {
  if (!s->open) return;
  s->open = 0;
  uv_close((uv_handle_t *)&s->pipe, job_free);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  rock_exec_t *j = st->data;
  stream_t *s = (uv_pipe_t *)st == &j->out.pipe ? &j->out : &j->err;
  if (s->direct) {
    if (n > 0) rock_capture_commit(&s->cap, (size_t)n);
  } else {
    if (n > 0) rock_capture_add(&s->cap, buf->base, n);
    free(buf->base);
  }
  if (n < 0) {
    close_stream(s);
    maybe_done(j);
  }
}

/* Within the cap the pipe is read straight into the capture's buffer:
 * the one copy from the pipe to the answer. Past it, a buffer of its own
 * (its bytes go to the spill file and the ring). */
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  rock_exec_t *j = h->data;
  stream_t *s = (uv_pipe_t *)h == &j->out.pipe ? &j->out : &j->err;
  char *room = rock_capture_room(&s->cap, hint);
  s->direct = room != NULL;
  buf->base = room ? room : malloc(hint);
  buf->len = buf->base ? hint : 0;
}

static void on_timer(uv_timer_t *t);

static void on_exit_cb(void *data, pid_t pid, int wstatus) {
  rock_exec_t *j = data;
  (void)pid;
  j->exited = 1;
  j->wstatus = wstatus;
  /* a background grandchild holding the pipes must not keep us waiting
   * long: give them DRAIN_MS to reach EOF, then answer */
  if (j->out.open || j->err.open) uv_timer_start(&j->timer, on_timer, DRAIN_MS, 0);
  maybe_done(j);
}

void rock_exec_kill(rock_exec_t *j, const char *reason) {
  if (j->exited || !j->done) return;
  if (!j->reason) j->reason = reason;
  pid_t tree[MAX_KILL];
  int n = rock_procs_collect(j->pid, j->pid, j->pid, 0, tree, MAX_KILL);
  rock_procs_signal(tree, n, SIGKILL);
  kill(-j->pid, SIGKILL);
  kill(j->pid, SIGKILL);
}

static void on_timer(uv_timer_t *t) {
  rock_exec_t *j = t->data;
  if (j->exited) { /* the drain after exit is over */
    close_stream(&j->out);
    close_stream(&j->err);
    maybe_done(j);
    return;
  }
  rock_exec_kill(j, "timeout");
}

static void close_fds(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

rock_err rock_exec_run(uv_loop_t *loop, const rock_exec_opts_t *o,
                       rock_exec_done_fn done_cb, void *data,
                       rock_exec_t **out, char *msg, size_t msg_cap) {
  if (out) *out = NULL;
  if (!o->argv || !o->argv[0] || !(o->timeout >= 0 && o->timeout <= ROCK_SESSION_MAX_TIMEOUT) ||
      o->max_output < ROCK_SESSION_MIN_OUTPUT || o->max_output > ROCK_SESSION_MAX_OUTPUT) {
    snprintf(msg, msg_cap, "exec: no command, or timeout / max_output out of range");
    return ROCK_E_INVALID_ARGUMENT;
  }
  rock_exec_t *j = calloc(1, sizeof *j);
  if (!j) {
    snprintf(msg, msg_cap, "no memory for a job");
    return ROCK_E_NO_MEMORY;
  }
  int po[2] = {-1, -1}, pe[2] = {-1, -1};
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  char **envp = rock__child_env(o->env);
  if (null < 0 || !envp || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
    int e = !envp ? ENOMEM : errno;
    int fds[] = {po[0], po[1], pe[0], pe[1], null};
    close_fds(fds, 5);
    if (envp && envp != environ) free(envp);
    free(j);
    snprintf(msg, msg_cap, "pipe: %s", strerror(e));
    return e == ENOMEM ? ROCK_E_NO_MEMORY : ROCK_E_SPAWN_FAILED;
  }
  /* no shell, no copy of our memory: vfork + execve (child.c) */
  int e = 0;
  pid_t pid = rock__child_spawn(o->argv, envp, o->cwd, null, po[1], pe[1], &e);
  if (envp != environ) free(envp);
  int mine[] = {po[1], pe[1], null};
  close_fds(mine, 3);
  int wrc = pid > 0 ? rock_procs_watch(pid, on_exit_cb, j) : 0;
  if (pid < 0 || wrc) {
    int fds[] = {po[0], pe[0]};
    close_fds(fds, 2);
    if (wrc) e = -wrc, kill(pid, SIGKILL); /* reaped by procs.c, unwatched */
    free(j);
    snprintf(msg, msg_cap, "%s %s: %s", o->cwd && e == ENOENT ? "cwd or command" : "command",
             o->argv[0], strerror(e));
    return wrc ? ROCK_E_NO_MEMORY : ROCK_E_SPAWN_FAILED;
  }
  j->done = done_cb;
  j->data = data;
  j->pid = pid;
  j->raw = o->raw;
  rock_capture_init(&j->out.cap, o->max_output, NULL);
  rock_capture_init(&j->err.cap, o->max_output, NULL);
  uv_pipe_init(loop, &j->out.pipe, 0);
  uv_pipe_init(loop, &j->err.pipe, 0);
  uv_timer_init(loop, &j->timer);
  j->out.pipe.data = j->err.pipe.data = j->timer.data = j;
  j->handles = 3;
  uv_pipe_open(&j->out.pipe, po[0]);
  uv_pipe_open(&j->err.pipe, pe[0]);
  j->out.open = j->err.open = 1;
  uv_read_start((uv_stream_t *)&j->out.pipe, on_alloc, on_read);
  uv_read_start((uv_stream_t *)&j->err.pipe, on_alloc, on_read);
  if (o->timeout > 0) uv_timer_start(&j->timer, on_timer, (uint64_t)(o->timeout * 1000), 0);
  if (out) *out = j;
  return 0;
}
