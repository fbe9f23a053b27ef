/* session.c: a bash session's life and its commands (see session.h).
 *
 * bash (bash.c) reads lines on its command pipe. A command is written to
 * DIR/cmd and bash is sent one line:
 *     . 'DIR/cmd' </dev/null >&253 2>&253; printf MARK >&254; exec 253>&254
 * so the command's output and then its end marker come in order on one
 * pipe, and no byte of a round trip crosses the PTY. fd 254 is used by the
 * marker only and restores 253 after every command, so a command that
 * closes 253 still gets its answer and the next one its output fd. The
 * rocklet reads the pipe as it fills:
 * marker.c splits off the marker, capture.c keeps the output. Output
 * written while no command runs (a background job's) is dropped.
 * Interrupt (timeout, rock_session_interrupt): the foreground job's process
 * group gets SIGINT, then every process of that job (found through /proc)
 * SIGKILL; bash and its state survive, and a fresh marker line tells us
 * when it is back at its prompt (an interrupt aborts the rest of a line). */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/log.h"
#include "bash.h"
#include "capture.h"
#include "marker.h"
#include "procs.h"

#define INTERRUPT_GRACE_MS 300 /* SIGINT -> SIGKILL of the job */
#define RESCUE_MS 3000         /* SIGKILL -> give up on the shell */
#define TICK_MS 10
#define MAX_KILL 1024
/* what ends every line: fd 253 restored from the marker's copy, after the
 * marker, so off the round trip (bash reads the next line after it). The
 * line's words are quoted or \builtin-qualified so a command's aliases and
 * functions (printf() {...}, alias .=true) never stand in for them; bash
 * reads its input a byte at a time, so each costs a syscall per byte. */
#define RESTORE "; \\exec 253>&254\n"

enum phase { IDLE, RUNNING, INTERRUPTING };

struct rock_session {
  uv_loop_t *loop;
  char dir[PATH_MAX];  /* holds cmd, and out.<seq> for outputs past the cap */
  char cmd_path[PATH_MAX + 8];
  char src_path[PATH_MAX + 8]; /* what bash sources: cmd_path, or by fd */
  rock_buf_t line;     /* the line's fixed part, up to the marker */
  rock_bash_t bash;
  int cmd_fd;          /* dir/cmd, rewritten in place for each command */
  size_t cmd_len;      /* its length */
  uv_poll_t pty_poll, out_poll;
  uv_timer_t timer;
  int handles_open;
  rock_marker_t marker;
  unsigned long seq;
  int ended, closing, killing, lost_output;
  int start_failed;    /* the startup could not be sent (why says why) */
  char why[160];       /* the last failure to write a command */
  rock_session_end_fn on_end;
  void *end_data;
  /* the run in flight (done != NULL) */
  rock_session_done_fn done;
  void *done_data;
  int starting;        /* the run is the startup */
  enum phase phase;
  rock_capture_t cap;
  int capturing;
  size_t max_output;
  int raw;             /* the run's output as it came, not cleaned */
  const char *reason;  /* why it is being interrupted */
  uint64_t deadline, interrupted_at;
  int remarked;
  pid_t kill_set[MAX_KILL];
  int nkill;
};

static void rmtree_flat(const char *dir) {
  DIR *d = opendir(dir); /* session dirs hold plain files only */
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX + 256];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

static void shell_quote(rock_buf_t *b, const char *s) {
  rock_buf_append(b, "'", 1);
  for (; *s; s++) {
    if (*s == '\'') rock_buf_append(b, "'\\''", 4);
    else rock_buf_append(b, s, 1);
  }
  rock_buf_append(b, "'", 1);
}

static void handle_closed(uv_handle_t *h) {
  rock_session_t *s = h->data;
  if (--s->handles_open) return;
  /* the polled fds close after their handles (libuv: never under a poll) */
  if (s->bash.master >= 0) close(s->bash.master);
  if (s->bash.out_r >= 0) close(s->bash.out_r);
  free(s);
}

/* The end of a line: the marker with status_expr on fd 254, then fd 253
 * restored from it. bash reads its input a byte at a time, so every byte
 * here costs a syscall per command: the line a command is sent on stays
 * short. A command that closed 254 gets no marker from it (an error on the
 * PTY instead); its run ends by timeout or interrupt, whose fresh marker
 * line (rescue) falls back to 253 and restores 254 from it, so the session
 * goes on instead of its shell being killed (issue 7, hostile round). With
 * both closed no marker can come: the pipe's end tells on_output so. */
#define LINE_END_MAX 512
static size_t line_end(rock_session_t *s, char *out, size_t cap, const char *status_expr,
                       int rescue) {
  int n = rock_marker_command(&s->marker, out, cap, s->seq, status_expr, ROCK_BASH_MARK_FD);
  if (rescue) {
    n += snprintf(out + n, cap - n, " || { ");
    n += rock_marker_command(&s->marker, out + n, cap - n, s->seq, "$_", ROCK_BASH_OUT_FD);
    n += snprintf(out + n, cap - n, "; exec %d>&%d; }", ROCK_BASH_MARK_FD, ROCK_BASH_OUT_FD);
  }
  n += snprintf(out + n, cap - n, RESTORE);
  return (size_t)n;
}

/* ---- answering a run --------------------------------------------------- */

/* bash names the command file in its own messages ("bash: DIR/cmd: line 1:
 * syntax error ..."); for typed input it says "bash: line 1: ...". Say
 * what a user typing the command would read. */
static void hide_cmd_path(rock_session_t *s, rock_buf_t *out) {
  size_t pl = strlen(s->src_path);
  char pat[PATH_MAX + 16];
  int n = snprintf(pat, sizeof pat, "%s: line ", s->src_path);
  if (!out->len || n >= (int)sizeof pat) return;
  char *w = out->data, *r = out->data, *end = out->data + out->len, *hit;
  while ((hit = memmem(r, end - r, pat, n))) {
    memmove(w, r, hit - r);
    w += hit - r;
    r = hit + pl + 2; /* keep "line " */
  }
  if (r == out->data) return;
  memmove(w, r, end - r);
  w += end - r;
  out->len = w - out->data;
  out->data[out->len] = 0;
}

/* End the run in flight with its captured output. */
static void finish(rock_session_t *s, rock_err err, int have_status,
                   int status, const char *reason, const char *msg) {
  rock_session_done_fn done = s->done;
  if (!done) return;
  s->done = NULL;
  s->phase = IDLE;
  uv_timer_stop(&s->timer);
  if (s->nkill) { /* whatever of the killed job is left goes now */
    rock_procs_signal(s->kill_set, s->nkill, SIGKILL);
    s->nkill = 0;
  }
  rock_session_result_t r = {0};
  r.err = err;
  if (msg) snprintf(r.message, sizeof r.message, "%s", msg);
  uint64_t dropped = 0;
  int rrc = s->raw ? rock_capture_take_raw(&s->cap, &r.output, &dropped)
                   : rock_capture_render(&s->cap, &r.output, &dropped);
  if (rrc < 0 && !r.err) {
    r.err = ROCK_E_NO_MEMORY;
    snprintf(r.message, sizeof r.message, "no memory for the output");
  }
  hide_cmd_path(s, &r.output);
  r.have_status = have_status;
  r.exit_code = status;
  r.failure_reason = reason ? reason : ""; /* a string, always */
  r.truncated = dropped > 0;
  r.dropped_bytes = dropped;
  r.output_bytes = s->cap.total;
  if (dropped && rock_capture_spilled(&s->cap)) {
    snprintf(r.output_path, sizeof r.output_path, "%s", s->cap.spill_path);
    r.output_file = r.output_path;
  }
  int failed_start = s->starting && r.err;
  s->starting = 0;
  /* the capture is done with before done runs: it may start the next run */
  rock_capture_free(&s->cap);
  s->capturing = 0;
  done(s, &r, s->done_data);
  rock_buf_free(&r.output);
  if (failed_start) rock_session_close(s); /* no session: on_end follows */
}

/* Once a close has begun (killing), the run's end is bash's exit:
 * "session_ended", or the startup's error. A marker read after that is
 * ignored: it may come from bash that ran on between the close's kill of
 * its children and its own (a startup past its deadline whose `sleep` was
 * killed first then "finished"), or sat unread when the close came. */
static void on_marker(void *data, unsigned long seq, int status) {
  rock_session_t *s = data;
  if (!s->done || seq != s->seq || s->killing) return; /* late, or closing */
  finish(s, 0, 1, status, s->phase == INTERRUPTING ? s->reason : "", NULL);
}

static void on_data(void *data, const char *p, size_t n) {
  rock_session_t *s = data;
  if (s->capturing) rock_capture_add(&s->cap, p, n);
}

/* Is bash on its way out (exiting or a zombie)? Its fds close before it
 * becomes a zombie, so EOF on the pipe may come first: PF_EXITING (0x4 in
 * /proc/PID/stat's flags) is set before. Without /proc, say yes. */
static int bash_exiting(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 1;
  buf[n] = 0;
  char *p = strrchr(buf, ')'), state;
  unsigned long flags = 0;
  /* ") S ppid pgrp session tty_nr tpgid flags" */
  if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2) return 1;
  return state == 'Z' || state == 'X' || (flags & 0x4);
}

/* Read what the output pipe holds: output into the capture (dropped when
 * no command runs); a marker ends the command. */
static void drain_output(rock_session_t *s) {
  char buf[65536];
  while (s->bash.out_r >= 0 && !s->lost_output) {
    ssize_t n = read(s->bash.out_r, buf, sizeof buf);
    if (n > 0) {
      rock_marker_feed(&s->marker, buf, n, on_data, on_marker, s);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      /* every writer is gone while bash lives: a command closed both of
       * its output fds, so no marker can come; end the session (clearly
       * ended beats never answering) */
      if (!uv_is_closing((uv_handle_t *)&s->out_poll)) uv_poll_stop(&s->out_poll);
      if (s->ended || s->killing || bash_exiting(s->bash.pid)) return;
      s->lost_output = 1;
      {
        rock_log(ROCK_LOG_WARN, "session",
                 "msg=\"bash closed its output fds; ending the session\" dir=\"%s\"", s->dir);
        rock_session_close(s);
      }
    }
    return;
  }
}

static void on_output(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  drain_output(h->data);
}

/* What bash prints on its terminal (prompts, job notices) is read and
 * dropped, so it never blocks on a full tty queue. */
static void on_pty(uv_poll_t *h, int status, int events) {
  rock_session_t *s = h->data;
  char buf[65536];
  (void)status;
  (void)events;
  for (;;) {
    ssize_t n = s->bash.master >= 0 ? read(s->bash.master, buf, sizeof buf) : -1;
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    uv_poll_stop(h); /* EIO: bash and its tty are gone */
    return;
  }
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
static int send_line(rock_session_t *s, const char *line, size_t n) {
  int fd = s->bash.cmd_w;
  if (fd < 0) return -EPIPE;
  ssize_t w = write(fd, line, n);
  if (w == (ssize_t)n) return 0;
  if (w < 0 && errno != EAGAIN && errno != EINTR) return -errno;
  if (w < 0) w = 0;
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  int rc = write_all(fd, line + w, n - w);
  fcntl(fd, F_SETFL, fl);
  return rc;
}

/* ---- the end of bash --------------------------------------------------- */

static void on_bash_exit(void *data, pid_t pid, int wstatus) {
  rock_session_t *s = data;
  (void)pid;
  s->ended = 1;
  int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  if (s->done) drain_output(s); /* what bash wrote last: maybe a marker */
  if (s->done && s->starting) {
    char msg[256];
    int timed_out = s->phase == INTERRUPTING;
    if (s->start_failed)
      snprintf(msg, sizeof msg, "starting the session: %s", s->why);
    else
      snprintf(msg, sizeof msg, timed_out ? "bash did not finish its startup in time"
                                          : "bash exited with status %d during its startup",
               code);
    finish(s, s->start_failed ? ROCK_E_IO : timed_out ? ROCK_E_TIMEOUT : ROCK_E_SPAWN_FAILED, 1,
           code, "session_ended", msg);
  } else if (s->done) {
    finish(s, 0, 1, code, s->phase == INTERRUPTING ? s->reason : "session_ended", NULL);
  }
  /* the shell's jobs (background ones too) go with it, as on a hangup */
  pid_t left[MAX_KILL];
  int n = rock_procs_collect(s->bash.pid, s->bash.pid, 0, 0, left, MAX_KILL);
  rock_procs_signal(left, n, SIGKILL);
  if (s->cmd_fd >= 0) close(s->cmd_fd);
  if (s->bash.cmd_w >= 0) close(s->bash.cmd_w);
  s->cmd_fd = s->bash.cmd_w = -1;
  rmtree_flat(s->dir);
  rock_buf_free(&s->line);
  s->closing = 1;
  if (s->on_end) s->on_end(s, code, s->end_data);
  uv_close((uv_handle_t *)&s->pty_poll, handle_closed);
  uv_close((uv_handle_t *)&s->timer, handle_closed);
  uv_close((uv_handle_t *)&s->out_poll, handle_closed); /* then master, out_r */
}

/* ---- interrupts -------------------------------------------------------- */

static void interrupt_start(rock_session_t *s, const char *reason) {
  if (s->phase != RUNNING) return;
  s->phase = INTERRUPTING;
  s->reason = reason;
  s->interrupted_at = uv_now(s->loop);
  s->remarked = 0;
  pid_t fg = s->bash.master >= 0 ? tcgetpgrp(s->bash.master) : -1;
  if (fg > 0 && fg != s->bash.pid) {
    s->nkill = rock_procs_collect(fg, 0, 0, s->bash.pid, s->kill_set, MAX_KILL);
    kill(-fg, SIGINT);
  } else {
    /* a builtin (loop) runs in bash itself; its children are in bash's
     * group or in job groups of their own, all descendants of bash */
    s->nkill = 0;
    pid_t kids[MAX_KILL];
    int n = rock_procs_collect(0, 0, s->bash.pid, s->bash.pid, kids, MAX_KILL);
    for (int i = 0; i < n; i++)
      if (getpgid(kids[i]) == s->bash.pid) s->kill_set[s->nkill++] = kids[i];
    kill(s->bash.pid, SIGINT);
    kill(s->bash.pid, SIGCONT); /* a shell that stopped itself (kill -STOP
                                 * $$) sees the SIGINT once continued */
  }
}

static void tick(uv_timer_t *t);

static void arm(rock_session_t *s) { uv_timer_start(&s->timer, tick, TICK_MS, 0); }

/* The timer: deadline while RUNNING, interrupt steps while INTERRUPTING. */
static void tick(uv_timer_t *t) {
  rock_session_t *s = t->data;
  if (!s->done || s->ended) return;
  uint64_t now = uv_now(s->loop);
  if (s->phase == RUNNING) {
    if (s->deadline && now >= s->deadline && s->starting) {
      s->phase = INTERRUPTING; /* a startup that hangs is no session: */
      s->reason = "timeout";   /* on_bash_exit answers TIMEOUT */
      rock_session_close(s);
    } else if (s->deadline && now >= s->deadline) {
      interrupt_start(s, "timeout");
      arm(s);
    } else if (s->deadline) {
      uv_timer_start(&s->timer, tick, s->deadline - now, 0);
    }
    return;
  }
  /* INTERRUPTING */
  pid_t fg = s->bash.master >= 0 ? tcgetpgrp(s->bash.master) : -1;
  uint64_t since = now - s->interrupted_at;
  if (!s->remarked && (fg == s->bash.pid || since >= INTERRUPT_GRACE_MS)) {
    if (since >= INTERRUPT_GRACE_MS) { /* SIGINT was not enough */
      rock_procs_signal(s->kill_set, s->nkill, SIGKILL);
      if (fg > 0 && fg != s->bash.pid) kill(-fg, SIGKILL);
    }
    /* the interrupted line prints no marker: ask for one on a new line */
    char line[LINE_END_MAX];
    send_line(s, line, line_end(s, line, sizeof line, "130", 1));
    s->remarked = 1;
  }
  if (since >= RESCUE_MS) {
    rock_log(ROCK_LOG_WARN, "session", "msg=\"shell did not come back, killing it\" dir=\"%s\"",
             s->dir);
    kill(-s->bash.pid, SIGKILL);
    kill(s->bash.pid, SIGKILL);
    return; /* on_bash_exit answers */
  }
  arm(s);
}

int rock_session_interrupt(rock_session_t *s, const char *reason) {
  if (!s->done || s->phase != RUNNING || s->ended) return 0;
  interrupt_start(s, reason ? reason : "interrupted");
  arm(s);
  return 1;
}

/* ---- runs -------------------------------------------------------------- */

/* Start a run: write its file, send bash the line. The command file stays
 * open and is rewritten in place (pwrite, then ftruncate when it got
 * shorter, never to 0): truncating a file to 0 and rewriting it makes ext4
 * flush it at close (auto_da_alloc, ~170 us). */
static int launch(rock_session_t *s, const char *script, size_t len, int newline,
                  double timeout) {
  drain_output(s); /* what came before this command is not its output */
  s->seq++;
  char out[PATH_MAX + 32], line[PATH_MAX * 5];
  snprintf(out, sizeof out, "%s/out.%lu", s->dir, s->seq);
  rock_capture_init(&s->cap, s->max_output, out);
  s->capturing = 1;
  s->phase = RUNNING;
  size_t total = len + (newline ? 1 : 0);
  for (size_t off = 0; off < total;) { /* one syscall, unless it is short */
    struct iovec iov[2] = {{(char *)script + off, off < len ? len - off : 0},
                           {"\n", off < len ? total - len : total - off}};
    ssize_t w = pwritev(s->cmd_fd, iov, 2, off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int e = errno;
      s->cmd_len = SIZE_MAX; /* part of it may be there: cut it next time */
      snprintf(s->why, sizeof s->why, "writing the command file: %s", strerror(e));
      return -e;
    }
    off += w;
  }
  /* shrink it only when the old command was longer (a syscall saved) */
  if (total < s->cmd_len && ftruncate(s->cmd_fd, total) < 0) {
    int e = errno;
    snprintf(s->why, sizeof s->why, "writing the command file: %s", strerror(e));
    return -e;
  }
  s->cmd_len = total;
  size_t n = s->line.len;
  if (n + LINE_END_MAX > sizeof line) return -ENAMETOOLONG; /* checked at open */
  memcpy(line, s->line.data, n);
  n += line_end(s, line + n, sizeof line - n, "$?", 0);
  s->deadline = timeout > 0 ? uv_now(s->loop) + (uint64_t)(timeout * 1000) : 0;
  if (s->deadline) uv_timer_start(&s->timer, tick, (uint64_t)(timeout * 1000), 0);
  int rc = send_line(s, line, n);
  if (rc) snprintf(s->why, sizeof s->why, "talking to bash: %s", strerror(-rc));
  return rc;
}

rock_err rock_session_run(rock_session_t *s, const char *script, size_t len,
                          double timeout, size_t max_output, int raw,
                          rock_session_done_fn done_cb, void *data) {
  if (s->ended || s->closing || s->lost_output) return ROCK_E_SESSION_ENDED;
  if (s->done) return ROCK_E_SESSION_BUSY;
  if (!(timeout >= 0 && timeout <= ROCK_SESSION_MAX_TIMEOUT) ||
      max_output < ROCK_SESSION_MIN_OUTPUT || max_output > ROCK_SESSION_MAX_OUTPUT)
    return ROCK_E_INVALID_ARGUMENT;
  s->done = done_cb;
  s->done_data = data;
  s->max_output = max_output;
  s->raw = raw;
  int rc = launch(s, script, len, 1, timeout);
  if (rc == -EPIPE) /* bash is exiting (say PROMPT_COMMAND='exit 7' ran
                      * after the last command): its exit answers this run
                      * with "session_ended" */
    return 0;
  if (rc) finish(s, ROCK_E_IO, 0, 0, "", s->why);
  return 0;
}

/* ---- open and close ---------------------------------------------------- */

static const char quiet[] =
    "PS1=''; PS2=''; PS0=''; PS4='+ '; PROMPT_COMMAND=''; unset HISTFILE; "
    "set +o history 2>/dev/null; set +H 2>/dev/null\n";

static rock_err fail_open(rock_session_t *s, rock_err e, char *msg, size_t cap,
                          const char *fmt, const char *what, int err) {
  snprintf(msg, cap, fmt, what, strerror(err));
  if (s) {
    if (s->cmd_fd >= 0) close(s->cmd_fd);
    rmtree_flat(s->dir);
    rock_buf_free(&s->line);
    free(s);
  }
  return e;
}

rock_err rock_session_open(uv_loop_t *loop, rock_session_t **out,
                           const rock_session_opts_t *o,
                           rock_session_done_fn done_cb, void *data,
                           char *msg, size_t msg_cap) {
  *out = NULL;
  if (!(o->startup_timeout > 0 && o->startup_timeout <= ROCK_SESSION_MAX_TIMEOUT)) {
    snprintf(msg, msg_cap, "startup_timeout must be > 0 and <= %g", ROCK_SESSION_MAX_TIMEOUT);
    return ROCK_E_INVALID_ARGUMENT;
  }
  if (strlen(o->dir) + 64 > PATH_MAX) {
    snprintf(msg, msg_cap, "session dir too long");
    return ROCK_E_INVALID_ARGUMENT;
  }
  rock_session_t *s = calloc(1, sizeof *s);
  if (!s) return fail_open(NULL, ROCK_E_NO_MEMORY, msg, msg_cap, "%s: %s", "session", ENOMEM);
  s->loop = loop;
  s->cmd_fd = s->bash.master = s->bash.out_r = s->bash.cmd_w = -1;
  s->on_end = o->on_end;
  s->end_data = o->data;
  snprintf(s->dir, sizeof s->dir, "%s", o->dir);
  snprintf(s->cmd_path, sizeof s->cmd_path, "%s/cmd", s->dir);
  snprintf(s->src_path, sizeof s->src_path, "%s", s->cmd_path);
  if ((mkdir(s->dir, 0700) && errno != EEXIST) ||
      (s->cmd_fd = open(s->cmd_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
    return fail_open(s, ROCK_E_IO, msg, msg_cap, "creating %s: %s", s->cmd_path, errno);
  /* another user's shell may not reach our dir: it gets the file (its
   * own, so that opening it again through /proc passes) on an fd */
  int user_fd = -1;
  if (o->user) {
    snprintf(s->src_path, sizeof s->src_path, "/proc/self/fd/%d", ROCK_BASH_CMD_FD);
    if (fchown(s->cmd_fd, o->user->uid, o->user->gid) ||
        (user_fd = open(s->cmd_path, O_RDONLY | O_CLOEXEC)) < 0)
      return fail_open(s, ROCK_E_IO, msg, msg_cap, "giving %s to remote_user: %s", s->cmd_path,
                       errno);
  }
  /* the fixed part of every line; the path quoted, whatever it holds */
  rock_buf_t *l = &s->line;
  int bad = rock_buf_puts(l, " \\builtin . ");
  shell_quote(l, s->src_path);
  bad |= rock_buf_puts(l, " </dev/null >&253 2>&253; ");
  if (bad || !l->data || l->len + LINE_END_MAX > PATH_MAX * 5) {
    if (user_fd >= 0) close(user_fd);
    return fail_open(s, ROCK_E_NO_MEMORY, msg, msg_cap, "%s: %s", "command line", ENOMEM);
  }

  /* nonce: secret per session, from the kernel's random source */
  unsigned char rnd[ROCK_NONCE_LEN / 2];
  char nonce[ROCK_NONCE_LEN + 1];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, rnd, sizeof rnd) != (ssize_t)sizeof rnd)
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (unsigned char)(rand() ^ getpid() ^ i);
  if (fd >= 0) close(fd);
  for (size_t i = 0; i < sizeof rnd; i++) sprintf(nonce + 2 * i, "%02x", rnd[i]);
  rock_marker_init(&s->marker, nonce);

  /* the startup: quiet prompt, the startup files, then prompts again (a
   * sourced rc file likes to set PS1 and PROMPT_COMMAND) */
  rock_buf_t init = {0};
  int nomem = rock_buf_append(&init, quiet, sizeof quiet - 1);
  for (size_t i = 0; o->sources && o->sources[i]; i++) {
    nomem |= rock_buf_append(&init, ". ", 2);
    shell_quote(&init, o->sources[i]);
    nomem |= rock_buf_append(&init, "\n", 1);
  }
  nomem |= rock_buf_append(&init, quiet, sizeof quiet - 1);
  if (nomem) {
    if (user_fd >= 0) close(user_fd);
    rock_buf_free(&init);
    return fail_open(s, ROCK_E_NO_MEMORY, msg, msg_cap, "%s: %s", "startup", ENOMEM);
  }
  int rc = rock_bash_spawn(&s->bash, o->bash, o->env, o->cwd, o->user, user_fd);
  if (user_fd >= 0) close(user_fd);
  if (rc) {
    rock_buf_free(&init);
    return fail_open(s, ROCK_E_SPAWN_FAILED, msg, msg_cap, "starting bash in cwd '%s': %s",
                     o->cwd ? o->cwd : ".", -rc);
  }
  if (rock_procs_watch(s->bash.pid, on_bash_exit, s)) {
    kill(s->bash.pid, SIGKILL);
    close(s->bash.master);
    close(s->bash.out_r);
    close(s->bash.cmd_w);
    rock_buf_free(&init);
    return fail_open(s, ROCK_E_NO_MEMORY, msg, msg_cap, "%s: %s", "watching bash", ENOMEM);
  }
  uv_poll_init(loop, &s->pty_poll, s->bash.master);
  uv_poll_init(loop, &s->out_poll, s->bash.out_r);
  uv_timer_init(loop, &s->timer);
  s->pty_poll.data = s->timer.data = s->out_poll.data = s;
  s->handles_open = 3;
  uv_poll_start(&s->pty_poll, UV_READABLE, on_pty);
  uv_poll_start(&s->out_poll, UV_READABLE, on_output);
  *out = s;
  s->done = done_cb;
  s->done_data = data;
  s->starting = 1;
  s->raw = 0;
  s->max_output = 1u << 20; /* what the startup files print: 1 MiB kept */
  rc = launch(s, init.data, init.len, 0, o->startup_timeout);
  rock_buf_free(&init);
  if (rc) { /* its end answers the startup, with s->why */
    s->start_failed = 1;
    rock_session_close(s);
  }
  return 0;
}

void rock_session_close(rock_session_t *s) {
  if (s->ended) return;
  s->killing = 1;
  /* bash stops first: its children die before it does, and it must not
   * run on meanwhile (the rest of its line: a startup file's next lines) */
  kill(s->bash.pid, SIGSTOP);
  pid_t pids[MAX_KILL];
  int n = rock_procs_collect(s->bash.pid, s->bash.pid, s->bash.pid, s->bash.pid, pids, MAX_KILL);
  rock_procs_signal(pids, n, SIGKILL);
  kill(-s->bash.pid, SIGKILL);
  kill(s->bash.pid, SIGKILL); /* on_bash_exit ends the run and the session */
}

int rock_session_busy(const rock_session_t *s) { return s->done != NULL; }
int rock_session_ended(const rock_session_t *s) { return s->ended || s->lost_output; }
