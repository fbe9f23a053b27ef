/* envproc.c: process environments (see envproc.h). Each is one child
 * (child.c's spawn: its own session, killed with the rocklet) with three
 * pipes on the loop; procs.c reaps it. It lives in a list by id until
 * stopped, so a dead one still reports how it died. */
#include "envproc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/utf8.h"
#include "child.h"
#include "procs.h"
#include "rocklet.h"

#define MAX_KILL 1024
#define ENV_DEATH_MAX (ROCK_ENV_STDERR_TAIL + 1024) /* a death's message: the tail fits whole */

struct rock_envproc {
  rock_envproc_t *next;
  unsigned long id;
  pid_t pid;
  int exited, wstatus;
  int out_open, err_open, in_open, handles, stopped;
  uv_pipe_t in, out, err;
  uv_timer_t timer;
  /* the call under way */
  int pending;
  rock_envproc_fn fn;
  void *data;
  /* stdout's line being read */
  char *line;
  size_t len, cap;
  char broken[512]; /* how it broke the protocol, or "" */
  char tail[ROCK_ENV_STDERR_TAIL];
  size_t tail_len;
  const char *killed; /* why we killed it, or NULL */
};

static rock_envproc_t *envs;
static unsigned long next_id = 1;
static int count;

rock_envproc_t *rock_envproc_find(unsigned long id) {
  for (rock_envproc_t *p = envs; p; p = p->next)
    if (p->id == id) return p;
  return NULL;
}
unsigned long rock_envproc_id(const rock_envproc_t *p) { return p->id; }
pid_t rock_envproc_pid(const rock_envproc_t *p) { return p->pid; }
int rock_envproc_count(void) { return count; }

static void maybe_free(rock_envproc_t *p) {
  if (p->handles || !p->stopped || !p->exited) return;
  free(p->line);
  free(p);
}
static void on_close(uv_handle_t *h) {
  rock_envproc_t *p = h->data;
  p->handles--;
  maybe_free(p);
}
static void close_h(uv_handle_t *h, int *open) {
  if (!*open) return;
  *open = 0;
  uv_close(h, on_close);
}

static void finish(rock_envproc_t *p, json_t *answer, rock_err code, const char *msg) {
  if (!p->pending) {
    json_decref(answer);
    return;
  }
  p->pending = 0;
  uv_timer_stop(&p->timer);
  rock_envproc_fn fn = p->fn;
  p->fn = NULL;
  if (fn) fn(p->data, answer, code, msg);
  else json_decref(answer);
}

static void kill_tree(rock_envproc_t *p, const char *why) {
  if (!p->killed) p->killed = why;
  pid_t pids[MAX_KILL];
  int n = rock_procs_collect(p->pid, p->pid, p->exited ? 0 : p->pid, getpid(), pids, MAX_KILL);
  if (!p->exited) kill(p->pid, SIGKILL);
  rock_procs_signal(pids, n, SIGKILL);
}

/* How it ended, for a message: "exited with status 3" / "was killed by
 * signal 9", then why we killed it, the skipped lines and stderr's tail. */
static void death(rock_envproc_t *p, char *m, size_t cap) {
  int n;
  if (!p->exited) n = snprintf(m, cap, "the environment closed its stdout");
  else if (WIFEXITED(p->wstatus))
    n = snprintf(m, cap, "the environment exited with status %d", WEXITSTATUS(p->wstatus));
  else n = snprintf(m, cap, "the environment was killed by signal %d", WTERMSIG(p->wstatus));
  if (p->killed && n < (int)cap) n += snprintf(m + n, cap - n, " (%s)", p->killed);
  if (p->broken[0] && n < (int)cap) n += snprintf(m + n, cap - n, "; %s", p->broken);
  if (p->tail_len && n < (int)cap) {
    n += snprintf(m + n, cap - n, "; the end of its stderr:\n");
    /* valid UTF-8 only (the answer is JSON; the cut may split a character) */
    const unsigned char *t = (const unsigned char *)p->tail;
    for (size_t i = 0; i < p->tail_len && n + 5 < (int)cap;) {
      size_t k = rock_utf8_seq(t + i, p->tail_len - i);
      if (!k) m[n++] = '?', i++;
      else memcpy(m + n, t + i, k), n += (int)k, i += k;
    }
    m[n < (int)cap ? n : (int)cap - 1] = 0;
  } else if (n < (int)cap) {
    snprintf(m + n, cap - n, "; its stderr was empty");
  }
}

/* Dead once it exited and both its stdout and stderr reached EOF (so the
 * tail holds its last words); its tree is killed at its exit, so no
 * descendant keeps the pipes open. */
static void maybe_dead(rock_envproc_t *p) {
  if (!p->exited || p->out_open || p->err_open) return;
  close_h((uv_handle_t *)&p->in, &p->in_open);
  if (!p->pending) return;
  char m[ENV_DEATH_MAX];
  death(p, m, sizeof m);
  finish(p, NULL, ROCK_E_SANDBOX_NOT_ALIVE, m);
}

static void on_exit_cb(void *data, pid_t pid, int wstatus) {
  (void)pid;
  rock_envproc_t *p = data;
  p->exited = 1;
  p->wstatus = wstatus;
  kill_tree(p, p->killed); /* what it left holding our pipes */
  maybe_dead(p);
  maybe_free(p);
}

static void on_timeout(uv_timer_t *t) {
  rock_envproc_t *p = t->data;
  kill_tree(p, "killed: a call passed its timeout");
  finish(p, NULL, ROCK_E_TIMEOUT,
         "the environment did not answer within its timeout; it was killed");
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  (void)hint;
  rock_envproc_t *p = h->data;
  if ((uv_pipe_t *)h == &p->err) {
    static char ebuf[4096];
    *b = uv_buf_init(ebuf, sizeof ebuf);
    return;
  }
  if (p->cap - p->len < 65536) { /* the line grows to ROCK_ENV_MAX_LINE + 64 KiB at most */
    size_t nc = p->cap ? p->cap * 2 : 65536 * 2;
    if (nc > ROCK_ENV_MAX_LINE + 65536) nc = ROCK_ENV_MAX_LINE + 65536;
    char *n = nc > p->cap ? realloc(p->line, nc) : NULL;
    if (n) p->line = n, p->cap = nc;
  }
  if (p->cap == p->len) { /* no memory to grow: libuv's UV_ENOBUFS ends the read */
    *b = uv_buf_init(NULL, 0);
    return;
  }
  *b = uv_buf_init(p->line + p->len, p->cap - p->len);
}

/* It broke the protocol: say how (quoting the line's start), kill it, end
 * the call under way; later calls report it as its death. */
static void broke(rock_envproc_t *p, const char *what, const char *s, size_t n) {
  char q[96];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < sizeof q; i++) /* printable ASCII; the rest as '?' */
    q[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
  q[k] = 0;
  snprintf(p->broken, sizeof p->broken,
           "it broke the protocol: %s (its stdout is for answers only: one JSON object per "
           "line; write logs to stderr): \"%s%s\"",
           what, q, n > k ? "..." : "");
  kill_tree(p, "killed: it broke the protocol");
  close_h((uv_handle_t *)&p->out, &p->out_open);
  close_h((uv_handle_t *)&p->in, &p->in_open);
  char m[ENV_DEATH_MAX];
  snprintf(m, sizeof m, "the environment %s; it was killed", p->broken + 3);
  finish(p, NULL, ROCK_E_ENV_ERROR, m);
}

/* One line of its stdout (without the newline): the answer to the call. */
static void on_line(rock_envproc_t *p, const char *s, size_t n) {
  if (p->killed) return; /* being killed (a timeout, a stop): what it still says is moot */
  if (n && s[n - 1] == '\r') n--;
  if (!n) return; /* blank lines are allowed */
  json_error_t e;
  json_t *o = json_loadb(s, n, 0, &e);
  if (!json_is_object(o)) {
    char what[200];
    snprintf(what, sizeof what, "a line that is not a JSON object (%s)",
             o ? "another JSON value" : e.text);
    json_decref(o);
    broke(p, what, s, n);
  } else if (!p->pending) {
    json_decref(o);
    broke(p, "a line when no call was waiting for one", s, n);
  } else {
    finish(p, o, ROCK_E_OK, NULL);
  }
}

static void on_err_read(rock_envproc_t *p, const char *s, size_t n) {
  if (n >= sizeof p->tail) {
    memcpy(p->tail, s + n - sizeof p->tail, sizeof p->tail);
    p->tail_len = sizeof p->tail;
    return;
  }
  if (p->tail_len + n > sizeof p->tail) {
    size_t drop = p->tail_len + n - sizeof p->tail;
    memmove(p->tail, p->tail + drop, p->tail_len - drop);
    p->tail_len -= drop;
  }
  memcpy(p->tail + p->tail_len, s, n);
  p->tail_len += n;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
  rock_envproc_t *p = st->data;
  int is_err = (uv_pipe_t *)st == &p->err;
  if (n < 0) {
    if (is_err) {
      close_h((uv_handle_t *)&p->err, &p->err_open);
      maybe_dead(p);
    } else {
      if (n == UV_ENOBUFS) snprintf(p->broken, sizeof p->broken, "no memory for its answer");
      close_h((uv_handle_t *)&p->out, &p->out_open);
      maybe_dead(p);
    }
    return;
  }
  if (is_err) {
    on_err_read(p, b->base, (size_t)n);
    return;
  }
  if (n == 0 || !p->out_open) return;
  size_t from = p->len, done = 0; /* the new bytes are in place after the kept ones */
  p->len += (size_t)n;
  char *nl;
  while (p->out_open && (nl = memchr(p->line + from, '\n', p->len - from))) {
    size_t end = (size_t)(nl - p->line);
    on_line(p, p->line + done, end - done);
    done = from = end + 1;
  }
  if (!p->out_open) return;
  if (done) { /* keep the unfinished line's start, once per read */
    memmove(p->line, p->line + done, p->len - done);
    p->len -= done;
  }
  if (p->len > ROCK_ENV_MAX_LINE)
    broke(p, "a line longer than " ROCK_ENV_MAX_LINE_TEXT, p->line, p->len);
  if (p->len == 0 && p->cap > 65536 * 4) { /* give a flood's memory back */
    free(p->line);
    p->line = NULL, p->cap = 0;
  }
}

rock_err rock_envproc_start(char *const *argv, const char *const *env, const char *cwd,
                            rock_envproc_t **out, char *msg, size_t cap) {
  if (count >= ROCK_ENV_MAX) {
    snprintf(msg, cap, "%d environments are running: stop one first", count);
    return ROCK_E_CONFLICT;
  }
  rock_envproc_t *p = calloc(1, sizeof *p);
  char **envp = rock__child_env(env);
  int pi[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1}, e = 0;
  if (!p || !envp || pipe2(pi, O_CLOEXEC) || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
    e = errno;
    goto fail;
  }
  pid_t pid = rock__child_spawn(argv, envp, cwd, pi[0], po[1], pe[1], &e);
  if (envp != environ) free(envp);
  envp = NULL;
  close(pi[0]), close(po[1]), close(pe[1]);
  pi[0] = po[1] = pe[1] = -1;
  if (pid < 0) {
    snprintf(msg, cap, "cannot start %s: %s", argv[0], strerror(e));
    close(pi[1]), close(po[0]), close(pe[0]);
    free(p);
    return ROCK_E_SPAWN_FAILED;
  }
  if (rock_procs_watch(pid, on_exit_cb, p)) {
    kill(pid, SIGKILL);
    e = ENOMEM;
    goto fail;
  }
  p->pid = pid;
  p->id = next_id++;
  uv_loop_t *loop = rocklet.loop;
  uv_pipe_init(loop, &p->in, 0);
  uv_pipe_init(loop, &p->out, 0);
  uv_pipe_init(loop, &p->err, 0);
  uv_timer_init(loop, &p->timer);
  p->in.data = p->out.data = p->err.data = p->timer.data = p;
  uv_pipe_open(&p->in, pi[1]);
  uv_pipe_open(&p->out, po[0]);
  uv_pipe_open(&p->err, pe[0]);
  p->in_open = p->out_open = p->err_open = 1;
  p->handles = 4;
  uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
  uv_read_start((uv_stream_t *)&p->err, on_alloc, on_read);
  p->next = envs;
  envs = p;
  count++;
  *out = p;
  return ROCK_E_OK;
fail:
  snprintf(msg, cap, "cannot start an environment: %s", strerror(e));
  for (int i = 0; i < 2; i++) {
    if (pi[i] >= 0) close(pi[i]);
    if (po[i] >= 0) close(po[i]);
    if (pe[i] >= 0) close(pe[i]);
  }
  if (envp != environ) free(envp);
  free(p);
  return e == ENOMEM ? ROCK_E_NO_MEMORY : ROCK_E_SPAWN_FAILED;
}

typedef struct {
  uv_write_t w;
  char bytes[];
} wreq_t;
static void on_written(uv_write_t *w, int status) {
  (void)status; /* a dead reader: its death is reported by maybe_dead */
  free(w);
}

void rock_envproc_call(rock_envproc_t *p, const char *line, size_t len, double timeout,
                       rock_envproc_fn fn, void *data) {
  if (p->pending) {
    fn(data, NULL, ROCK_E_CONFLICT, "the environment is answering another call");
    return;
  }
  if (p->exited || !p->out_open || !p->in_open) {
    char m[ENV_DEATH_MAX];
    death(p, m, sizeof m);
    fn(data, NULL, ROCK_E_SANDBOX_NOT_ALIVE, m);
    return;
  }
  wreq_t *w = malloc(sizeof *w + len + 1);
  if (!w) {
    fn(data, NULL, ROCK_E_NO_MEMORY, "no memory for the call");
    return;
  }
  memcpy(w->bytes, line, len);
  w->bytes[len] = '\n';
  uv_buf_t b = uv_buf_init(w->bytes, (unsigned)len + 1);
  if (uv_write(&w->w, (uv_stream_t *)&p->in, &b, 1, on_written)) {
    free(w);
    fn(data, NULL, ROCK_E_IO, "cannot write to the environment's stdin");
    return;
  }
  p->pending = 1;
  p->fn = fn;
  p->data = data;
  uv_timer_start(&p->timer, on_timeout, (uint64_t)(timeout * 1000), 0);
}

/* The call stays under way (a next call is a conflict) until its answer
 * comes, which is dropped, or its timeout kills the environment: so an
 * answer is never taken for the next call's. */
void rock_envproc_forget(rock_envproc_t *p) { p->fn = NULL; }

void rock_envproc_stop(rock_envproc_t *p) {
  rock_envproc_t **pp = &envs;
  while (*pp && *pp != p) pp = &(*pp)->next;
  if (!*pp) return;
  *pp = p->next;
  count--;
  kill_tree(p, "stopped");
  finish(p, NULL, ROCK_E_CANCELLED, "the environment was stopped");
  p->stopped = 1;
  close_h((uv_handle_t *)&p->in, &p->in_open);
  close_h((uv_handle_t *)&p->out, &p->out_open);
  close_h((uv_handle_t *)&p->err, &p->err_open);
  int t = 1;
  close_h((uv_handle_t *)&p->timer, &t);
}

void rock_envproc_stop_all(void) {
  while (envs) rock_envproc_stop(envs);
}
