/* exec.c: /execute, one process outside any session.
 * command is a list (run as is, PATH searched) or a string (run by
 * /bin/sh -c). The process gets its own session and process group, stdin
 * /dev/null, stdout and stderr on pipes (each capped, head and tail kept),
 * optional cwd and env on top of the rocklet's, and a timeout after which its
 * whole tree is killed. The answer waits for exit and both pipes' EOF. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "procs.h"
#include "rocklet.h"

#define MAX_KILL 1024
#define DRAIN_MS 200

typedef struct {
  uv_pipe_t pipe;
  rock_capture_t cap;
  int open;
} stream_t;

typedef struct {
  rock_http_req_t *req;
  pid_t pid;
  int exited, wstatus, timed_out;
  stream_t out, err;
  uv_timer_t timer;
  int handles;
} job_t;

static void job_free(uv_handle_t *h) {
  job_t *j = h->data;
  if (--j->handles) return;
  rock_capture_free(&j->out.cap);
  rock_capture_free(&j->err.cap);
  free(j);
}

static json_t *render(stream_t *s) {
  rock_buf_t out = {0};
  uint64_t dropped;
  rock_capture_render(&s->cap, &out, &dropped);
  json_t *v = json_stringn(out.data ? out.data : "", out.len);
  rock_buf_free(&out);
  return v;
}

static void maybe_done(job_t *j) {
  if (!j->exited || j->out.open || j->err.open || !j->req) return;
  uv_timer_stop(&j->timer);
  int code = WIFEXITED(j->wstatus) ? WEXITSTATUS(j->wstatus)
                                   : 128 + WTERMSIG(j->wstatus);
  json_t *o = json_object();
  json_object_set_new(o, "stdout", render(&j->out));
  json_object_set_new(o, "stderr", render(&j->err));
  json_object_set_new(o, "exit_code", json_integer(code));
  json_object_set_new(o, "failure_reason", json_string(j->timed_out ? "timeout" : ""));
  rock_http_req_t *req = j->req;
  j->req = NULL;
  reply_json(req, o);
  uv_close((uv_handle_t *)&j->timer, job_free);
}

static void close_stream(stream_t *s) {
  if (!s->open) return;
  s->open = 0;
  uv_close((uv_handle_t *)&s->pipe, job_free);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf) {
  job_t *j = st->data;
  stream_t *s = (uv_pipe_t *)st == &j->out.pipe ? &j->out : &j->err;
  if (n > 0) rock_capture_add(&s->cap, buf->base, n);
  free(buf->base);
  if (n < 0) {
    close_stream(s);
    maybe_done(j);
  }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  (void)h;
  buf->base = malloc(hint);
  buf->len = buf->base ? hint : 0;
}

static void on_timeout(uv_timer_t *t);

static void on_exit_cb(void *data, pid_t pid, int wstatus) {
  job_t *j = data;
  (void)pid;
  j->exited = 1;
  j->wstatus = wstatus;
  /* a background grandchild holding the pipes must not keep us waiting
   * long: give them DRAIN_MS to reach EOF, then answer */
  if (j->out.open || j->err.open) uv_timer_start(&j->timer, on_timeout, DRAIN_MS, 0);
  maybe_done(j);
}

static void on_timeout(uv_timer_t *t) {
  job_t *j = t->data;
  if (j->exited) {
    close_stream(&j->out);
    close_stream(&j->err);
    maybe_done(j);
    return;
  }
  j->timed_out = 1;
  pid_t tree[MAX_KILL];
  int n = rock_procs_collect(j->pid, j->pid, j->pid, 0, tree, MAX_KILL);
  rock_procs_signal(tree, n, SIGKILL);
  kill(-j->pid, SIGKILL);
}

void exec_run(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  json_t *command = json_object_get(args, "command");
  double timeout = arg_number(args, "timeout", 0, &err);
  double cap = arg_number(args, "max_output", ROCKLET_DEFAULT_MAX_OUTPUT, &err);
  const char *cwd = arg_string(args, "cwd", 0, &err);
  json_t *env = json_object_get(args, "env");
  if (!err && !json_is_string(command) &&
      !(json_is_array(command) && json_array_size(command) > 0))
    err = strdup("field 'command' must be a string or a non-empty list");
  if (!err && env && !json_is_null(env) && !json_is_object(env))
    err = strdup("field 'env' must be an object of strings");
  if (!err && (timeout < 0 || cap < 64))
    err = strdup("'timeout' must be >= 0 and 'max_output' >= 64");
  size_t argc = json_is_array(command) ? json_array_size(command) : 3;
  char **argv = calloc(argc + 1, sizeof *argv);
  if (!err && json_is_array(command)) {
    for (size_t i = 0; i < argc; i++) {
      json_t *a = json_array_get(command, i);
      if (!json_is_string(a)) {
        err = strdup("every item of 'command' must be a string");
        break;
      }
      argv[i] = (char *)json_string_value(a);
    }
  } else if (!err) {
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *)json_string_value(command);
  }
  if (err) {
    free(argv);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  int po[2], pe[2], ps[2];
  if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(ps, O_CLOEXEC)) {
    free(argv);
    reply_error(req, ROCK_E_SPAWN_FAILED, "pipe: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    setsid();
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(po[1], 1);
    dup2(pe[1], 2);
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) {
      if (json_is_string(v)) setenv(k, json_string_value(v), 1);
    }
    int e = 0;
    if (cwd && chdir(cwd) != 0) e = errno;
    if (!e) {
      execvp(argv[0], argv);
      e = errno;
    }
    /* tell the parent why (status pipe), then exit like a shell would */
    if (write(ps[1], &e, sizeof e) < 0) _exit(127);
    _exit(e == ENOENT ? 127 : 126);
  }
  free(argv);
  close(po[1]);
  close(pe[1]);
  close(ps[1]);
  int child_errno = 0;
  if (pid > 0 && read(ps[0], &child_errno, sizeof child_errno) != sizeof child_errno)
    child_errno = 0;
  close(ps[0]);
  if (pid < 0 || child_errno) {
    close(po[0]);
    close(pe[0]);
    int e = pid < 0 ? errno : child_errno;
    reply_error(req, ROCK_E_SPAWN_FAILED, "%s %s: %s",
                cwd && e == ENOENT ? "cwd or command" : "command",
                json_is_string(command) ? "/bin/sh" :
                json_string_value(json_array_get(command, 0)), strerror(e));
    return;
  }
  job_t *j = calloc(1, sizeof *j);
  j->req = req;
  j->pid = pid;
  rock_capture_init(&j->out.cap, (size_t)cap, NULL);
  rock_capture_init(&j->err.cap, (size_t)cap, NULL);
  uv_pipe_init(rocklet.loop, &j->out.pipe, 0);
  uv_pipe_init(rocklet.loop, &j->err.pipe, 0);
  uv_timer_init(rocklet.loop, &j->timer);
  j->out.pipe.data = j->err.pipe.data = j->timer.data = j;
  j->handles = 3;
  uv_pipe_open(&j->out.pipe, po[0]);
  uv_pipe_open(&j->err.pipe, pe[0]);
  j->out.open = j->err.open = 1;
  uv_read_start((uv_stream_t *)&j->out.pipe, on_alloc, on_read);
  uv_read_start((uv_stream_t *)&j->err.pipe, on_alloc, on_read);
  rock_procs_watch(pid, on_exit_cb, j);
  if (timeout > 0) uv_timer_start(&j->timer, on_timeout, (uint64_t)(timeout * 1000), 0);
}
