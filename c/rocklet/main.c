/* main.c: the rocklet, rock's agent inside every sandbox.
 *   rocklet serve --socket PATH [--dir DIR] [--idle-timeout S] [--owner-pid P]
 * Serves the HTTP API of routes.c on a unix socket, on one libuv loop
 * (editor calls run on libuv's thread pool: routes_editor.c).
 * It is a child subreaper (PID 1 in a container: the init), so every
 * process it starts, however deep, is reaped here and killed on the way
 * out: on /close, SIGTERM/SIGINT/SIGHUP, idle expiry, or the owner's death
 * (--owner-pid: PDEATHSIG, for the local backend). --max-file-size BYTES
 * sets RLIMIT_FSIZE, soft and hard, for itself and so for every process
 * it starts (the sandbox's disk limit, per file). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/log.h"
#include "jobs.h"
#include "envproc.h"
#include "gem/gem.h"
#include "procs.h"
#include "rocklet.h"

rocklet_t rocklet;
static rock_http_server_t *server;
static char socket_path[4096];
static uv_timer_t idle_timer;
static uv_signal_t sig_term, sig_int, sig_hup;
static double idle_timeout;
static uv_idle_t exit_idle;

static void usage(FILE *f) {
  fprintf(f,
          "usage: rocklet serve --socket PATH [--dir DIR] [--idle-timeout S] "
          "[--owner-pid PID] [--max-file-size BYTES]\n"
          "       rocklet gem ENV_ID | --list   (a shipped environment: docs/environments.md)\n"
          "       rocklet --version\n"
          "Serves rock's sandbox API (sessions, execute, files) over HTTP on a "
          "unix socket.\n");
}

static void walk_close(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h)) uv_close(h, NULL);
}

static void exit_now(uv_idle_t *h) {
  (void)h;
  uv_stop(rocklet.loop);
}

/* Once no editor call runs: let the loop flush the last answers, then stop. */
static void exit_soon(void) {
  uv_idle_init(rocklet.loop, &exit_idle);
  uv_idle_start(&exit_idle, exit_now);
}

static void rocklet_touch(void);

static void rocklet_shutdown(const char *why) {
  if (rocklet.shutting_down) return;
  rocklet.shutting_down = 1;
  rock_log(ROCK_LOG_INFO, "rocklet", "msg=\"shutting down\" why=\"%s\"", why);
  sessions_close_all();
  jobs_close_all();
  rock_envproc_stop_all(); /* process environments */
  rock_procs_kill_all(); /* background jobs too: they are our children */
  unlink(socket_path);
  /* an edit under way finishes and is answered (routes.c takes no new
   * call meanwhile); those waiting are answered now */
  editor_close_all(exit_soon);
}

static void on_idle_expired(uv_timer_t *t) {
  (void)t;
  if (rock_http_server_inflight(server) > 0) { /* busy is not idle */
    rocklet_touch();
    return;
  }
  rocklet_shutdown("idle timeout");
}

static void rocklet_touch(void) {
  if (idle_timeout > 0 && !rocklet.shutting_down)
    uv_timer_start(&idle_timer, on_idle_expired, (uint64_t)(idle_timeout * 1000), 0);
}

static double rocklet_lease_left(void) {
  if (idle_timeout <= 0) return -1;
  return uv_timer_get_due_in(&idle_timer) / 1000.0;
}

static void on_signal(uv_signal_t *h, int sig) {
  (void)h;
  rocklet_shutdown(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
}

/* Make dir and its missing parents, owner-only. Returns 0 or -errno. */
static int mkdirs(const char *dir) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return -ENAMETOOLONG;
  for (char *s = p + 1;; s++) {
    if (*s && *s != '/') continue;
    char c = *s;
    *s = 0;
    if (mkdir(p, 0700) && errno != EEXIST) return -errno;
    if (!c) return 0;
    *s = c;
  }
}

/* Many children in flight need many pipes: take every fd we may. */
static void raise_fd_limit(void) {
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

/* The largest file anything here may write: RLIMIT_FSIZE, soft and hard
 * (a process without CAP_SYS_RESOURCE cannot raise it again), inherited
 * by every child. The rocklet itself ignores SIGXFSZ: a write of its own
 * past the limit (an output spill) fails with EFBIG instead of killing
 * it; its children get the default back (child.c). */
static int limit_file_size(const char *v) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *end || *v == '-' || n == 0) {
    fprintf(stderr, "rocklet: --max-file-size wants a positive number of bytes, got %s\n", v);
    return -1;
  }
  struct rlimit r;
  if (getrlimit(RLIMIT_FSIZE, &r)) r.rlim_max = RLIM_INFINITY;
  rlim_t want = (rlim_t)n;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want) want = r.rlim_max;
  r.rlim_cur = r.rlim_max = want;
  if (setrlimit(RLIMIT_FSIZE, &r)) {
    fprintf(stderr, "rocklet: cannot limit file sizes to %s bytes: %s\n", v, strerror(errno));
    return -1;
  }
  signal(SIGXFSZ, SIG_IGN);
  return 0;
}

static int serve(const char *sock, const char *dir, pid_t owner) {
  if (owner > 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != owner) return 0; /* the owner died before we got here */
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGPIPE, SIG_IGN);
  raise_fd_limit();
  memcpy(rocklet.dir, dir, strlen(dir) + 1); /* length checked in main */
  snprintf(socket_path, sizeof socket_path, "%s", sock);
  rocklet.loop = uv_default_loop();
  json_object_seed(0); /* before the thread pool makes any JSON */
  rocklet.shutdown = rocklet_shutdown;
  rocklet.lease_left = rocklet_lease_left;
  rocklet.touch = rocklet_touch;
  reply_set_hook(rocklet_touch);
  rock_procs_init(rocklet.loop);
  /* the socket is owner-only from its first instant, whatever the
   * caller's umask; our dirs and files are made with owner-only modes,
   * and the caller's umask stays for what commands and write_file make */
  mode_t caller_umask = umask(077);
  rock_http_server_opts_t opts = ROCK_HTTP_SERVER_OPTS_DEFAULT;
  opts.on_headers = upload_on_headers; /* /upload streams its body to a file */
  opts.max_header = 80 << 10; /* keep the headers (Range) within http-parser's own bound */
  int rc = rock_http_server_start(&server, rocklet.loop, sock, &opts, routes_handle, NULL);
  umask(caller_umask);
  if (rc) {
    fprintf(stderr, "rocklet: cannot listen on %s: %s\n", sock, uv_strerror(rc));
    return 1;
  }
  chmod(sock, 0600); /* whatever the caller's umask was */
  /* --dir after the socket: making its parents must not make the socket's
   * dir appear where the caller did not provide one */
  int mrc = mkdirs(rocklet.dir);
  if (mrc) {
    fprintf(stderr, "rocklet: cannot make --dir %s: %s\n", dir, strerror(-mrc));
    rock_http_server_close(server);
    unlink(sock);
    rock_procs_close();
    uv_run(rocklet.loop, UV_RUN_DEFAULT);
    return 1;
  }
  uv_signal_init(rocklet.loop, &sig_term);
  uv_signal_init(rocklet.loop, &sig_int);
  uv_signal_init(rocklet.loop, &sig_hup);
  uv_signal_start(&sig_term, on_signal, SIGTERM);
  uv_signal_start(&sig_int, on_signal, SIGINT);
  uv_signal_start(&sig_hup, on_signal, SIGHUP);
  uv_timer_init(rocklet.loop, &idle_timer);
  rocklet_touch();
  rock_log(ROCK_LOG_INFO, "rocklet", "msg=listening socket=%s pid=%d", sock, (int)getpid());
  uv_run(rocklet.loop, UV_RUN_DEFAULT);
  rock_http_server_close(server);
  rock_procs_close();
  rock_jobs_free_all();
  uv_walk(rocklet.loop, walk_close, NULL);
  uv_run(rocklet.loop, UV_RUN_DEFAULT);
  uv_loop_close(rocklet.loop);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("rocklet %s\n", ROCKLET_VERSION);
    return 0;
  }
  if (argc >= 2 && !strcmp(argv[1], "gem")) return gem_main(argc, argv); /* gem/main.c */
  if (argc < 2 || strcmp(argv[1], "serve")) {
    usage(argc >= 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
    return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : 2;
  }
  const char *sock = NULL, *dir = NULL;
  pid_t owner = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      usage(stderr);
      return 2;
    }
    if (!strcmp(a, "--socket")) sock = v;
    else if (!strcmp(a, "--dir")) dir = v;
    else if (!strcmp(a, "--idle-timeout")) idle_timeout = atof(v);
    else if (!strcmp(a, "--owner-pid")) owner = atoi(v);
    else if (!strcmp(a, "--max-file-size")) {
      if (limit_file_size(v)) return 2;
    } else {
      fprintf(stderr, "rocklet: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    i++;
  }
  if (!sock) {
    usage(stderr);
    return 2;
  }
  if (dir && strlen(dir) >= sizeof rocklet.dir) {
    fprintf(stderr, "rocklet: --dir is too long\n");
    return 2;
  }
  char cwd[4096];
  if (!dir) dir = getcwd(cwd, sizeof cwd) ? cwd : "/tmp";
  return serve(sock, dir, owner);
}
