/* engine.c: the Docker Engine API operations rock uses (see engine.h).
 * To add an operation, add a row to OPS; nothing else changes. */
#include "engine.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/buf.h"

#define IMAGE_404 1 /* a 404 of this op means the image is missing */

typedef struct {
  const char *name, *method, *path;
  int flags;
} op_t;

static const op_t OPS[] = {
    {"ping", "GET", "/_ping", 0},
    {"version", "GET", "/version", 0},
    {"image_inspect", "GET", "/images/{name}/json", IMAGE_404},
    {"image_list", "GET", "/images/json", 0},
    {"image_pull", "POST", "/images/create", IMAGE_404}, /* fromImage=, tag= */
    {"image_remove", "DELETE", "/images/{name}", IMAGE_404},
    {"image_tag", "POST", "/images/{name}/tag", IMAGE_404}, /* repo=, tag= */
    {"image_save", "GET", "/images/{name}/get", IMAGE_404},
    {"image_load", "POST", "/images/load", 0},
    {"image_history", "GET", "/images/{name}/history", IMAGE_404},
    {"container_create", "POST", "/containers/create", IMAGE_404}, /* name= */
    {"container_start", "POST", "/containers/{id}/start", 0},
    {"container_inspect", "GET", "/containers/{id}/json", 0},
    {"container_wait", "POST", "/containers/{id}/wait", 0},
    {"container_stop", "POST", "/containers/{id}/stop", 0}, /* t= */
    {"container_kill", "POST", "/containers/{id}/kill", 0}, /* signal= */
    {"container_remove", "DELETE", "/containers/{id}", 0},  /* force=, v= */
    {"container_list", "GET", "/containers/json", 0},       /* all=, filters= */
    {"container_logs", "GET", "/containers/{id}/logs", 0},  /* tail=, ... */
    {"container_stats", "GET", "/containers/{id}/stats", 0}, /* stream=false */
    {"container_commit", "POST", "/commit", 0}, /* container=, repo=, tag= */
};
#define NOPS (sizeof OPS / sizeof OPS[0])

static const op_t *find_op(const char *name) {
  for (size_t i = 0; i < NOPS; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}

/* Appends that remember a failure, so a URL is built without a check
 * after each piece and checked once at the end. */
typedef struct {
  rock_buf_t b;
  int failed;
} str_t;

static void put(str_t *s, const char *p, size_t n) {
  if (!s->failed && rock_buf_append(&s->b, p, n)) s->failed = 1;
}

/* Percent-encode all but RFC 3986's unreserved characters. */
static void put_escaped(str_t *s, const char *v) {
  static const char hex[] = "0123456789ABCDEF";
  for (; *v; v++) {
    unsigned char c = (unsigned char)*v;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
      put(s, v, 1);
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      put(s, e, 3);
    }
  }
}

static const char *param(const char *const *params, const char *name,
                         size_t len) {
  for (const char *const *p = params; p && p[0] && p[1]; p += 2)
    if (strlen(p[0]) == len && !strncmp(p[0], name, len)) return p[1];
  return NULL;
}

rock_err rock_engine_request(const rock_engine_call_t *call,
                             rock_http_request_t *req, char **url,
                             const char **why) {
  const op_t *op = call->op ? find_op(call->op) : NULL;
  *url = NULL;
  if (!op) {
    *why = "unknown engine operation";
    return ROCK_E_INVALID_ARGUMENT;
  }
  if (!call->socket) {
    *why = "no engine socket";
    return ROCK_E_INVALID_ARGUMENT;
  }
  str_t u = {0};
  put(&u, "http://engine/" ROCK_ENGINE_API, strlen("http://engine/" ROCK_ENGINE_API));
  /* the path, {placeholders} filled from params */
  for (const char *p = op->path; *p;) {
    const char *open = strchr(p, '{');
    if (!open) {
      put(&u, p, strlen(p));
      break;
    }
    put(&u, p, open - p);
    const char *close = strchr(open, '}');
    const char *v = param(call->params, open + 1, close - open - 1);
    if (!v || !*v) {
      rock_buf_free(&u.b);
      *why = "a path parameter (id or name) is missing";
      return ROCK_E_INVALID_ARGUMENT;
    }
    put_escaped(&u, v);
    p = close + 1;
  }
  /* every other parameter goes to the query string */
  char sep = '?';
  for (const char *const *p = call->params; p && p[0] && p[1]; p += 2) {
    char ph[64];
    snprintf(ph, sizeof ph, "{%s}", p[0]);
    if (strstr(op->path, ph)) continue;
    put(&u, &sep, 1);
    put_escaped(&u, p[0]);
    put(&u, "=", 1);
    put_escaped(&u, p[1]);
    sep = '&';
  }
  if (u.failed) {
    rock_buf_free(&u.b);
    *why = "out of memory";
    return ROCK_E_NO_MEMORY;
  }
  memset(req, 0, sizeof *req);
  req->method = op->method;
  req->url = *url = u.b.data;
  req->unix_socket = call->socket;
  req->body = call->body;
  req->body_len = call->body_len;
  req->body_file = call->body_file;
  req->out_file = call->out_file;
  req->on_chunk = call->on_chunk;
  req->timeout = call->timeout;
  rock_engine_call_t *c = (rock_engine_call_t *)call; /* headers live in it */
  c->headers[0] = call->body_file ? "Content-Type: application/x-tar"
                                  : "Content-Type: application/json";
  c->headers[1] = NULL;
  req->headers = c->headers;
  return ROCK_E_OK;
}

void rock_engine_result(const char *opname, const rock_http_response_t *res,
                        rock_engine_result_t *out) {
  const op_t *op = opname ? find_op(opname) : NULL;
  memset(out, 0, sizeof *out);
  out->status = res->status;
  out->body = res->body;
  out->body_len = res->body_len;
  if (res->err != ROCK_E_OK) {
    out->err = res->err == ROCK_E_TIMEOUT ? ROCK_E_TIMEOUT
               : res->err == ROCK_E_IO    ? ROCK_E_IO
                                          : ROCK_E_ENGINE_UNAVAILABLE;
    snprintf(out->message_buf, sizeof out->message_buf, "%s",
             res->message ? res->message : rock_err_message(out->err));
    out->message = out->message_buf;
    return;
  }
  long s = res->status;
  if ((s >= 200 && s < 300) || s == 304) return;
  out->err = s == 404   ? (op && (op->flags & IMAGE_404) ? ROCK_E_IMAGE_NOT_FOUND
                                                         : ROCK_E_NOT_FOUND)
             : s == 409 ? ROCK_E_CONFLICT
             : s == 400 ? ROCK_E_INVALID_ARGUMENT
                        : ROCK_E_ENGINE_ERROR;
  /* {"message": "..."} from docker and podman; else the raw body */
  json_error_t jerr;
  json_t *j = json_loadb(res->body, res->body_len, 0, &jerr);
  const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
  if (m)
    snprintf(out->message_buf, sizeof out->message_buf, "%s", m);
  else
    snprintf(out->message_buf, sizeof out->message_buf, "HTTP %ld: %.*s", s,
             (int)(res->body_len > 400 ? 400 : res->body_len), res->body);
  json_decref(j);
  out->message = out->message_buf;
}
