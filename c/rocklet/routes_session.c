/* routes_session.c: /create_session, /run_in_session, /interrupt and
 * /close_session on the wire, and the registry of named sessions. The
 * sessions themselves are session.c's; answers go through reply.c. A
 * client that goes away before its answer interrupts its command (or ends
 * the session it was creating): the session is usable again. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/base64.h"
#include "bash.h"
#include "rocklet.h"
#include "session.h"
#include "users.h"

/* One named session. Freed in on_end, once bash is gone; or kept as a
 * tombstone (s == NULL) when bash ended between commands (a
 * PROMPT_COMMAND='exit 7'), until the next call on it hears so. */
typedef struct entry {
  struct entry *next;
  char name[256];
  rock_session_t *s;
  int dead;                    /* closing or ended: no longer found */
  int told;                    /* a caller was told the session ended */
  int end_code;                /* a tombstone's exit status */
  rock_http_req_t *create_req; /* waiting for the startup */
  rock_http_req_t *run_req;    /* waiting for its command */
  int run_cancelled;           /* run_req's client went away: interrupting */
  rock_http_req_t *close_req;  /* waiting for bash to go */
  /* One run that came while a cancelled command was being interrupted:
   * it starts when that one ends, instead of getting session_busy (a
   * caller that gave up and goes on must find its session usable). */
  rock_http_req_t *next_req;
  rock_buf_t next_script;
  double next_timeout;
  size_t next_max_output;
} entry_t;

static entry_t *entries;
static unsigned long counter;

static entry_t *find(const char *name) {
  for (entry_t *e = entries; e; e = e->next)
    if (!e->dead && !strcmp(e->name, name)) return e;
  return NULL;
}

/* Did the client ask for the raw answer (Accept: application/octet-stream)? */
static int wants_raw(const rock_http_req_t *req) { return rocklet_answer_as(req) == ROCKLET_RAW; }

/* The raw answer: the output's bytes as the body, the rest in headers
 * (the spill file's path URL-encoded: a header holds no line break). */
static void reply_raw(rock_http_req_t *req, const rock_session_result_t *r, const char *type) {
  static const char hex[] = "0123456789ABCDEF";
  char file[3 * PATH_MAX + 1] = "", *o = file;
  for (const char *p = r->output_file; p && *p; p++) {
    unsigned char c = (unsigned char)*p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        strchr("/-._~", c)) {
      *o++ = (char)c;
    } else {
      *o++ = '%';
      *o++ = hex[c >> 4];
      *o++ = hex[c & 15];
    }
  }
  *o = 0;
  char h[3 * PATH_MAX + 512];
  int n = snprintf(h, sizeof h,
                   "Content-Type: %s\r\nX-Failure-Reason: %s\r\n"
                   "X-Truncated: %d\r\nX-Dropped-Bytes: %" PRIu64 "\r\n"
                   "X-Output-Bytes: %" PRIu64 "\r\nX-Session-Type: bash\r\n",
                   type, r->failure_reason ? r->failure_reason : "", r->truncated, r->dropped_bytes,
                   r->output_bytes);
  if (r->have_status) n += snprintf(h + n, sizeof h - n, "X-Exit-Code: %d\r\n", r->exit_code);
  if (*file) snprintf(h + n, sizeof h - n, "X-Output-File: %s\r\n", file);
  rock_http_respond_headers(req, 200, h, r->output.data ? r->output.data : "", r->output.len);
}

/* A run's answer: raw (the bytes) or text (the cleaned output, no JSON)
 * when asked, else JSON with its output escaped once into the answer
 * (reply.c), the other fields by jansson. */
static void reply_result(rock_http_req_t *req, const rock_session_result_t *r, int as) {
  if (as != ROCKLET_JSON) {
    reply_raw(req, r, as == ROCKLET_RAW ? "application/octet-stream" : ROCKLET_TEXT_TYPE);
    if (rocklet.touch) rocklet.touch();
    return;
  }
  json_t *o = json_object();
  json_object_set_new(o, "exit_code", r->have_status ? json_integer(r->exit_code) : json_null());
  json_object_set_new(o, "failure_reason", json_string(r->failure_reason ? r->failure_reason : ""));
  json_object_set_new(o, "truncated", json_boolean(r->truncated));
  json_object_set_new(o, "dropped_bytes", json_integer((json_int_t)r->dropped_bytes));
  json_object_set_new(o, "output_bytes", json_integer((json_int_t)r->output_bytes));
  json_object_set_new(o, "output_file", r->output_file ? json_string(r->output_file) : json_null());
  json_object_set_new(o, "session_type", json_string("bash"));
  const char *key = "output", *text = r->output.data;
  size_t len = r->output.len;
  reply_json_texts(req, o, 1, &key, &text, &len);
}

/* Answer the parked run, if any, with an error (its session is going). */
static void next_fail(entry_t *e, rock_err code, const char *why) {
  rock_http_req_t *req = e->next_req;
  e->next_req = NULL;
  rock_buf_free(&e->next_script);
  if (req) reply_error(req, code, "session '%s' %s", e->name, why);
}

static void drop(entry_t *e) {
  entry_t **pp = &entries;
  while (*pp && *pp != e) pp = &(*pp)->next;
  if (*pp) *pp = e->next;
  next_fail(e, ROCK_E_SESSION_NOT_FOUND, "ended");
  free(e);
}

static void on_end(rock_session_t *s, int code, void *data) {
  entry_t *e = data;
  (void)s;
  e->s = NULL;
  if (e->close_req) reply_json(e->close_req, json_pack("{s:s}", "session_type", "bash"));
  if (e->dead || e->told || rocklet.shutting_down) {
    drop(e);
    return;
  }
  e->end_code = code; /* nobody heard of it yet: the next call will */
}

/* The next call on a tombstone: answered as a run whose shell had ended. */
static void tell_ended(rock_http_req_t *req, entry_t *e) {
  rock_session_result_t r = {0};
  r.have_status = 1;
  r.exit_code = e->end_code;
  r.failure_reason = "session_ended";
  drop(e);
  reply_result(req, &r, rocklet_answer_as(req));
}

static void started(rock_session_t *s, const rock_session_result_t *r, void *data) {
  entry_t *e = data;
  (void)s;
  rock_http_req_t *req = e->create_req;
  e->create_req = NULL;
  if (!r->err && !strcmp(r->failure_reason, "session_ended")) e->told = 1;
  if (!r->err) {
    if (req) reply_result(req, r, ROCKLET_JSON);
    return;
  }
  e->dead = 1; /* bash is on its way out; on_end frees e */
  if (req) reply_error(req, r->err, "session '%s': %s", e->name, r->message);
}

static void create_aborted(rock_http_req_t *req) {
  entry_t *e = req->user;
  if (e->create_req != req) return;
  e->dead = 1; /* nobody will use it: end it */
  rock_session_close(e->s);
}

/* remote_user: the user in the sandbox's own /etc/passwd, whom the
 * rocklet can become. Returns 0 (u filled), or -1 (answered). */
static int user_arg(rock_http_req_t *req, const char *name, rock_user_t *u) {
  int rc = rock_user_lookup(name, "/etc/passwd", "/etc/group", u);
  if (rc == -ENOENT) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT,
                "field 'remote_user': no user '%s' in the sandbox's /etc/passwd", name);
    return -1;
  }
  if (rc) {
    reply_error(req, ROCK_E_IO, "remote_user '%s': reading /etc/passwd: %s", name, strerror(-rc));
    return -1;
  }
  if (geteuid() != 0 && (u->uid != geteuid() || u->gid != getegid())) {
    reply_error(req, ROCK_E_SPAWN_FAILED,
                "remote_user '%s' needs a rocklet running as root (it runs as uid %d)", name,
                (int)geteuid());
    return -1;
  }
  return 0;
}

void session_create(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *name = arg_string(args, "session", 0, &err);
  const char *cwd = arg_string(args, "cwd", 0, &err);
  const char *remote_user = arg_string(args, "remote_user", 0, &err);
  const char **env = arg_env(args, "env", &err);
  json_t *sources = json_object_get(args, "startup_source");
  double startup_timeout = arg_seconds(args, "startup_timeout", ROCKLET_DEFAULT_STARTUP_TIMEOUT,
                                       ROCK_SESSION_MAX_TIMEOUT, &err);
  if (!name) name = "default";
  if (!err && startup_timeout <= 0) err = strdup("field 'startup_timeout' must be > 0");
  if (!err && sources && !json_is_null(sources) && !json_is_array(sources))
    err = strdup("field 'startup_source' must be a list of paths");
  if (!err && (!*name || strlen(name) >= sizeof ((entry_t *)0)->name))
    err = strdup("field 'session' must be a non-empty name under 256 bytes");
  rock_user_t user;
  if (!err && remote_user && user_arg(req, remote_user, &user)) {
    free(env);
    return;
  }
  const char **src = NULL;
  if (!err) {
    src = calloc(json_array_size(sources) + 1, sizeof *src);
    size_t i, n = 0;
    json_t *v;
    if (!src) {
      free(env);
      reply_error(req, ROCK_E_NO_MEMORY, "no memory for the startup files");
      return;
    }
    json_array_foreach(sources, i, v) if (json_is_string(v)) src[n++] = json_string_value(v);
  }
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    free(env);
    free(src);
    return;
  }
  char bash[PATH_MAX];
  entry_t *e = find(name);
  if (e && !e->s) drop(e); /* a tombstone: the name is free */
  e = NULL;
  if (find(name)) {
    reply_error(req, ROCK_E_SESSION_EXISTS, "session '%s' already exists", name);
  } else if (!rock_bash_find(bash, sizeof bash)) {
    reply_error(req, ROCK_E_NO_BASH,
                "no bash in this sandbox (PATH=%s): sessions need bash; /execute still works",
                getenv("PATH") ? getenv("PATH") : "");
  } else if (!(e = calloc(1, sizeof *e))) {
    reply_error(req, ROCK_E_NO_MEMORY, "no memory for a session");
  } else {
    snprintf(e->name, sizeof e->name, "%s", name);
    char parent[PATH_MAX], dir[PATH_MAX + 32], msg[512];
    snprintf(parent, sizeof parent, "%s/sessions", rocklet.dir);
    mkdir(parent, 0700);
    snprintf(dir, sizeof dir, "%s/s%lu", parent, ++counter);
    rock_session_opts_t o = {.dir = dir, .bash = bash, .cwd = cwd, .env = env,
                             .user = remote_user ? &user : NULL,
                             .sources = src, .startup_timeout = startup_timeout,
                             .on_end = on_end, .data = e};
    e->create_req = req;
    rock_err rc = rock_session_open(rocklet.loop, &e->s, &o, started, e, msg, sizeof msg);
    if (rc) {
      free(e);
      reply_error(req, rc, "%s", msg);
    } else {
      e->next = entries;
      entries = e;
      if (e->create_req) { /* not answered yet */
        req->user = e;
        req->on_abort = create_aborted;
      }
    }
  }
  free(env);
  free(src);
}

/* The live session a call names; a tombstone is told (run) or dropped. */
static entry_t *session_arg(rock_http_req_t *req, json_t *args, int run) {
  char *err = NULL;
  const char *name = arg_string(args, "session", 0, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return NULL;
  }
  if (!name) name = "default";
  entry_t *e = find(name);
  if (e && !e->s && run) {
    tell_ended(req, e);
    return NULL;
  }
  if (e && !e->s) {
    drop(e);
    e = NULL;
  }
  if (!e || rock_session_ended(e->s)) {
    reply_error(req, ROCK_E_SESSION_NOT_FOUND, "no session named '%s'", name);
    return NULL;
  }
  return e;
}

static void start_run(entry_t *e, rock_http_req_t *req, const char *script, size_t len,
                      double timeout, size_t max_output);

static void ran(rock_session_t *s, const rock_session_result_t *r, void *data) {
  entry_t *e = data;
  (void)s;
  rock_http_req_t *req = e->run_req;
  e->run_req = NULL;
  e->run_cancelled = 0;
  int ended = r->err || !strcmp(r->failure_reason, "session_ended");
  if (ended) e->told = 1;
  if (req) { /* else answered at shutdown */
    if (r->err) reply_error(req, r->err, "session '%s': %s", e->name, r->message);
    else reply_result(req, r, rocklet_answer_as(req));
  }
  if (!e->next_req) return;
  if (ended || rocklet.shutting_down) {
    next_fail(e, ROCK_E_SESSION_NOT_FOUND, "ended");
    return;
  }
  rock_http_req_t *next = e->next_req; /* the parked run goes now */
  rock_buf_t script = e->next_script;
  e->next_req = NULL;
  e->next_script = (rock_buf_t){0};
  start_run(e, next, script.data ? script.data : "", script.len, e->next_timeout,
            e->next_max_output);
  rock_buf_free(&script);
}

/* The client went away: interrupt its command, as /interrupt does, so the
 * session is free for the next call (the late answer goes to the orphan). */
static void run_aborted(rock_http_req_t *req) {
  entry_t *e = req->user;
  if (e->run_req != req) return;
  e->run_cancelled = 1;
  rock_session_interrupt(e->s, "cancelled");
}

/* A parked run's client went away before it started. */
static void next_aborted(rock_http_req_t *req) {
  entry_t *e = req->user;
  if (e->next_req != req) return;
  e->next_req = NULL;
  rock_buf_free(&e->next_script);
  reply_error(req, ROCK_E_CANCELLED, "the client went away"); /* frees the orphan */
}

void session_run(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  json_t *cv = json_object_get(args, "command");
  const char *enc = arg_string(args, "encoding", 0, &err);
  double timeout = arg_seconds(args, "timeout", 0, ROCK_SESSION_MAX_TIMEOUT, &err);
  size_t max_output = arg_size(args, "max_output", ROCKLET_DEFAULT_MAX_OUTPUT,
                               ROCK_SESSION_MIN_OUTPUT, ROCK_SESSION_MAX_OUTPUT, &err);
  if (!err && !json_is_string(cv)) arg_string(args, "command", 1, &err);
  if (!err && enc && strcmp(enc, "base64") && strcmp(enc, "utf-8"))
    err = strdup("field 'encoding' must be \"utf-8\" (the default) or \"base64\"");
  rock_buf_t bin = {0};
  if (!err && enc && !strcmp(enc, "base64")) {
    int rc = rock_base64_decode(&bin, json_string_value(cv), json_string_length(cv));
    if (rc == -1) {
      reply_error(req, ROCK_E_NO_MEMORY, "no memory for the command");
      rock_buf_free(&bin);
      return;
    }
    if (rc) err = strdup("field 'command' is not base64");
  }
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    rock_buf_free(&bin);
    return;
  }
  entry_t *e = session_arg(req, args, 1);
  if (!e) {
    rock_buf_free(&bin);
    return;
  }
  const char *script = bin.data ? bin.data : json_string_value(cv);
  size_t len = enc && !strcmp(enc, "base64") ? bin.len : json_string_length(cv);
  if (rock_session_busy(e->s) && e->run_cancelled && !e->next_req) {
    /* park it behind the command being cancelled */
    if (rock_buf_append(&e->next_script, script, len)) {
      rock_buf_free(&e->next_script);
      reply_error(req, ROCK_E_NO_MEMORY, "no memory for the command");
    } else {
      e->next_req = req;
      e->next_timeout = timeout;
      e->next_max_output = max_output;
      req->user = e;
      req->on_abort = next_aborted;
    }
    rock_buf_free(&bin);
    return;
  }
  if (rock_session_busy(e->s)) {
    reply_error(req, ROCK_E_SESSION_BUSY, "session '%s' is still running a command", e->name);
    rock_buf_free(&bin);
    return;
  }
  start_run(e, req, script, len, timeout, max_output);
  rock_buf_free(&bin);
}

static void start_run(entry_t *e, rock_http_req_t *req, const char *script, size_t len,
                      double timeout, size_t max_output) {
  e->run_req = req;
  rock_err rc = rock_session_run(e->s, script, len, timeout, max_output, wants_raw(req), ran, e);
  if (rc) {
    if (e->run_req == req) e->run_req = NULL;
    if (rc == ROCK_E_SESSION_BUSY)
      reply_error(req, rc, "session '%s' is still running a command", e->name);
    else if (rc == ROCK_E_SESSION_ENDED)
      reply_error(req, ROCK_E_SESSION_NOT_FOUND, "no session named '%s'", e->name);
    else
      reply_error(req, rc, "session '%s': %s", e->name, rock_err_message(rc));
    return;
  }
  if (e->run_req == req) { /* not answered yet */
    req->user = e;
    req->on_abort = run_aborted;
  }
}

void session_interrupt(rock_http_req_t *req, json_t *args) {
  entry_t *e = session_arg(req, args, 0);
  if (!e) return;
  int running = rock_session_interrupt(e->s, "interrupted");
  reply_json(req, json_pack("{s:b}", "interrupted", running));
}

void session_close(rock_http_req_t *req, json_t *args) {
  entry_t *e = session_arg(req, args, 0);
  if (!e) return;
  e->dead = 1;
  e->close_req = req;
  rock_session_close(e->s); /* on_end answers once bash is reaped */
}

void sessions_close_all(void) {
  for (entry_t *e = entries; e; e = e->next) {
    if (!e->s) continue;
    rock_http_req_t *r[3] = {e->create_req, e->run_req, e->close_req};
    e->create_req = e->run_req = e->close_req = NULL;
    if (r[0]) reply_error(r[0], ROCK_E_SESSION_ENDED, "rocklet is shutting down");
    if (r[1]) reply_error(r[1], ROCK_E_SESSION_ENDED, "rocklet is shutting down");
    if (r[2]) reply_json(r[2], json_pack("{s:s}", "session_type", "bash"));
    next_fail(e, ROCK_E_SESSION_ENDED, "ended: rocklet is shutting down");
    e->dead = 1;
    rock_session_close(e->s);
  }
}
