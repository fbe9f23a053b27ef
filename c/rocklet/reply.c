/* reply.c: answers and argument readers for every endpoint (see reply.h). */
#include "reply.h"

#include "../core/jsonstr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*hook)(void);

void reply_set_hook(void (*after_answer)(void)) { hook = after_answer; }

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
  char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
  json_decref(obj);
  if (!s) {
    reply_error(req, ROCK_E_NO_MEMORY, "could not encode the answer");
    return;
  }
  rock_http_respond_take(req, 200, "application/json", s, strlen(s)); /* no copy */
  if (hook) hook();
}

void reply_json_texts(rock_http_req_t *req, json_t *obj, size_t n, const char *const *keys,
                      const char *const *texts, const size_t *lens) {
  if (!n) {
    reply_json(req, obj);
    return;
  }
  char *rest = obj ? json_dumps(obj, JSON_COMPACT) : NULL; /* "{...}" */
  json_decref(obj);
  size_t rl = rest ? strlen(rest) : 0, need = rl + 1;
  for (size_t i = 0; i < n; i++)
    need += strlen(keys[i]) + 4 + rock_json_quote_len(texts[i] ? texts[i] : "", lens[i]);
  char *a = rest && rl >= 2 ? malloc(need) : NULL, *o = a;
  if (!a) {
    free(rest);
    reply_error(req, ROCK_E_NO_MEMORY, "could not encode the answer");
    return;
  }
  *o++ = '{';
  for (size_t i = 0; i < n; i++) {
    size_t kl = strlen(keys[i]);
    *o++ = '"';
    memcpy(o, keys[i], kl);
    o += kl;
    *o++ = '"';
    *o++ = ':';
    o = rock_json_quote(o, texts[i] ? texts[i] : "", lens[i]);
    *o++ = ',';
  }
  if (rl == 2) o[-1] = '}'; /* nothing else: the last comma closes it */
  else memcpy(o, rest + 1, rl - 1), o += rl - 1;
  *o = 0;
  free(rest);
  rock_http_respond_take(req, 200, "application/json", a, (size_t)(o - a));
  if (hook) hook();
}

static void verror_h(rock_http_req_t *req, int status, const char *headers, rock_err e,
                     const char *fmt, va_list ap) {
  char msg[4096]; /* room for an environment's death and its stderr's tail (envproc.c) */
  vsnprintf(msg, sizeof msg, fmt, ap);
  json_t *o = json_pack("{s:s, s:s}", "code", rock_err_name(e), "message", msg);
  char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  const char *body = s ? s : "{\"code\":\"no_memory\",\"message\":\"\"}";
  if (headers) {
    char h[512];
    snprintf(h, sizeof h, "Content-Type: application/json\r\n%s", headers);
    rock_http_respond_headers(req, status, h, body, strlen(body));
  } else {
    rock_http_respond(req, status, "application/json", body, strlen(body));
  }
  free(s);
  if (hook) hook();
}

static void verror(rock_http_req_t *req, int status, rock_err e, const char *fmt,
                   va_list ap) {
  verror_h(req, status, NULL, e, fmt, ap);
}

void reply_error_headers(rock_http_req_t *req, int status, const char *headers,
                         rock_err e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror_h(req, status, headers, e, fmt, ap);
  va_end(ap);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *query_arg(const char *q, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = q; p && *p; p = strchr(p, '&'), p = p ? p + 1 : NULL) {
    if (strncmp(p, key, kl) || p[kl] != '=') continue;
    const char *v = p + kl + 1;
    size_t n = strcspn(v, "&");
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
      if (v[i] == '+') *o++ = ' ';
      else if (v[i] != '%') *o++ = v[i];
      else {
        int h = i + 2 < n ? hexval(v[i + 1]) : -1;
        int l = h >= 0 ? hexval(v[i + 2]) : -1;
        if (h < 0 || l < 0 || (h == 0 && l == 0)) { /* bad escape or NUL */
          free(out);
          return NULL;
        }
        *o++ = (char)(h * 16 + l);
        i += 2;
      }
    }
    *o = 0;
    return out;
  }
  return NULL;
}

void reply_error(rock_http_req_t *req, rock_err e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(req, http_status(e), e, fmt, ap);
  va_end(ap);
}

void reply_replace_error(rock_http_req_t *req, const char *op, const char *path, int rc) {
  int e = -rc;
  reply_error(req,
              e == ENOENT || e == ENOTDIR ? ROCK_E_NOT_FOUND
              : e == EINVAL || e == EISDIR ? ROCK_E_INVALID_ARGUMENT
                                           : ROCK_E_IO,
              "%s %s: %s", op, path,
              e == EINVAL   ? "not a regular file (a device, FIFO or socket is not replaced)"
              : e == EISDIR ? "is a directory (a file's path is needed)"
                            : strerror(e));
}

void reply_error_status(rock_http_req_t *req, int status, rock_err e,
                        const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(req, status, e, fmt, ap);
  va_end(ap);
}

static void set_err(char **err, const char *fmt, const char *key, double a, double b) {
  if (*err) return;
  char buf[512];
  snprintf(buf, sizeof buf, fmt, key, a, b);
  *err = strdup(buf);
}

const char *arg_string(json_t *o, const char *key, int required, char **err) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) {
    if (required) set_err(err, "missing field '%s'", key, 0, 0);
    return NULL;
  }
  if (!json_is_string(v)) {
    set_err(err, "field '%s' must be a string", key, 0, 0);
    return NULL;
  }
  return json_string_value(v);
}

double arg_number(json_t *o, const char *key, double dflt, char **err) {
  json_t *v = json_object_get(o, key);
  if (!v || json_is_null(v)) return dflt;
  if (!json_is_number(v)) {
    set_err(err, "field '%s' must be a number", key, 0, 0);
    return dflt;
  }
  return json_number_value(v);
}

double arg_seconds(json_t *o, const char *key, double dflt, double max, char **err) {
  double v = arg_number(o, key, dflt, err);
  if (!(v >= 0 && v <= max)) { /* NaN fails too */
    set_err(err, "field '%s' must be a number of seconds from 0 to %g", key, max, 0);
    return dflt;
  }
  return v;
}

size_t arg_size(json_t *o, const char *key, size_t dflt, size_t min, size_t max,
                char **err) {
  double v = arg_number(o, key, (double)dflt, err);
  if (!(v >= (double)min && v <= (double)max)) {
    set_err(err, "field '%s' must be a byte count from %.0f to %.0f", key, (double)min,
            (double)max);
    return dflt;
  }
  return (size_t)v;
}

const char **arg_env(json_t *o, const char *key, char **err) {
  json_t *env = json_object_get(o, key);
  if (!env || json_is_null(env)) return NULL;
  if (!json_is_object(env)) {
    set_err(err, "field '%s' must be an object of strings", key, 0, 0);
    return NULL;
  }
  const char **v = calloc(2 * json_object_size(env) + 1, sizeof *v);
  if (!v) {
    set_err(err, "no memory for field '%s'", key, 0, 0);
    return NULL;
  }
  size_t n = 0;
  const char *k;
  json_t *x;
  json_object_foreach(env, k, x) {
    if (!json_is_string(x)) continue;
    v[n++] = k;
    v[n++] = json_string_value(x);
  }
  return v;
}

int rocklet_answer_as(const rock_http_req_t *req) {
  const char *a = rock_http_req_header(req, "accept");
  if (!a) return ROCKLET_JSON;
  if (strstr(a, "application/octet-stream")) return ROCKLET_RAW;
  return strstr(a, "text/plain") ? ROCKLET_TEXT : ROCKLET_JSON;
}
