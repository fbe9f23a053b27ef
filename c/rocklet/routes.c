/* routes.c: the rocklet's HTTP API: path and method -> endpoint, plus the
 * small endpoints (is_alive, lease, close). Every body is a JSON object; a
 * malformed one is answered 400 with {code, message} and changes nothing.
 * Every endpoint takes POST; /is_alive and /lease take GET and HEAD too;
 * another method is a 405 (bad_request). Text may hold \u0000 only in
 * write_file's content and run_in_session's command. Once the rocklet is
 * shutting down only the GET endpoints are served (/is_alive, /lease,
 * /jobs); the others answer sandbox_not_alive.
 * /file (raw bytes, GET, HEAD and PUT) is bytes.c's, before all that.
 * The families: routes_session.c, routes_exec.c, routes_jobs.c, routes_env.c, files.c,
 * routes_editor.c (which parses its body off the loop: routes_parse); their
 * answers: reply.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocklet.h"

static void is_alive(rock_http_req_t *req, json_t *args) {
  (void)args;
  reply_json(req, json_pack("{s:b, s:s, s:i, s:s}", "is_alive", 1, "version",
                            ROCKLET_VERSION, "pid", (int)getpid(), "message",
                            "rocklet is alive"));
}

/* The lease, read without renewing it (for `rock ps`). */
static void lease(rock_http_req_t *req, json_t *args) {
  (void)args;
  double left = rocklet.lease_left ? rocklet.lease_left() : -1;
  char body[64];
  if (left < 0) snprintf(body, sizeof body, "{\"lease_left\":null}");
  else snprintf(body, sizeof body, "{\"lease_left\":%.3f}", left);
  rock_http_respond(req, 200, "application/json", body, strlen(body)); /* no renewal */
}

static void close_all(rock_http_req_t *req, json_t *args) {
  (void)args;
  reply_json(req, json_pack("{s:b}", "closed", 1));
  if (rocklet.shutdown) rocklet.shutdown("close requested");
}

typedef void (*route_fn)(rock_http_req_t *, json_t *);
static const struct {
  const char *path;
  route_fn fn;
  int get;             /* GET (and HEAD) allowed besides POST; served in a shutdown */
  const char *any_nul; /* the one field whose text may hold NUL (\u0000) */
} routes[] = {
    {"/is_alive", is_alive, 1, NULL},
    {"/create_session", session_create, 0, NULL},
    {"/run_in_session", session_run, 0, "command"},
    {"/interrupt", session_interrupt, 0, NULL},
    {"/close_session", session_close, 0, NULL},
    {"/execute", exec_run, 0, NULL},
    {"/read_file", files_read, 0, NULL},
    {"/write_file", files_write, 0, "content"},
    {"/editor", editor_run, 0, NULL}, /* routes_editor.c: parses its body itself */
    {"/upload", upload_run, 0, NULL}, /* its body went to a file (upload.c) */
    {"/jobs/start", jobs_start, 0, NULL}, /* routes_jobs.c */
    {"/env/start", env_start, 0, NULL}, /* routes_env.c */
    {"/env/call", env_call, 0, NULL},
    {"/env/stop", env_stop, 0, NULL},
    {"/jobs/wait", jobs_wait, 0, NULL},
    {"/jobs/kill", jobs_kill, 0, NULL},
    {"/jobs", jobs_list, 1, NULL},
    {"/close", close_all, 0, NULL},
    {"/lease", lease, 1, NULL},
};

/* Does v hold a string with a NUL byte (at any depth)? Endpoints read
 * strings as C strings: a path, a name or an argv element cut at a NUL
 * would name something else. */
static int holds_nul(json_t *v) {
  size_t i;
  const char *k;
  json_t *x;
  if (json_is_string(v)) return strlen(json_string_value(v)) != json_string_length(v);
  if (json_is_array(v)) json_array_foreach(v, i, x) if (holds_nul(x)) return 1;
  if (json_is_object(v)) json_object_foreach(v, k, x) if (holds_nul(x)) return 1;
  return 0;
}

void routes_handle(rock_http_req_t *req, void *data) {
  (void)data;
  if (strcmp(req->path, "/lease") && rocklet.touch) rocklet.touch();
  if (!strcmp(req->path, "/file")) { /* raw bytes, no JSON: bytes.c */
    if (rocklet.shutting_down) {
      if (req->on_drop) req->on_drop(req); /* a PUT's temp file goes */
      reply_error(req, ROCK_E_SANDBOX_NOT_ALIVE, "rocklet is shutting down");
    } else {
      bytes_file(req);
    }
    return;
  }
  int at = -1;
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
    if (!strcmp(req->path, routes[i].path)) at = (int)i;
  if (at < 0) {
    reply_error(req, ROCK_E_NOT_FOUND, "no endpoint %s", req->path);
    return;
  }
  const char *m = req->method ? req->method : "";
  if (strcmp(m, "POST") && !(routes[at].get && (!strcmp(m, "GET") || !strcmp(m, "HEAD")))) {
    reply_error_status(req, 405, ROCK_E_BAD_REQUEST, "%s takes %s, not %s", req->path,
                       routes[at].get ? "POST, GET or HEAD" : "POST", m);
    return;
  }
  if (rocklet.shutting_down && !routes[at].get) { /* no new work once the end began */
    if (req->on_drop) req->on_drop(req); /* an upload's temp file goes */
    reply_error(req, ROCK_E_SANDBOX_NOT_ALIVE, "rocklet is shutting down");
    return;
  }
  route_fn fn = routes[at].fn;
  if (fn == editor_run) { /* off the loop: the body may be 32 MiB */
    fn(req, NULL);
    return;
  }
  rock_err code;
  char msg[512];
  json_t *args =
      routes_parse(req->body, req->body_len, routes[at].any_nul, &code, msg, sizeof msg);
  if (!args) {
    reply_error(req, code, "%s", msg);
    return;
  }
  fn(req, args);
  json_decref(args);
}

json_t *routes_parse(const char *body, size_t len, const char *any_nul, rock_err *code,
                     char *msg, size_t msg_size) {
  if (len == 0) return json_object();
  json_error_t je;
  /* \u0000 is valid JSON text: write_file's content and a command may
   * hold it (bytes that round-trip); any other field holding it is
   * refused below (issue 7 item 18, hostile round) */
  json_t *args = json_loadb(body, len, JSON_ALLOW_NUL, &je);
  if (!args) {
    *code = ROCK_E_BAD_REQUEST;
    snprintf(msg, msg_size, "malformed JSON: %s (at %d:%d)", je.text, je.line, je.column);
    return NULL;
  }
  if (!json_is_object(args)) {
    json_decref(args);
    *code = ROCK_E_BAD_REQUEST;
    snprintf(msg, msg_size, "body must be a JSON object");
    return NULL;
  }
  const char *k;
  json_t *x;
  json_object_foreach(args, k, x) {
    if (any_nul && !strcmp(k, any_nul)) continue;
    if (holds_nul(x)) {
      *code = ROCK_E_INVALID_ARGUMENT;
      snprintf(msg, msg_size, "field '%.200s' holds a NUL byte", k);
      json_decref(args);
      return NULL;
    }
  }
  return args;
}
