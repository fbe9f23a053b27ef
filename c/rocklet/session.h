/* session.h: long-lived bash sessions, libuv-shaped, with no knowledge of
 * HTTP or JSON (DESIGN.md "The bash session"). A session is bash on a PTY
 * (bash.c); a command is written to a file in the session's dir and
 * sourced, its output comes back on a pipe and ends with a marker
 * (marker.c), capped and spilled to a file past the cap (capture.c).
 * Every run calls its done_cb exactly once; the session calls on_end once,
 * when bash is gone, and frees itself after. routes_session.c puts it on
 * the wire and keeps the registry of named sessions. */
#ifndef ROCK_ROCKLET_SESSION_H
#define ROCK_ROCKLET_SESSION_H

#include <limits.h>
#include <stdint.h>
#include <uv.h>

#include "../core/buf.h"
#include "../core/err.h"
#include "users.h"

/* What a run accepts: timeouts in seconds, 0 = none. */
#define ROCK_SESSION_MAX_TIMEOUT 1e8        /* ~3 years: far past any lease */
#define ROCK_SESSION_MIN_OUTPUT 64
#define ROCK_SESSION_MAX_OUTPUT (256u << 20) /* the rocklet holds it whole */

typedef struct rock_session rock_session_t;

/* The result of one run (or of the startup). Owned by the session: valid
 * during done_cb only. done_cb may start the next run (the result stays
 * valid while it does, output_file included). */
typedef struct {
  rock_err err;       /* 0: the command ran (or ended the shell); else why
                       * it did not complete: TIMEOUT / SPAWN_FAILED at
                       * startup, NO_MEMORY, IO */
  char message[512];  /* for err */
  rock_buf_t output;  /* cleaned text: head, a note, tail when capped;
                       * a raw run: the bytes as they came (head and tail
                       * joined past the cap, no note) */
  int have_status;    /* exit_code is known */
  int exit_code;      /* the command's $?, or bash's exit status */
  const char *failure_reason; /* "", "timeout", "interrupted", "session_ended" */
  int truncated;
  uint64_t dropped_bytes, output_bytes;
  const char *output_file;    /* the whole output, when spilled; else NULL */
  char output_path[PATH_MAX]; /* output_file's storage */
} rock_session_result_t;

typedef void (*rock_session_done_fn)(rock_session_t *s,
                                     const rock_session_result_t *r,
                                     void *data);
/* bash is gone (exit, kill, close); s is freed after this returns. */
typedef void (*rock_session_end_fn)(rock_session_t *s, int exit_code,
                                    void *data);

typedef struct {
  const char *dir;              /* the session's own dir: made, then removed */
  const char *bash;             /* path of bash (rock_bash_find) */
  const char *cwd;              /* NULL: the rocklet's */
  const char *const *env;       /* {key, value, ..., NULL} or NULL */
  const char *const *sources;   /* files to source at startup, NULL-ended */
  double startup_timeout;       /* seconds, > 0: the caller's policy */
  const rock_user_t *user;      /* NULL: the rocklet's; else bash runs as
                                 * this user (remote_user) and reads its
                                 * command file, made its own, by fd */
  rock_session_end_fn on_end;
  void *data;                   /* for on_end */
} rock_session_opts_t;

/* Start bash and its startup (quiet prompts, the sources). Returns 0 and
 * *out, then done_cb gets the startup's result: err 0 (output = what the
 * sources printed), or TIMEOUT / SPAWN_FAILED / NO_MEMORY / IO (bash is then
 * being stopped; on_end follows). Or returns an error at once (SPAWN_FAILED for
 * a bad cwd or a missing bash, IO, NO_MEMORY) with msg filled, and no
 * session exists. */
rock_err rock_session_open(uv_loop_t *loop, rock_session_t **out,
                           const rock_session_opts_t *o,
                           rock_session_done_fn done_cb, void *data,
                           char *msg, size_t msg_cap);
/* Run script (len bytes, any bytes; a newline is added) with timeout
 * seconds (0: none) and max_output bytes returned, as cleaned text or,
 * with raw, as the bytes came. Returns 0 (done_cb follows), SESSION_BUSY,
 * SESSION_ENDED, INVALID_ARGUMENT (limits above) or NO_MEMORY. */
rock_err rock_session_run(rock_session_t *s, const char *script, size_t len,
                          double timeout, size_t max_output, int raw,
                          rock_session_done_fn done_cb, void *data);
/* Interrupt the command in flight (its run ends with failure_reason
 * reason, normally "interrupted"); the shell and its state survive.
 * Returns 1 if a command was running, 0 if not. */
int rock_session_interrupt(rock_session_t *s, const char *reason);
/* Kill bash and everything it started. A run in flight ends with
 * "session_ended" (a startup with its error) when bash is reaped, even if
 * its end was already on its way; on_end follows. Safe to call twice. */
void rock_session_close(rock_session_t *s);

int rock_session_busy(const rock_session_t *s);
int rock_session_ended(const rock_session_t *s);

#endif
