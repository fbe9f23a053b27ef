/* session.c: long-lived bash sessions on a PTY (DESIGN.md "The bash session").
 *
 * bash runs interactive (job control on, no readline) in its own session,
 * with a PTY as its controlling terminal, stdout and stderr (prompts, job
 * notices: read and dropped) and two pipes: it reads command lines from
 * the command pipe (its stdin) and fd 253 is the write end of the output
 * pipe. A command is written to a file and bash is sent one line:
 *     . CMD </dev/null >&253 2>&253; printf MARKER(seq, $?) >&253
 * so the command's output and then its end marker come in order on one
 * pipe, and no byte of a round trip crosses the PTY (a PTY hop costs a
 * kernel worker wakeup each way). The rocklet reads the pipe as it fills:
 * marker.c splits off the marker, capture.c keeps the output (capped,
 * spilled to a file past the cap, so nothing is lost). Output written while
 * no command runs (a background job's) is dropped.
 * On timeout the foreground job's process group gets SIGINT, then every
 * process of that job (found through /proc) gets SIGKILL; bash and its state
 * survive, and a fresh marker line tells us when it is back at its prompt.
 * marker.c finds markers, output.c cleans and caps the output file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../core/log.h"
#include "capture.h"
#include "marker.h"
#include "procs.h"
#include "rocklet.h"

#define INTERRUPT_GRACE_MS 300 /* SIGINT -> SIGKILL of the job */
#define RESCUE_MS 3000         /* SIGKILL -> give up on the shell */
#define TICK_MS 10
#define MAX_KILL 1024
#define OUT_FD 253          /* bash's fd of the output pipe */
#define OUT_PIPE_SIZE (1 << 20)

enum phase { IDLE, RUNNING, INTERRUPTING };

typedef struct session {
  struct session *next;
  char name[256];
  char dir[1100];     /* holds cmd, and out.<seq> for outputs past the cap */
  pid_t pid;          /* bash: also its process group */
  int master;
  int cmd_fd;         /* dir/cmd, rewritten in place for each command */
  size_t cmd_len;     /* its length */
  int cmd_w;          /* the command pipe's write end (bash's stdin) */
  int out_r;          /* the output pipe's read end (bash writes to OUT_FD) */
  uv_poll_t poll;
  uv_poll_t out_poll;
  rock_capture_t cap; /* the output of the command in flight */
  int capturing;
  uv_timer_t timer;
  int handles_open;
  rock_marker_t marker;
  unsigned long seq;
  int ended, wstatus;
  /* the command in flight (req != NULL) */
  enum phase phase;
  rock_http_req_t *req;
  size_t max_output;
  const char *reason; /* why it is being interrupted */
  uint64_t deadline, interrupted_at;
  int remarked;
  pid_t kill_set[MAX_KILL];
  int nkill;
  rock_http_req_t *close_req; /* close_session waiting for bash to go */
} session_t;

static session_t *sessions;
static unsigned long session_counter;

static session_t *find(const char *name) {
  for (session_t *s = sessions; s; s = s->next)
    if (!strcmp(s->name, name)) return s;
  return NULL;
}

static void rmtree_flat(const char *dir) {
  /* session dirs hold plain files only */
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

static void handle_closed(uv_handle_t *h) {
  session_t *s = h->data;
  if (--s->handles_open) return;
  if (s->out_r >= 0) close(s->out_r);
  free(s);
}

static void on_marker(void *data, unsigned long seq, int status);

static void on_data(void *data, const char *p, size_t n) {
  session_t *s = data;
  if (s->capturing) rock_capture_add(&s->cap, p, n);
}

/* Read what the output pipe holds: output into the capture (dropped when
 * no command runs), a marker ends the command. */
static void drain_output(session_t *s) {
  char buf[65536];
  while (s->out_r >= 0) {
    ssize_t n = read(s->out_r, buf, sizeof buf);
    if (n > 0) {
      rock_marker_feed(&s->marker, buf, n, on_data, on_marker, s);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && !uv_is_closing((uv_handle_t *)&s->out_poll))
      uv_poll_stop(&s->out_poll); /* every writer is gone */
    return;
  }
}

static void on_output(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  drain_output(h->data);
}

/* Unlink the session and release it; bash must be gone or going. */
static void session_free(session_t *s) {
  session_t **pp = &sessions;
  while (*pp && *pp != s) pp = &(*pp)->next;
  if (*pp) *pp = s->next;
  rock_procs_unwatch(s->pid);
  if (s->capturing) rock_capture_free(&s->cap);
  s->capturing = 0;
  if (s->master >= 0) close(s->master);
  if (s->cmd_fd >= 0) close(s->cmd_fd);
  if (s->cmd_w >= 0) close(s->cmd_w);
  s->master = s->cmd_fd = s->cmd_w = -1;
  rmtree_flat(s->dir);
  uv_close((uv_handle_t *)&s->poll, handle_closed);
  uv_close((uv_handle_t *)&s->timer, handle_closed);
  uv_close((uv_handle_t *)&s->out_poll, handle_closed); /* closes out_r after */
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    p += w;
    n -= w;
  }
  return 0;
}

/* Send bash one line on its command pipe. Lines are short and the pipe
 * holds 64 KiB, so the non-blocking write nearly always takes it all; if
 * not (bash is not reading), finish the line blocking: it is never more
 * than two. */
static int send_line(session_t *s, const char *line) {
  if (s->cmd_w < 0) return -EIO;
  size_t n = strlen(line);
  ssize_t w = write(s->cmd_w, line, n);
  if (w == (ssize_t)n) return 0;
  if (w < 0 && errno != EAGAIN && errno != EINTR) return -errno;
  if (w < 0) w = 0;
  int fl = fcntl(s->cmd_w, F_GETFL);
  fcntl(s->cmd_w, F_SETFL, fl & ~O_NONBLOCK);
  int rc = write_all(s->cmd_w, line + w, n - w);
  fcntl(s->cmd_w, F_SETFL, fl);
  return rc;
}

/* Answer the command in flight with the output captured for it. */
static void finish(session_t *s, int have_status, int status,
                   const char *reason) {
  rock_http_req_t *req = s->req;
  if (!req) return;
  s->req = NULL;
  s->phase = IDLE;
  uv_timer_stop(&s->timer);
  if (s->nkill) { /* whatever of the killed job is left goes now */
    rock_procs_signal(s->kill_set, s->nkill, SIGKILL);
    s->nkill = 0;
  }
  rock_buf_t out = {0};
  uint64_t dropped = 0, total = s->cap.total;
  int rc = rock_capture_render(&s->cap, &out, &dropped);
  int spilled = dropped && rock_capture_spilled(&s->cap);
  json_t *file = spilled ? json_string(s->cap.spill_path) : json_null();
  rock_capture_free(&s->cap);
  s->capturing = 0;
  if (rc < 0) {
    rock_buf_free(&out);
    json_decref(file);
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for the output");
    return;
  }
  json_t *o = json_object();
  json_object_set_new(o, "output", json_stringn(out.data ? out.data : "", out.len));
  json_object_set_new(o, "exit_code",
                      have_status ? json_integer(status) : json_null());
  json_object_set_new(o, "failure_reason", json_string(reason));
  json_object_set_new(o, "truncated", json_boolean(dropped > 0));
  json_object_set_new(o, "dropped_bytes", json_integer((json_int_t)dropped));
  json_object_set_new(o, "output_bytes", json_integer((json_int_t)total));
  json_object_set_new(o, "output_file", file);
  json_object_set_new(o, "session_type", json_string("bash"));
  rock_buf_free(&out);
  reply_json(req, o);
}

static void on_marker(void *data, unsigned long seq, int status) {
  session_t *s = data;
  if (!s->req || seq != s->seq) return; /* a late duplicate */
  finish(s, 1, status, s->phase == INTERRUPTING ? s->reason : "");
}

/* What bash prints on its terminal (prompts, job notices) is read and
 * dropped, so it never blocks on a full tty queue. */
static void on_pty(uv_poll_t *h, int status, int events) {
  session_t *s = h->data;
  char buf[65536];
  (void)status;
  (void)events;
  for (;;) {
    ssize_t n = s->master >= 0 ? read(s->master, buf, sizeof buf) : -1;
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    uv_poll_stop(h); /* EIO: bash and its tty are gone */
    return;
  }
}

static void on_bash_exit(void *data, pid_t pid, int wstatus) {
  session_t *s = data;
  (void)pid;
  s->ended = 1;
  s->wstatus = wstatus;
  int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  /* drain what bash wrote last: a marker may be in there */
  if (s->req) drain_output(s);
  if (s->req) {
    finish(s, 1, code, s->phase == INTERRUPTING ? s->reason : "session_ended");
  }
  /* the shell's jobs (background ones too) go with it, as on a hangup */
  pid_t left[MAX_KILL];
  int n = rock_procs_collect(s->pid, s->pid, 0, 0, left, MAX_KILL);
  rock_procs_signal(left, n, SIGKILL);
  rock_http_req_t *cr = s->close_req;
  s->close_req = NULL;
  session_free(s);
  if (cr) reply_json(cr, json_pack("{s:s}", "session_type", "bash"));
}

static uint64_t now_ms(void) { return uv_now(rocklet.loop); }

/* Begin the interrupt of the command in flight (timeout or /interrupt). */
static void interrupt_start(session_t *s, const char *reason) {
  if (s->phase != RUNNING) return;
  s->phase = INTERRUPTING;
  s->reason = reason;
  s->interrupted_at = now_ms();
  s->remarked = 0;
  pid_t fg = s->master >= 0 ? tcgetpgrp(s->master) : -1;
  if (fg > 0 && fg != s->pid) {
    s->nkill = rock_procs_collect(fg, 0, 0, s->pid, s->kill_set, MAX_KILL);
    kill(-fg, SIGINT);
  } else {
    /* a builtin (loop) runs in bash itself; its children are in bash's
     * group or in job groups of their own, all descendants of bash */
    s->nkill = 0;
    pid_t kids[MAX_KILL];
    int n = rock_procs_collect(0, 0, s->pid, s->pid, kids, MAX_KILL);
    for (int i = 0; i < n; i++)
      if (getpgid(kids[i]) == s->pid) s->kill_set[s->nkill++] = kids[i];
    kill(s->pid, SIGINT);
  }
}

static void tick(uv_timer_t *t);

static void arm(session_t *s) { uv_timer_start(&s->timer, tick, TICK_MS, 0); }

/* The timer: deadline while RUNNING, interrupt steps while INTERRUPTING. */
static void tick(uv_timer_t *t) {
  session_t *s = t->data;
  if (!s->req) return;
  uint64_t now = now_ms();
  if (s->phase == RUNNING) {
    if (s->deadline && now >= s->deadline) {
      interrupt_start(s, "timeout");
      arm(s);
      return;
    }
    uv_timer_start(&s->timer, tick, s->deadline - now, 0);
    return;
  }
  /* INTERRUPTING */
  pid_t fg = s->master >= 0 ? tcgetpgrp(s->master) : -1;
  uint64_t since = now - s->interrupted_at;
  if (!s->remarked && (fg == s->pid || since >= INTERRUPT_GRACE_MS)) {
    if (since >= INTERRUPT_GRACE_MS) { /* SIGINT was not enough */
      rock_procs_signal(s->kill_set, s->nkill, SIGKILL);
      if (fg > 0 && fg != s->pid) kill(-fg, SIGKILL);
    }
    /* the interrupted line prints no marker: ask for one on a new line */
    char line[256];
    int n = rock_marker_command(&s->marker, line, sizeof line - 2, s->seq, "130", OUT_FD);
    line[n] = '\n';
    line[n + 1] = 0;
    send_line(s, line);
    s->remarked = 1;
  }
  if (since >= RESCUE_MS) {
    rock_log(ROCK_LOG_WARN, "session", "msg=\"shell did not come back, killing it\" session=%s",
             s->name);
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
    return; /* on_bash_exit answers */
  }
  arm(s);
}

/* Start the next command: write its file, send bash the line. The command
 * file stays open and is rewritten in place (pwrite, then ftruncate when it
 * got shorter, never to 0): truncating a file to 0 and rewriting it makes
 * ext4 flush it at close (auto_da_alloc, ~170 us). */
static int launch(session_t *s, const char *script, size_t len,
                  double timeout) {
  char path[PATH_MAX], out[PATH_MAX + 32], mark[256];
  s->seq++;
  snprintf(path, sizeof path, "%s/cmd", s->dir);
  for (size_t off = 0; off < len;) {
    ssize_t w = pwrite(s->cmd_fd, script + off, len - off, off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    off += w;
  }
  /* shrink it only when the old command was longer (a syscall saved) */
  if (len < s->cmd_len && ftruncate(s->cmd_fd, len) < 0) return -errno;
  s->cmd_len = len;
  drain_output(s); /* what came before this command is not its output */
  snprintf(out, sizeof out, "%s/out.%lu", s->dir, s->seq);
  rock_capture_init(&s->cap, s->max_output, out);
  s->capturing = 1;
  rock_marker_command(&s->marker, mark, sizeof mark, s->seq, "$?", OUT_FD);
  char line[PATH_MAX + 512];
  snprintf(line, sizeof line, " . '%s' </dev/null >&%d 2>&%d; %s\n", path,
           OUT_FD, OUT_FD, mark);
  s->phase = RUNNING;
  s->deadline = timeout > 0 ? now_ms() + (uint64_t)(timeout * 1000) : 0;
  if (s->deadline) uv_timer_start(&s->timer, tick, (uint64_t)(timeout * 1000), 0);
  return send_line(s, line);
}

static const char *find_bash(char *buf, size_t cap) {
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

static void shell_quote(rock_buf_t *b, const char *s) {
  rock_buf_append(b, "'", 1);
  for (; *s; s++) {
    if (*s == '\'') rock_buf_append(b, "'\\''", 4);
    else rock_buf_append(b, s, 1);
  }
  rock_buf_append(b, "'", 1);
}

static const char *defaults[][2] = {
    {"PAGER", "cat"},       {"GIT_PAGER", "cat"},      {"MANPAGER", "cat"},
    {"SYSTEMD_PAGER", ""},  {"LESS", "-R"},            {"TQDM_DISABLE", "1"},
    {"PIP_PROGRESS_BAR", "off"}, {"TERM", "dumb"},     {"PYTHONUNBUFFERED", "1"},
    {"DEBIAN_FRONTEND", "noninteractive"},
};

/* Fork bash on a new PTY. Returns 0 or -errno; the child never returns. */
static int spawn_bash(session_t *s, const char *bash, json_t *env,
                      const char *cwd) {
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -errno;
  if (grantpt(m) || unlockpt(m)) {
    int e = -errno;
    close(m);
    return e;
  }
  char slave[128];
  if (ptsname_r(m, slave, sizeof slave)) {
    int e = -errno;
    close(m);
    return e;
  }
  int po[2], cp[2]; /* output pipe, command pipe */
  if (pipe2(po, O_CLOEXEC)) {
    int e = -errno;
    close(m);
    return e;
  }
  if (pipe2(cp, O_CLOEXEC)) {
    int e = -errno;
    close(m);
    close(po[0]);
    close(po[1]);
    return e;
  }
  fcntl(po[0], F_SETPIPE_SZ, OUT_PIPE_SIZE); /* fewer wakeups for big outputs */
  pid_t pid = fork();
  if (pid < 0) {
    int e = -errno;
    close(m);
    close(po[0]);
    close(po[1]);
    close(cp[0]);
    close(cp[1]);
    return e;
  }
  if (pid == 0) {
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    setsid();
    int sl = open(slave, O_RDWR);
    if (sl < 0) _exit(127);
    ioctl(sl, TIOCSCTTY, 0);
    struct termios t;
    if (tcgetattr(sl, &t) == 0) {
      t.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL | ECHOKE);
      t.c_oflag &= ~ONLCR;
      tcsetattr(sl, TCSANOW, &t);
    }
    struct winsize ws = {.ws_row = 50, .ws_col = 200};
    ioctl(sl, TIOCSWINSZ, &ws);
    /* the output pipe at OUT_FD, commands on stdin, the tty on 1 and 2, in
     * an order where no dup2 overwrites a pipe end still to be moved; the
     * pipes' fds are CLOEXEC, their copies not (dup2 clears the flag) */
    if (po[1] == OUT_FD) fcntl(OUT_FD, F_SETFD, 0);
    else dup2(po[1], OUT_FD);
    if (cp[0] == 0) fcntl(0, F_SETFD, 0);
    else dup2(cp[0], 0);
    dup2(sl, 1);
    dup2(sl, 2);
    if (sl > 2) close(sl);
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
      setenv(defaults[i][0], defaults[i][1], 1);
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) {
      if (json_is_string(v)) setenv(k, json_string_value(v), 1);
    }
    unsetenv("HISTFILE");
    if (cwd && chdir(cwd) != 0) _exit(126);
    execl(bash, "bash", "--noprofile", "--norc", "--noediting", "-i", (char *)NULL);
    _exit(127);
  }
  close(po[1]);
  close(cp[0]);
  s->pid = pid;
  s->master = m;
  s->out_r = po[0];
  s->cmd_w = cp[1];
  fcntl(cp[1], F_SETFL, fcntl(cp[1], F_GETFL) | O_NONBLOCK);
  fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
  fcntl(po[0], F_SETFL, fcntl(po[0], F_GETFL) | O_NONBLOCK);
  return 0;
}

void session_create(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *name = arg_string(args, "session", 0, &err);
  const char *cwd = arg_string(args, "cwd", 0, &err);
  json_t *env = json_object_get(args, "env");
  json_t *sources = json_object_get(args, "startup_source");
  double startup_timeout = arg_number(args, "startup_timeout", 60, &err);
  if (!name) name = "default";
  if (!err && env && !json_is_null(env) && !json_is_object(env))
    err = strdup("field 'env' must be an object of strings");
  if (!err && sources && !json_is_null(sources) && !json_is_array(sources))
    err = strdup("field 'startup_source' must be a list of paths");
  if (!err && (!*name || strlen(name) >= sizeof ((session_t *)0)->name))
    err = strdup("field 'session' must be a non-empty name under 256 bytes");
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  if (find(name)) {
    reply_error(req, ROCK_E_SESSION_EXISTS, "session '%s' already exists", name);
    return;
  }
  char bash[PATH_MAX];
  if (!find_bash(bash, sizeof bash)) {
    reply_error(req, ROCK_E_NO_BASH,
                "no bash in this sandbox (PATH=%s): sessions need bash; "
                "/execute still works",
                getenv("PATH") ? getenv("PATH") : "");
    return;
  }
  session_t *s = calloc(1, sizeof *s);
  if (!s) {
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for a session");
    return;
  }
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->dir, sizeof s->dir, "%s/sessions/s%lu", rocklet.dir,
           ++session_counter);
  s->master = s->cmd_fd = s->out_r = s->cmd_w = -1;
  s->max_output = ROCKLET_DEFAULT_MAX_OUTPUT;
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s/sessions", rocklet.dir);
  mkdir(parent, 0700);
  char cmd_path[PATH_MAX];
  snprintf(cmd_path, sizeof cmd_path, "%s/cmd", s->dir);
  if ((mkdir(s->dir, 0700) && errno != EEXIST) ||
      (s->cmd_fd = open(cmd_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
    reply_error(req, ROCK_E_IO, "creating %s: %s", cmd_path, strerror(errno));
    rmtree_flat(s->dir);
    free(s);
    return;
  }
  /* nonce: secret per session, from the kernel's random source */
  unsigned char rnd[ROCK_NONCE_LEN / 2];
  char nonce[ROCK_NONCE_LEN + 1];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, rnd, sizeof rnd) != (ssize_t)sizeof rnd) {
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (unsigned char)(rand() ^ getpid() ^ i);
  }
  if (fd >= 0) close(fd);
  for (size_t i = 0; i < sizeof rnd; i++) sprintf(nonce + 2 * i, "%02x", rnd[i]);
  rock_marker_init(&s->marker, nonce);

  /* the init script: quiet prompt, then the startup files, then prompts
   * again (a sourced rc file likes to set PS1 and PROMPT_COMMAND) */
  static const char quiet[] =
      "PS1=''; PS2=''; PS0=''; PS4='+ '; PROMPT_COMMAND=''; unset HISTFILE; "
      "set +o history 2>/dev/null; set +H 2>/dev/null\n";
  rock_buf_t init = {0};
  rock_buf_append(&init, quiet, sizeof quiet - 1);
  size_t i;
  json_t *src;
  json_array_foreach(sources, i, src) {
    if (!json_is_string(src)) continue;
    rock_buf_append(&init, ". ", 2);
    shell_quote(&init, json_string_value(src));
    rock_buf_append(&init, "\n", 1);
  }
  rock_buf_append(&init, quiet, sizeof quiet - 1);

  int rc = spawn_bash(s, bash, env, cwd);
  if (rc) {
    rock_buf_free(&init);
    close(s->cmd_fd);
    rmtree_flat(s->dir);
    free(s);
    reply_error(req, ROCK_E_SPAWN_FAILED, "starting bash: %s", strerror(-rc));
    return;
  }
  uv_poll_init(rocklet.loop, &s->poll, s->master);
  uv_poll_init(rocklet.loop, &s->out_poll, s->out_r);
  uv_timer_init(rocklet.loop, &s->timer);
  s->poll.data = s->timer.data = s->out_poll.data = s;
  s->handles_open = 3;
  s->next = sessions;
  sessions = s;
  rock_procs_watch(s->pid, on_bash_exit, s);
  uv_poll_start(&s->poll, UV_READABLE, on_pty);
  uv_poll_start(&s->out_poll, UV_READABLE, on_output);
  s->req = req;
  rc = launch(s, init.data, init.len, startup_timeout);
  rock_buf_free(&init);
  if (rc) {
    s->req = NULL;
    reply_error(req, ROCK_E_IO, "talking to bash: %s", strerror(-rc));
    kill(s->pid, SIGKILL);
  }
}

static session_t *session_arg(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *name = arg_string(args, "session", 0, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return NULL;
  }
  if (!name) name = "default";
  session_t *s = find(name);
  if (!s || s->ended || s->close_req)
    reply_error(req, ROCK_E_SESSION_NOT_FOUND, "no session named '%s'", name);
  return s && !s->ended && !s->close_req ? s : NULL;
}

void session_run(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *cmd = arg_string(args, "command", 1, &err);
  double timeout = arg_number(args, "timeout", 0, &err);
  double max_output = arg_number(args, "max_output", ROCKLET_DEFAULT_MAX_OUTPUT, &err);
  if (!err && (timeout < 0 || max_output < 64))
    err = strdup("'timeout' must be >= 0 and 'max_output' >= 64");
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  session_t *s = session_arg(req, args);
  if (!s) return;
  if (s->req) {
    reply_error(req, ROCK_E_SESSION_BUSY,
                "session '%s' is still running a command", s->name);
    return;
  }
  s->req = req;
  s->max_output = (size_t)max_output;
  size_t len = strlen(cmd);
  char *script = malloc(len + 2);
  memcpy(script, cmd, len);
  script[len] = '\n'; /* a last line without newline is still a line */
  int rc = launch(s, script, len + 1, timeout);
  free(script);
  if (rc) {
    s->req = NULL;
    s->phase = IDLE;
    reply_error(req, ROCK_E_IO, "talking to bash: %s", strerror(-rc));
  }
}

void session_interrupt(rock_http_req_t *req, json_t *args) {
  session_t *s = session_arg(req, args);
  if (!s) return;
  int running = s->req && s->phase == RUNNING;
  if (running) {
    interrupt_start(s, "interrupted");
    arm(s);
  }
  reply_json(req, json_pack("{s:b}", "interrupted", running));
}

void session_close(rock_http_req_t *req, json_t *args) {
  session_t *s = session_arg(req, args);
  if (!s) return;
  s->close_req = req;
  pid_t pids[MAX_KILL];
  int n = rock_procs_collect(s->pid, s->pid, s->pid, s->pid, pids, MAX_KILL);
  rock_procs_signal(pids, n, SIGKILL);
  kill(s->pid, SIGKILL); /* on_bash_exit answers once it is reaped */
}

void sessions_close_all(void) {
  while (sessions) {
    session_t *s = sessions;
    if (s->req) reply_error(s->req, ROCK_E_SESSION_ENDED, "rocklet is shutting down");
    s->req = NULL;
    if (s->close_req) reply_json(s->close_req, json_pack("{s:s}", "session_type", "bash"));
    s->close_req = NULL;
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
    session_free(s);
  }
}
