/* routes.c: the rocklet's HTTP API: path -> endpoint, JSON in and out.
 * Every body is a JSON object; a malformed one, a missing field or a wrong
 * type is answered 400 with {code, message} and changes nothing. The error
 * code is the same string the host raises (core/err.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocklet.h"

static int http_status(rock_err e) {
  switch (e) {
  case ROCK_E_INVALID_ARGUMENT:
  case ROCK_E_BAD_REQUEST:
    return 400;
  case ROCK_E_NOT_FOUND:
  case ROCK_E_SESSION_NOT_FOUND:
    return 404;
  case ROCK_E_SESSION_EXISTS:
  case ROCK_E_SESSION_BUSY:
    return 409;
  default:
    return 500;
  }
}

void reply_json(rock_http_req_t *req, json_t *obj) {
  char *s = json_dumps(obj, JSON_COMPACT);
  json_decref(obj);
  if (!s) {
    reply_error(req, ROCK_E_NO_MEMORY, "could not encode the answer");
    return;
  }
  rock_http_respond(req, 200, "application/json", s, strlen(s));
  free(s);
  rocklet_touch();
}

void reply_error(rock_http_req_t *req, rock_err e, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_t *o = json_pack("{s:s, s:s}", "code", rock_err_name(e), "message", msg);
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  const char *body = s ? s : "{\"code\":\"internal\",\"message\":\"\"}";
  rock_http_respond(req, http_status(e), "application/json", body,
                    strlen(body));
  free(s);
  rocklet_touch();
}

static void set_err(char **err, const char *fmt, const char *key) {
  if (*err) return;
  size_t n = strlen(fmt) + strlen(key);
  *err = malloc(n);
  if (*err) snprintf(*err, n, fmt, key);
}

const char *arg_string(json_t *o, const char *key, int required, char **err) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) {
    if (required) set_err(err, "missing field '%s'", key);
    return NULL;
  }
  if (!json_is_string(v)) {
    set_err(err, "field '%s' must be a string", key);
    return NULL;
  }
  return json_string_value(v);
}

double arg_number(json_t *o, const char *key, double dflt, char **err) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return dflt;
  if (!json_is_number(v)) {
    set_err(err, "field '%s' must be a number", key);
    return dflt;
  }
  return json_number_value(v);
}

static void is_alive(rock_http_req_t *req, json_t *args) {
  (void)args;
  reply_json(req, json_pack("{s:b, s:s, s:i, s:s}", "is_alive", 1, "version",
                            ROCKLET_VERSION, "pid", (int)getpid(), "message",
                            "rocklet is alive"));
}

/* The lease, read without renewing it (for `rock ps`). */
static void lease(rock_http_req_t *req, json_t *args) {
  (void)args;
  double left = rocklet_lease_left();
  reply_json(req, left < 0 ? json_pack("{s:n}", "lease_left")
                           : json_pack("{s:f}", "lease_left", left));
}

static void close_all(rock_http_req_t *req, json_t *args) {
  (void)args;
  reply_json(req, json_pack("{s:b}", "closed", 1));
  rocklet_shutdown("close requested");
}

typedef void (*route_fn)(rock_http_req_t *, json_t *);
static const struct {
  const char *path;
  route_fn fn;
} routes[] = {
    {"/is_alive", is_alive},
    {"/create_session", session_create},
    {"/run_in_session", session_run},
    {"/interrupt", session_interrupt},
    {"/close_session", session_close},
    {"/execute", exec_run},
    {"/read_file", files_read},
    {"/write_file", files_write},
    {"/upload", upload_run},
    {"/close", close_all},
    {"/lease", lease},
};

void routes_handle(rock_http_req_t *req, void *data) {
  (void)data;
  if (strcmp(req->path, "/lease")) rocklet_touch();
  route_fn fn = NULL;
  for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
    if (!strcmp(req->path, routes[i].path)) fn = routes[i].fn;
  if (!fn) {
    reply_error(req, ROCK_E_NOT_FOUND, "no endpoint %s", req->path);
    return;
  }
  if (req->body_len == (size_t)-1) {
    reply_error(req, ROCK_E_BAD_REQUEST, "request body too large");
    return;
  }
  json_t *args;
  if (req->body_len == 0) {
    args = json_object();
  } else {
    json_error_t je;
    args = json_loadb(req->body, req->body_len, 0, &je);
    if (!args) {
      reply_error(req, ROCK_E_BAD_REQUEST, "malformed JSON: %s (at %d:%d)",
                  je.text, je.line, je.column);
      return;
    }
    if (!json_is_object(args)) {
      json_decref(args);
      reply_error(req, ROCK_E_BAD_REQUEST, "body must be a JSON object");
      return;
    }
  }
  fn(req, args);
  json_decref(args);
}
