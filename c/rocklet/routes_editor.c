/* routes_editor.c: /editor on the wire, off the loop. Each call's body
 * (copied) is parsed and run by editor.c on libuv's thread pool, one call
 * at a time in the order they came: the loop, and with it every session
 * and /is_alive, never waits on a big file, and the editor's history is
 * only ever touched by the one call running. The answer goes out on the
 * loop: {output, error, exit_code} with HTTP 200 (a tool error is an
 * observation for the model); only a request of the wrong shape (command
 * or path missing, a field of the wrong JSON type, a path longer than
 * PATH_MAX) is a 400. The integers come as SWE-agent's argparse takes
 * them (editor_args.h): insert_line and view_range's elements may be
 * integers, numbers with an integral value, or strings Python's int()
 * reads; an insert_line argparse refuses is the tool's error 2.
 * Calls waiting hold their bodies: past ED_QUEUE_MAX bytes of them a new
 * one is refused (no_memory). A client that goes away before its call
 * starts drops it (nothing is done); a call running finishes (its file and
 * the history stay whole) and its answer is dropped. editor_close_all (the
 * rocklet's shutdown) answers the calls waiting and lets the running one
 * finish. The history lives as long as the rocklet. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor.h"
#include "editor_args.h"
#include "editor_text.h"
#include "rocklet.h"

/* The bytes of request bodies the calls waiting may hold together (the
 * first one waits whatever its size). */
#define ED_QUEUE_MAX ((size_t)64 << 20)

typedef struct call {
  struct call *next;   /* the queue, in arrival order; the head runs */
  rock_http_req_t *req;
  uv_work_t work;
  char *body;          /* the JSON text; the worker frees it once parsed */
  size_t len;
  int started;         /* handed to the thread pool */
  /* the worker's result: err (and msg) for an error answer, else answer */
  rock_err err;
  char msg[512];
  json_t *answer;
} call_t;

static call_t *head, *tail;
static size_t queued;               /* bytes of bodies held by the queue */
static rock_editor_t *editor;       /* made by the first call, kept for life */
static void (*closed)(void);        /* editor_close_all's done, once none runs */

/* ------------------------------------------------ the JSON, on the pool */

/* A JSON number with an integral value that fits a long long. */
static int integral(json_t *x, long long *v) {
  if (json_is_integer(x)) {
    *v = json_integer_value(x);
    return 1;
  }
  double d = json_is_real(x) ? json_real_value(x) : NAN;
  if (!(d >= -0x1p63 && d < 0x1p63) || d != floor(d)) return 0;
  *v = (long long)d;
  return 1;
}

/* view_range: absent, null or [] -> 0; two integers -> 1; anything else
 * -> -1, SWE-agent's "should be a list of two integers" (a tool error).
 * An element may be a string int() reads that fits a long long. */
static int view_range(json_t *v, long long r[2]) {
  if (!v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0)) return 0;
  if (!json_is_array(v) || json_array_size(v) != 2) return -1;
  for (int i = 0; i < 2; i++) {
    json_t *x = json_array_get(v, i);
    rock_buf_t big = {0};
    int ok = integral(x, &r[i]) ||
             (json_is_string(x) &&
              rock__py_int(json_string_value(x), json_string_length(x), &r[i], &big) == 1 &&
              !big.len);
    rock_buf_free(&big);
    if (!ok) return -1;
  }
  return 1;
}

/* insert_line as argparse's type=int takes what SWE-agent renders of it:
 * an integer, a string int() reads; a number with a fraction (1.5), a
 * string int() refuses or a boolean is the tool's error 2, named as
 * argparse names it (text: repr() of the str it got). 0, or -1 when out
 * of memory; an array or an object sets *err. */
static int insert_line(json_t *v, rock_editor_req_t *q, rock_buf_t *text, char **err) {
  if (!v || json_is_null(v)) return 0;
  q->insert_line_set = 1;
  if (integral(v, &q->insert_line)) return 0;
  rock_buf_t s = {0}; /* the str argparse gets (SWE-agent renders the value) */
  int rc = 0;
  if (json_is_string(v)) {
    int r = rock__py_int(json_string_value(v), json_string_length(v), &q->insert_line, text);
    if (r) {
      q->insert_line_text = text->data; /* NULL but for an integer past a long long */
      return r < 0 ? -1 : 0;
    }
    rc = rock_buf_append(&s, json_string_value(v), json_string_length(v));
  } else if (json_is_real(v)) {
    rc = rock__py_float(&s, json_real_value(v));
  } else if (json_is_boolean(v)) {
    rc = rock_buf_puts(&s, json_is_true(v) ? "True" : "False");
  } else {
    q->insert_line_set = 0;
    *err = strdup("field 'insert_line' must be an integer or a string");
    return 0;
  }
  q->insert_line_set = -1;
  rc = rc || rock__py_repr(text, s.data ? s.data : "", s.len);
  q->insert_line_text = text->data;
  rock_buf_free(&s);
  return rc ? -1 : 0;
}

/* A path longer than any the system takes names nothing, and every
 * message would quote it. */
static void short_path(const char *p, const char *key, char **err) {
  if (!*err && p && strlen(p) >= PATH_MAX) {
    char m[128];
    snprintf(m, sizeof m, "field '%s' is longer than PATH_MAX (%d bytes)", key, PATH_MAX);
    *err = strdup(m);
  }
}

/* The answer: {output, error, exit_code}; NULL when out of memory. */
static json_t *answer(int rc, const rock_buf_t *out) {
  json_t *o = json_object(), *text = json_stringn(out->data ? out->data : "", out->len);
  rock_buf_t clean = {0}; /* never needed: every part of out is UTF-8 */
  if (!text && !rock__utf8_clean(&clean, out->data, out->len))
    text = json_stringn(clean.data, clean.len);
  rock_buf_free(&clean);
  if (!o || !text || json_object_set_new(o, "output", text) ||
      json_object_set_new(o, "error", json_boolean(rc != 0)) ||
      json_object_set_new(o, "exit_code", json_integer(rc))) {
    if (!o) json_decref(text);
    json_decref(o);
    return NULL;
  }
  return o;
}

static void work(uv_work_t *w) {
  call_t *c = w->data;
  json_t *args = routes_parse(c->body, c->len, NULL, &c->err, c->msg, sizeof c->msg);
  free(c->body);
  c->body = NULL;
  if (!args) return;
  char *err = NULL;
  rock_editor_req_t q = {0};
  rock_buf_t il = {0}, out = {0};
  q.command = arg_string(args, "command", 1, &err);
  q.path = arg_string(args, "path", 1, &err);
  q.file_text = arg_string(args, "file_text", 0, &err);
  q.old_str = arg_string(args, "old_str", 0, &err);
  q.new_str = arg_string(args, "new_str", 0, &err);
  q.cwd = arg_string(args, "cwd", 0, &err);
  short_path(q.path, "path", &err);
  short_path(q.cwd, "cwd", &err);
  int rc = insert_line(json_object_get(args, "insert_line"), &q, &il, &err);
  q.view_range_set = view_range(json_object_get(args, "view_range"), q.view_range);
  if (!rc && !err && !editor && !(editor = rock_editor_new(0))) rc = -1;
  if (!rc && !err) rc = rock_editor_run(editor, &q, &out);
  if (!err && rc >= 0 && !(c->answer = answer(rc, &out))) rc = -1;
  if (err) {
    c->err = ROCK_E_INVALID_ARGUMENT;
    snprintf(c->msg, sizeof c->msg, "%s", err);
  } else if (rc < 0) {
    c->err = ROCK_E_NO_MEMORY;
    snprintf(c->msg, sizeof c->msg, "editor: out of memory");
  }
  free(err);
  rock_buf_free(&il);
  rock_buf_free(&out);
  json_decref(args);
}

/* ----------------------------------------------------- the queue, on the loop */

static void call_free(call_t *c) {
  queued -= c->len;
  free(c->body);
  json_decref(c->answer);
  free(c);
}

/* Take c out of the queue. */
static void unqueue(call_t *c) {
  call_t **pp = &head, *prev = NULL;
  while (*pp != c) prev = *pp, pp = &(*pp)->next;
  *pp = c->next;
  if (tail == c) tail = prev;
}

static void done(uv_work_t *w, int status);

/* Start the head, if it waits; with none left, tell editor_close_all. */
static void next(void) {
  while (head && !head->started) {
    head->started = 1;
    int e = uv_queue_work(rocklet.loop, &head->work, work, done);
    if (!e) return;
    call_t *c = head;
    unqueue(c);
    reply_error(c->req, ROCK_E_INTERNAL, "editor: cannot start: %s", uv_strerror(e));
    call_free(c);
  }
  if (!head && closed) {
    void (*cb)(void) = closed;
    closed = NULL;
    cb();
  }
}

static void done(uv_work_t *w, int status) {
  call_t *c = w->data;
  unqueue(c);
  if (status == UV_ECANCELED)
    reply_error(c->req, ROCK_E_SANDBOX_NOT_ALIVE, "rocklet is shutting down");
  else if (c->err)
    reply_error(c->req, c->err, "%s", c->msg);
  else {
    reply_json(c->req, c->answer); /* taken */
    c->answer = NULL;
  }
  call_free(c);
  next();
}

/* The client went away: a call not started goes (nothing was done); one
 * started finishes, or is cancelled if the pool has not taken it yet. */
static void aborted(rock_http_req_t *req) {
  call_t *c = req->user;
  if (c->started) {
    uv_cancel((uv_req_t *)&c->work); /* done() answers (frees) the orphan */
    return;
  }
  unqueue(c);
  reply_error(req, ROCK_E_CANCELLED, "the client went away"); /* frees the orphan */
  call_free(c);
}

void editor_run(rock_http_req_t *req, json_t *args) {
  (void)args; /* NULL: the body is parsed on the pool */
  if (head && queued + req->body_len > ED_QUEUE_MAX) {
    reply_error(req, ROCK_E_NO_MEMORY, "editor: %zu MiB of calls wait already (at most %zu MiB)",
                queued >> 20, ED_QUEUE_MAX >> 20);
    return;
  }
  call_t *c = calloc(1, sizeof *c);
  if (c && req->body_len && !(c->body = malloc(req->body_len))) free(c), c = NULL;
  if (!c) {
    reply_error(req, ROCK_E_NO_MEMORY, "editor: out of memory");
    return;
  }
  if (req->body_len) memcpy(c->body, req->body, req->body_len);
  c->len = req->body_len;
  c->req = req;
  c->work.data = c;
  queued += c->len;
  if (tail) tail->next = c;
  else head = c;
  tail = c;
  req->user = c;
  req->on_abort = aborted;
  next();
}

void editor_close_all(void (*cb)(void)) {
  for (call_t *c = head, *n; c; c = n) {
    n = c->next;
    if (c->started) continue;
    unqueue(c);
    reply_error(c->req, ROCK_E_SANDBOX_NOT_ALIVE, "rocklet is shutting down");
    call_free(c);
  }
  if (head) uv_cancel((uv_req_t *)&head->work); /* done() answers it if it had not begun */
  closed = cb;
  next(); /* with none running: cb at once */
}
