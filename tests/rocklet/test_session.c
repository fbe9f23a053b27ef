/* test_session.c: the session API (c/rocklet/session.h) and exec
 * (c/rocklet/exec.h) on a real uv loop with real bash: output and exit
 * codes, timeout, interrupt, exit inside a command, the output cap and its
 * spill file, startup failures, and the defects of issue 7 (items 7, 15,
 * 18). Every handle is closed and uv_loop_close() must return 0. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include "rocklet/bash.h"
#include "rocklet/exec.h"
#include "rocklet/procs.h"
#include "rocklet/session.h"

#include "check.h"

static uv_loop_t loop;
static char base[PATH_MAX], bash_path[PATH_MAX];
static int nsessions;

/* ---- allocation failures (linked with --wrap: only the rocklet's own
 * objects allocate through these) ---------------------------------------- */

static long fail_in; /* the fail_in-th allocation from now fails; 0: none */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) {
  if (fail_in > 0 && --fail_in == 0) return NULL;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m) {
  if (fail_in > 0 && --fail_in == 0) return NULL;
  return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
  if (fail_in > 0 && --fail_in == 0) return NULL;
  return __real_realloc(p, n);
}

/* ---- driving the loop -------------------------------------------------- */

static int guard_fired;
static void on_guard(uv_timer_t *t) {
  (void)t;
  guard_fired = 1;
}

/* Run the loop until *flag >= want, or seconds pass (then 0). */
static int wait_for(int *flag, int want, double seconds) {
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  guard_fired = 0;
  uv_timer_start(&guard, on_guard, (uint64_t)(seconds * 1000), 0);
  while (*flag < want && !guard_fired) uv_run(&loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  return *flag >= want;
}

/* ---- a session's results, copied out of the callbacks ------------------ */

typedef struct {
  int calls;
  rock_err err;
  char msg[512];
  char *out;
  int have_status, code;
  char reason[32];
  int truncated;
  uint64_t dropped, total;
  long long file_size; /* of output_file, -1 when none */
} got_t;

static void got_free(got_t *g) { free(g->out); }

static void on_done(rock_session_t *s, const rock_session_result_t *r, void *data) {
  got_t *g = data;
  (void)s;
  g->calls++;
  g->err = r->err;
  snprintf(g->msg, sizeof g->msg, "%s", r->message);
  free(g->out);
  g->out = strndup(r->output.data ? r->output.data : "", r->output.len);
  g->have_status = r->have_status;
  g->code = r->exit_code;
  snprintf(g->reason, sizeof g->reason, "%s", r->failure_reason ? r->failure_reason : "?");
  g->truncated = r->truncated;
  g->dropped = r->dropped_bytes;
  g->total = r->output_bytes;
  struct stat st;
  g->file_size = r->output_file && stat(r->output_file, &st) == 0 ? (long long)st.st_size : -1;
}

typedef struct {
  int ends, code;
} ended_t;

static void on_end(rock_session_t *s, int code, void *data) {
  ended_t *e = data;
  (void)s;
  e->ends++;
  e->code = code;
}

/* Open a session in dir (NULL: a fresh one under base); returns it after
 * its startup, or NULL (then *g says why). */
static rock_session_t *open_in(const char *dir, const char *cwd, const char *const *sources,
                               double startup_timeout, ended_t *end, got_t *g, rock_err *rc) {
  char d[PATH_MAX + 64];
  if (dir) snprintf(d, sizeof d, "%s", dir);
  else snprintf(d, sizeof d, "%s/s%d", base, ++nsessions);
  rock_session_opts_t o = {.dir = d, .bash = bash_path, .cwd = cwd, .sources = sources,
                           .startup_timeout = startup_timeout, .on_end = on_end, .data = end};
  rock_session_t *s = NULL;
  memset(g, 0, sizeof *g);
  *rc = rock_session_open(&loop, &s, &o, on_done, g, g->msg, sizeof g->msg);
  if (*rc) return NULL;
  wait_for(&g->calls, 1, 30);
  return g->err ? NULL : s;
}

static rock_session_t *open_session(ended_t *end) {
  got_t g;
  rock_err rc;
  rock_session_t *s = open_in(NULL, NULL, NULL, 10, end, &g, &rc);
  got_free(&g);
  return s;
}

static got_t run(rock_session_t *s, const char *cmd, double timeout, size_t max_output) {
  got_t g = {0};
  rock_err rc = rock_session_run(s, cmd, strlen(cmd), timeout, max_output, 0, on_done, &g);
  if (rc) {
    g.err = rc;
    g.calls = -1;
    return g;
  }
  wait_for(&g.calls, 1, 30);
  return g;
}

static void close_session(rock_session_t *s, ended_t *end) {
  int before = end->ends;
  rock_session_close(s);
  wait_for(&end->ends, before + 1, 10);
}

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

#define OUT_IS(g, want) ((g).out && !strcmp((g).out, want))
#define MAXO (1u << 20)

/* ---- the tests --------------------------------------------------------- */

static void test_output_and_status(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "echo out; echo err >&2; printf 'no newline'", 0, MAXO);
  CHECK(g.calls == 1 && g.err == 0 && g.have_status && g.code == 0);
  CHECK(OUT_IS(g, "out\nerr\nno newline"));
  CHECK(!strcmp(g.reason, "") && !g.truncated && g.file_size == -1);
  got_free(&g);
  g = run(s, "(exit 42)", 0, MAXO);
  CHECK(g.code == 42);
  got_free(&g);
  /* heredocs, quotes, multi-line scripts, bytes that are not UTF-8 */
  g = run(s, "cat <<'EOF'\nline $NOT 'q' \"d\"\nEOF\nfor i in 1 2; do\n echo i=$i\ndone", 0, MAXO);
  CHECK(OUT_IS(g, "line $NOT 'q' \"d\"\ni=1\ni=2\n"));
  got_free(&g);
  g = run(s, "printf '%s' '\xff\xfe' | od -An -tx1 | tr -d ' '", 0, MAXO);
  CHECK(OUT_IS(g, "fffe\n"));
  got_free(&g);
  close_session(s, &end);
  CHECK(end.ends == 1);
}

/* issue 7, item 7: bash's own words for typed input, no internal path */
static void test_syntax_error_hides_path(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "if then fi", 0, MAXO);
  CHECK(g.code == 2);
  CHECK(g.out && !strncmp(g.out, "bash: line 1: syntax error", 26));
  CHECK(g.out && !strstr(g.out, base));
  CHECK(g.out && !strstr(g.out, "/cmd"));
  got_free(&g);
  g = run(s, "echo 'unterminated", 0, MAXO);
  CHECK(g.code != 0 && g.out && !strstr(g.out, base));
  got_free(&g);
  g = run(s, "echo fine", 0, MAXO);
  CHECK(OUT_IS(g, "fine\n"));
  got_free(&g);
  close_session(s, &end);
}

static void test_timeout_keeps_shell(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "cd /tmp && export KEEP=me", 0, MAXO);
  got_free(&g);
  g = run(s, "echo before; sleep 100", 0.5, MAXO);
  CHECK(g.calls == 1 && !strcmp(g.reason, "timeout"));
  CHECK(OUT_IS(g, "before\n"));
  got_free(&g);
  g = run(s, "X=1; while true; do :; done", 0.5, MAXO); /* a builtin loop */
  CHECK(!strcmp(g.reason, "timeout"));
  got_free(&g);
  g = run(s, "pwd; echo $KEEP $X", 0, MAXO);
  CHECK(OUT_IS(g, "/tmp\nme 1\n"));
  CHECK(!strcmp(g.reason, ""));
  got_free(&g);
  close_session(s, &end);
}

static rock_session_t *to_interrupt;
static int interrupted_running;
static void do_interrupt(uv_timer_t *t) {
  interrupted_running = rock_session_interrupt(to_interrupt, "interrupted");
  uv_close((uv_handle_t *)t, NULL);
}

static void test_interrupt(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  CHECK(rock_session_interrupt(s, "interrupted") == 0); /* nothing runs */
  got_t g = {0};
  const char *cmd = "echo started; sleep 100";
  CHECK(rock_session_run(s, cmd, strlen(cmd), 0, MAXO, 0, on_done, &g) == 0);
  got_t busy = run(s, "true", 0, MAXO);
  CHECK(busy.calls == -1 && busy.err == ROCK_E_SESSION_BUSY);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  to_interrupt = s;
  uv_timer_start(&t, do_interrupt, 300, 0);
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(interrupted_running == 1);
  CHECK(!strcmp(g.reason, "interrupted"));
  CHECK(OUT_IS(g, "started\n"));
  got_free(&g);
  g = run(s, "echo next", 0, MAXO);
  CHECK(OUT_IS(g, "next\n"));
  got_free(&g);
  close_session(s, &end);
}

/* issue 7, hostile round: a command that stops its own shell (kill -STOP
 * $$) could not be interrupted: bash never saw the SIGINT and was killed
 * after the rescue delay, taking the session with it. An interrupt
 * continues a stopped shell; the session goes on. */
static void test_interrupt_stopped_shell(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = {0};
  const char *cmd = "X=kept; echo started; kill -STOP $$; echo resumed";
  CHECK(rock_session_run(s, cmd, strlen(cmd), 0, MAXO, 0, on_done, &g) == 0);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  to_interrupt = s;
  uv_timer_start(&t, do_interrupt, 300, 0);
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(interrupted_running == 1);
  CHECK(!strcmp(g.reason, "interrupted"));
  got_free(&g);
  g = run(s, "echo $X", 0, MAXO);
  CHECK(g.calls == 1 && OUT_IS(g, "kept\n"));
  got_free(&g);
  CHECK(end.ends == 0);
  close_session(s, &end);
}

static void test_exit_ends_session(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "echo bye; exit 3", 0, MAXO);
  CHECK(g.calls == 1 && g.err == 0);
  CHECK(!strcmp(g.reason, "session_ended") && g.have_status && g.code == 3);
  CHECK(OUT_IS(g, "bye\n"));
  got_free(&g);
  CHECK(wait_for(&end.ends, 1, 10));
  CHECK(end.code == 3);
}

static void test_output_spilled(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "seq 1 100000", 0, 1000);
  CHECK(g.code == 0 && g.truncated);
  CHECK(g.total == 588895 && g.dropped > 587000);
  CHECK(g.file_size == 588895); /* the whole output, in the spill file */
  CHECK(g.out && !strncmp(g.out, "1\n2\n3\n", 6) && strstr(g.out, "bytes dropped; full output: "));
  CHECK(g.out && strlen(g.out) < 1200 && !strcmp(g.out + strlen(g.out) - 13, "99999\n100000\n"));
  got_free(&g);
  close_session(s, &end);
}

/* issue 7, item 18: a command that closes the session's output fd */
static void test_closed_output_fd(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "echo a; exec 253>&-; echo b", 0, MAXO);
  CHECK(g.calls == 1 && g.code == 0);
  CHECK(OUT_IS(g, "a\nb\n")); /* its stdout was a copy: still there */
  got_free(&g);
  g = run(s, "echo back", 0, MAXO); /* usable again */
  CHECK(OUT_IS(g, "back\n"));
  got_free(&g);
  /* both copies closed: no marker can come; the session ends and says so */
  g = run(s, "exec 253>&- 254>&-; sleep 0.1", 0, MAXO);
  CHECK(g.calls == 1 && !strcmp(g.reason, "session_ended"));
  got_free(&g);
  CHECK(wait_for(&end.ends, 1, 10));
}

/* issue 7, hostile round: a command that closes the marker's fd 254 got
 * no marker, and its timeout or interrupt none either: its shell was
 * killed after the rescue delay and the session lost (with no timeout and
 * no interrupt it waits, as any command that never ends). The rescue's
 * marker falls back to 253 and restores 254: the session goes on. */
static void test_closed_marker_fd(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "X=kept; echo a; exec 254>&-", 0.5, MAXO);
  CHECK(g.calls == 1 && g.err == 0 && !strcmp(g.reason, "timeout"));
  CHECK(OUT_IS(g, "a\n"));
  got_free(&g);
  g = run(s, "echo $X", 0, MAXO);
  CHECK(g.calls == 1 && OUT_IS(g, "kept\n"));
  got_free(&g);
  const char *cmd = "echo b; exec 254>&-";
  memset(&g, 0, sizeof g);
  CHECK(rock_session_run(s, cmd, strlen(cmd), 0, MAXO, 0, on_done, &g) == 0);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  to_interrupt = s;
  uv_timer_start(&t, do_interrupt, 300, 0);
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(!strcmp(g.reason, "interrupted") && OUT_IS(g, "b\n"));
  got_free(&g);
  g = run(s, "echo again", 0, MAXO);
  CHECK(g.calls == 1 && OUT_IS(g, "again\n"));
  got_free(&g);
  CHECK(end.ends == 0);
  close_session(s, &end);
}

/* issue 7, hostile round: a session whose commands defined a printf
 * function (or an alias for `.`) hung every later command (no marker) or
 * ran none of them (a silent exit 0): the rocklet's own line calls the
 * builtins, whatever the session defines. */
static void test_hijacked_builtins(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "printf() { command printf x; }; exec() { :; }; alias .=true", 2, MAXO);
  CHECK(g.calls == 1 && !strcmp(g.reason, "") && g.code == 0);
  got_free(&g);
  g = run(s, "echo after; printf '%s\\n' mine", 2, MAXO);
  CHECK(g.calls == 1 && !strcmp(g.reason, "") && g.code == 0);
  CHECK(OUT_IS(g, "after\nx"));
  got_free(&g);
  g = run(s, ".() { echo hijacked; }", 2, MAXO);
  got_free(&g);
  g = run(s, "echo ran", 2, MAXO);
  CHECK(g.calls == 1 && OUT_IS(g, "ran\n"));
  got_free(&g);
  CHECK(end.ends == 0);
  close_session(s, &end);
}

/* issue 7, item 18: bash that exits between commands */
static void test_prompt_command_exit(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "PROMPT_COMMAND='exit 7'", 0, MAXO);
  CHECK(g.calls == 1 && g.code == 0 && !strcmp(g.reason, ""));
  got_free(&g);
  if (!end.ends) { /* not reaped yet: the run hears of the end */
    g = run(s, "echo never", 0, MAXO);
    CHECK(g.calls == 1 && g.err == 0);
    CHECK(!strcmp(g.reason, "session_ended") && g.code == 7);
    got_free(&g);
  }
  CHECK(wait_for(&end.ends, 1, 10));
  CHECK(end.code == 7);
}

/* issue 7, item 18: startup failures answer an error, leave no session */
static void test_startup_failures(void) {
  ended_t end = {0};
  got_t g;
  rock_err rc;
  char dir[PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s/badcwd", base);
  rock_session_t *s = open_in(dir, "/nonexistent-dir-xyz", NULL, 10, &end, &g, &rc);
  CHECK(!s && rc == ROCK_E_SPAWN_FAILED);
  CHECK(strstr(g.msg, "/nonexistent-dir-xyz") && strstr(g.msg, "No such file"));
  CHECK(!exists(dir) && end.ends == 0);
  got_free(&g);

  char src[PATH_MAX + 32];
  snprintf(src, sizeof src, "%s/slow-rc", base);
  FILE *f = fopen(src, "w");
  fputs("sleep 100\n", f);
  fclose(f);
  const char *sources[] = {src, NULL};
  snprintf(dir, sizeof dir, "%s/slow", base);
  s = open_in(dir, NULL, sources, 0.5, &end, &g, &rc);
  CHECK(!s && rc == 0 && g.calls == 1 && g.err == ROCK_E_TIMEOUT);
  CHECK(strstr(g.msg, "startup"));
  CHECK(wait_for(&end.ends, 1, 10));
  CHECK(!exists(dir));
  got_free(&g);
  unlink(src);

  /* a startup file that exits the shell */
  snprintf(src, sizeof src, "%s/exit-rc", base);
  f = fopen(src, "w");
  fputs("exit 5\n", f);
  fclose(f);
  snprintf(dir, sizeof dir, "%s/exits", base);
  s = open_in(dir, NULL, sources, 10, &end, &g, &rc);
  CHECK(!s && rc == 0 && g.err == ROCK_E_SPAWN_FAILED && strstr(g.msg, "status 5"));
  CHECK(wait_for(&end.ends, 2, 10));
  got_free(&g);
  unlink(src);
}

/* ---- a close racing the end of a command -------------------------------
 * Under load the rocklet died (SIGSEGV) on a startup that timed out: the
 * deadline killed the startup's `sleep` first and bash, run between that
 * kill and its own, printed its end marker; the marker, read before bash's
 * exit, ended the startup "well" with a NULL failure_reason. These tests
 * force that order: bash's line is done (its marker waits in the pipe)
 * before the loop runs again. */

/* Wait (up to ~10 s) until bash pid is blocked reading its command pipe
 * (fd 0): the line it was sent has run and its marker is written.
 * /proc/PID/syscall names the call a blocked task sleeps in. Returns 0 if
 * /proc cannot say so. */
static int bash_idle(pid_t pid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
  for (int i = 0; i < 10000; i++) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    long nr;
    unsigned long fd0;
    if (sscanf(buf, "%ld 0x%lx", &nr, &fd0) == 2 && nr == SYS_read && fd0 == 0) return 1;
    usleep(1000);
  }
  return 0;
}

/* The pid a startup file wrote to path (waits for a whole line), or 0. */
static pid_t read_pid(const char *path) {
  for (int i = 0; i < 10000; i++) {
    char buf[32] = {0};
    FILE *f = fopen(path, "r");
    if (f) {
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      if (n && buf[n - 1] == '\n') return (pid_t)atoi(buf);
    }
    usleep(1000);
  }
  return 0;
}

/* The startup's deadline passes while its end waits unread: with libuv
 * before 1.45 an iteration runs its timers before it polls, so the
 * deadline is seen first. It is a timeout, never a success with no
 * failure_reason (the SIGSEGV: routes_session.c strcmp'd it). */
static void test_startup_deadline_races_its_end(void) {
  ended_t end = {0};
  got_t g = {0};
  char src[PATH_MAX + 32], pidf[PATH_MAX + 32], dir[PATH_MAX + 32];
  snprintf(pidf, sizeof pidf, "%s/race-pid", base);
  snprintf(src, sizeof src, "%s/race-rc", base);
  FILE *f = fopen(src, "w");
  fprintf(f, "echo $$ > '%s'\n", pidf);
  fclose(f);
  const char *sources[] = {src, NULL};
  snprintf(dir, sizeof dir, "%s/race", base);
  rock_session_opts_t o = {.dir = dir, .bash = bash_path, .sources = sources,
                           .startup_timeout = 0.01, .on_end = on_end, .data = &end};
  rock_session_t *s = NULL;
  uint64_t t0 = uv_hrtime();
  REQUIRE(rock_session_open(&loop, &s, &o, on_done, &g, g.msg, sizeof g.msg) == 0);
  pid_t pid = read_pid(pidf);
  CHECK(pid > 0 && bash_idle(pid)); /* the startup is done: its marker waits */
  while (uv_hrtime() - t0 < 50000000) usleep(1000); /* and its deadline passed */
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(g.calls == 1);
#if UV_VERSION_HEX < 0x012d00
  CHECK(g.err == ROCK_E_TIMEOUT && strstr(g.msg, "startup"));
#else /* the loop polls first: the end is seen before the deadline */
  CHECK(g.err == ROCK_E_TIMEOUT || (g.err == 0 && !strcmp(g.reason, "")));
#endif
  CHECK(strcmp(g.reason, "?")); /* a failure_reason, never NULL */
  if (!g.err) rock_session_close(s);
  CHECK(wait_for(&end.ends, 1, 10));
  CHECK(!exists(dir));
  got_free(&g);
  unlink(src);
  unlink(pidf);
}

/* A close while a run's marker waits unread: the run ends "session_ended",
 * as session.h says of a close with a run in flight; the marker read after
 * the close does not end it as if nothing happened. */
static void test_close_races_the_marker(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "echo $$", 0, MAXO);
  pid_t pid = g.out ? (pid_t)atoi(g.out) : 0;
  got_free(&g);
  memset(&g, 0, sizeof g);
  CHECK(rock_session_run(s, "true", 4, 0, MAXO, 0, on_done, &g) == 0);
  CHECK(pid > 0 && bash_idle(pid)); /* "true" ran: its marker waits */
  rock_session_close(s);
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(g.calls == 1 && g.err == 0 && !strcmp(g.reason, "session_ended"));
  CHECK(wait_for(&end.ends, 1, 10));
  got_free(&g);
}

/* issue 7, item 18: limits refused clearly */
static void test_limits(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, "true", 1.8e16, MAXO);
  CHECK(g.calls == -1 && g.err == ROCK_E_INVALID_ARGUMENT);
  g = run(s, "true", INFINITY, MAXO);
  CHECK(g.err == ROCK_E_INVALID_ARGUMENT);
  g = run(s, "true", NAN, MAXO);
  CHECK(g.err == ROCK_E_INVALID_ARGUMENT);
  g = run(s, "true", -1, MAXO);
  CHECK(g.err == ROCK_E_INVALID_ARGUMENT);
  g = run(s, "true", 0, SIZE_MAX);
  CHECK(g.err == ROCK_E_INVALID_ARGUMENT);
  g = run(s, "echo ok", 0, MAXO);
  CHECK(OUT_IS(g, "ok\n"));
  got_free(&g);
  close_session(s, &end);
}

/* issue 7, item 18: a dir with shell metacharacters in its path */
static void test_quoted_dir(void) {
  ended_t end = {0};
  got_t g;
  rock_err rc;
  char dir[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s/x'y \"z$HOME`id`", base);
  rock_session_t *s = open_in(dir, NULL, NULL, 10, &end, &g, &rc);
  CHECK(s && rc == 0);
  got_free(&g);
  if (!s) return;
  g = run(s, "echo quoted", 0, MAXO);
  CHECK(OUT_IS(g, "quoted\n"));
  got_free(&g);
  g = run(s, "if then fi", 0, MAXO);
  CHECK(g.out && !strncmp(g.out, "bash: line 1: syntax error", 26));
  got_free(&g);
  close_session(s, &end);
  CHECK(!exists(dir));
}

/* a command file that cannot be written (a full disk; here a file size
 * limit) is an io_error, and the next command is not mixed with the
 * leftover of the failed one */
static void test_full_disk(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = run(s, ":", 0, MAXO); /* the file now holds 2 bytes */
  got_free(&g);
  struct rlimit old, small = {32768, 32768};
  getrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &small);
  size_t n = 100000;
  char *big = malloc(n + 1);
  memcpy(big, "echo ", 5);
  memset(big + 5, 'y', n - 5);
  big[n] = 0;
  g = run(s, big, 0, MAXO);
  CHECK(g.calls == 1 && g.err == ROCK_E_IO && strstr(g.msg, "command file"));
  got_free(&g);
  free(big);
  g = run(s, "echo recovered", 0, MAXO);
  CHECK(OUT_IS(g, "recovered\n"));
  got_free(&g);
  setrlimit(RLIMIT_FSIZE, &old);
  close_session(s, &end);
}

/* closing a session with a command in flight answers it */
static void test_close_in_flight(void) {
  ended_t end = {0};
  rock_session_t *s = open_session(&end);
  CHECK(s);
  if (!s) return;
  got_t g = {0};
  const char *cmd = "sleep 100";
  CHECK(rock_session_run(s, cmd, strlen(cmd), 0, MAXO, 0, on_done, &g) == 0);
  rock_session_close(s);
  CHECK(wait_for(&g.calls, 1, 10));
  CHECK(!strcmp(g.reason, "session_ended"));
  CHECK(wait_for(&end.ends, 1, 10));
  got_free(&g);
}

/* ---- exec -------------------------------------------------------------- */

typedef struct {
  int calls, code;
  char reason[32];
  char *out, *err;
} xgot_t;

static void on_exec(rock_exec_result_t *r, void *data) {
  xgot_t *x = data;
  x->calls++;
  x->code = r->exit_code;
  snprintf(x->reason, sizeof x->reason, "%s", r->failure_reason);
  x->out = strndup(r->out.data ? r->out.data : "", r->out.len);
  x->err = strndup(r->err.data ? r->err.data : "", r->err.len);
}

static void test_exec(void) {
  char *argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 4", NULL};
  rock_exec_opts_t o = {.argv = argv, .max_output = MAXO};
  xgot_t x = {0};
  char msg[256];
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == 0);
  CHECK(wait_for(&x.calls, 1, 10));
  CHECK(x.code == 4 && !strcmp(x.out, "out\n") && !strcmp(x.err, "err\n"));
  free(x.out), free(x.err);

  char *sleeper[] = {"/bin/sh", "-c", "sleep 100 & sleep 101", NULL};
  o.argv = sleeper;
  o.timeout = 0.3;
  memset(&x, 0, sizeof x);
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == 0);
  CHECK(wait_for(&x.calls, 1, 10));
  CHECK(!strcmp(x.reason, "timeout") && x.code == 128 + SIGKILL);
  free(x.out), free(x.err);

  o.timeout = 0;
  rock_exec_t *job;
  memset(&x, 0, sizeof x);
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, &job, msg, sizeof msg) == 0);
  rock_exec_kill(job, "cancelled");
  CHECK(wait_for(&x.calls, 1, 10));
  CHECK(!strcmp(x.reason, "cancelled"));
  free(x.out), free(x.err);

  char *missing[] = {"no-such-command-xyz", NULL};
  o.argv = missing;
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == ROCK_E_SPAWN_FAILED);
  o.argv = argv;
  o.cwd = "/nonexistent-dir-xyz";
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == ROCK_E_SPAWN_FAILED);
  o.cwd = NULL;
  o.timeout = 1.8e16;
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == ROCK_E_INVALID_ARGUMENT);
  o.timeout = 0;
  o.max_output = SIZE_MAX;
  CHECK(rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg) == ROCK_E_INVALID_ARGUMENT);
}

/* issue 7, item 6: every allocation of exec and of a session's life may
 * fail: each failure is an error answer or a result, never a crash or a
 * call left unanswered. */
static void test_no_memory(void) {
  int injected = 1;
  for (long k = 1; injected && k < 200; k++) {
    char *argv[] = {"/bin/echo", "hi", NULL};
    rock_exec_opts_t o = {.argv = argv, .max_output = 1024};
    xgot_t x = {0};
    char msg[256];
    fail_in = k;
    rock_err rc = rock_exec_run(&loop, &o, on_exec, &x, NULL, msg, sizeof msg);
    if (rc) {
      CHECK(rc == ROCK_E_NO_MEMORY || rc == ROCK_E_SPAWN_FAILED);
      continue;
    }
    CHECK(wait_for(&x.calls, 1, 10));
    injected = fail_in == 0;
    fail_in = 0;
    if (!injected) CHECK(x.code == 0 && !strcmp(x.out, "hi\n"));
    free(x.out), free(x.err);
  }
  CHECK(!injected); /* the sweep reached a run with no failure */
  injected = 1;
  for (long k = 1; injected && k < 400; k++) {
    ended_t end = {0};
    got_t g;
    rock_err rc;
    fail_in = k;
    rock_session_t *s = open_in(NULL, NULL, NULL, 10, &end, &g, &rc);
    CHECK(rc == 0 || rc == ROCK_E_NO_MEMORY);
    if (rc == 0) CHECK(g.calls == 1);
    got_free(&g);
    if (s) {
      g = run(s, "echo hi", 0, MAXO);
      CHECK(g.calls == 1);
      injected = fail_in == 0;
      fail_in = 0;
      if (!injected) CHECK(OUT_IS(g, "hi\n"));
      got_free(&g);
      close_session(s, &end);
    } else if (rc == 0) {
      fail_in = 0;
      CHECK(wait_for(&end.ends, 1, 10));
    }
    fail_in = 0;
  }
  CHECK(!injected);
}

/* issue 7, item 15: more than 1023 children in flight, all answered */
#define MANY 1100
static void test_many_children(void) {
  static xgot_t xs[MANY];
  char *argv[] = {"sleep", "1", NULL};
  rock_exec_opts_t o = {.argv = argv, .max_output = 1024};
  char msg[256];
  int started = 0, done = 0;
  for (int i = 0; i < MANY; i++)
    started += rock_exec_run(&loop, &o, on_exec, &xs[i], NULL, msg, sizeof msg) == 0;
  CHECK(started == MANY);
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  guard_fired = 0;
  uv_timer_start(&guard, on_guard, 60000, 0);
  while (!guard_fired) {
    done = 0;
    for (int i = 0; i < MANY; i++) done += xs[i].calls;
    if (done == started) break;
    uv_run(&loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&guard, NULL);
  uv_run(&loop, UV_RUN_NOWAIT);
  CHECK(done == MANY);
  int ok = 0;
  for (int i = 0; i < MANY; i++) {
    ok += xs[i].calls == 1 && xs[i].code == 0;
    free(xs[i].out), free(xs[i].err);
  }
  CHECK(ok == MANY);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0) { /* 2 pipes per child in flight */
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
  const char *home = getenv("ROCK_HOME");
  snprintf(base, sizeof base, "%s/test_session.XXXXXX", home && *home ? home : "/tmp");
  if (!mkdtemp(base) || !rock_bash_find(bash_path, sizeof bash_path)) {
    fprintf(stderr, "no temp dir or no bash\n");
    return 1;
  }
  uv_loop_init(&loop);
  rock_procs_init(&loop);

  test_output_and_status();
  test_syntax_error_hides_path();
  test_timeout_keeps_shell();
  test_interrupt();
  test_interrupt_stopped_shell();
  test_exit_ends_session();
  test_output_spilled();
  test_closed_output_fd();
  test_closed_marker_fd();
  test_hijacked_builtins();
  test_prompt_command_exit();
  test_startup_failures();
  test_startup_deadline_races_its_end();
  test_close_races_the_marker();
  test_limits();
  test_quoted_dir();
  test_close_in_flight();
  test_full_disk();
  test_exec();
  test_no_memory();
  test_many_children();

  rock_procs_close();
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
  CHECK(rmdir(base) == 0); /* every session dir is gone */
  return check_report();
}
