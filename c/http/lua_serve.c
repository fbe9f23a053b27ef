/* lua_serve.c: the Lua face of server.c, registered into
 * rock.core as
 *   srv = core.http_serve(opts, on_request [, on_abort])  a server on the loop
 *   srv:port()  srv:drain(cb)  srv:close()  srv:stats()
 *   core.log_buffered(level, area, msg)  core.log_flush()  core.log_default(level)
 *   core.log_escape(s)
 * on_request(req, handle) runs on the loop for each whole request: req is
 * {method=, path=, raw_query=, headers=, body= | body_file=, peer=,
 * _handle=handle} (with opts.request_mt as its metatable), handle a
 * rock.http_request userdata answered once with handle:respond(status,
 * header_lines, body) or handle:respond_file(status, header_lines, path),
 * or by a relay: core.http_request{relay = handle} (lua_http.c) streams
 * another server's 2xx answer to its client (lrock_serve_sink, below).
 * A body past opts.body_to_file (or chunked) of a request whose
 * on_headers called handle:stream_body() is not stored: on_request gets
 * the request at once (req.body_stream = true, body_size when known) and
 * core.http_request{body_from = handle} sends the body on to another
 * server as the client sends it (lrock_serve_source, below).
 * on_abort(req) runs, once, for a request still unanswered when
 * on_request returned whose client went away (one function per server;
 * handle:on_abort(fn) sets one per request instead).
 * opts.on_headers(req, handle), if given, runs as soon as a request's
 * headers are in, before its body is read (req without body): answering
 * there refuses the request unread (the connection closes after the
 * answer); returning true admits it: the same req table goes to
 * on_request once whole; anything else (an error) is a 500.
 * Else a body larger than opts.body_to_file (or chunked) goes to a temp
 * file as it arrives, deleted once the answer is sent (or the request
 * dies).
 * Callbacks run on the thread that called into the server (an answer may
 * start the next pipelined request), else on the main state
 * (lua/rock/http_server.lua starts the request on a worker task there and
 * then, which may answer before on_request returns). */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/log.h"
#include "../core/lua_core.h"
#include "lua_http.h"
#include "server.h"

#define SERVER_MT "rock.http_server"
#define REQUEST_MT "rock.http_request"

/* A server. Allocated by http_serve, freed by the userdata's __gc; srv is
 * NULL once closed (close, __gc or the context's shutdown). */
typedef struct lrock_serve {
  struct lrock_serve *prev, *next; /* the context's list, while open */
  lrock_ctx_t *ctx;
  rock_http_server_t *srv;
  lua_State *L;    /* the thread calling into the server now, or NULL */
  int self_ref;    /* the userdata, while open: a listening server is kept */
  int handler_ref; /* on_request */
  int drained_ref; /* drain's callback, until it runs */
  int abort_ref;   /* on_abort(req), or LUA_NOREF */
  int mt_ref;      /* opts.request_mt, or LUA_NOREF */
  int headers_ref; /* opts.on_headers, or LUA_NOREF */
  uint64_t body_to_file;
  char *tmpdir;
} serve_t;

typedef struct {
  rock_http_req_t *req; /* NULL once answered */
  serve_t *s;
  int abort_ref;        /* handle:on_abort's function, or LUA_NOREF */
  int req_ref;          /* the request table: from on_headers until
                         * on_request, then for the server's on_abort
                         * while unanswered; or LUA_NOREF */
  unsigned stream : 1,  /* stream_body() was asked (from on_headers) */
      handed : 1,       /* on_request has it: too late to ask */
      relayed : 1;      /* body_from took its body (for good: a second
                         * relay would send only the rest) */
} request_ud;

static lua_State *cb_state(serve_t *s) { return s->L ? s->L : s->ctx->L; }

/* The client went away before the answer: call the handle's on_abort
 * function (the handler's task is then cancelled by http_server.lua). The
 * handle is alive: an unanswered request's handle answers it when it is
 * collected, so req (and this callback) never outlive it. */
static void on_client_gone(rock_http_req_t *req) {
  request_ud *u = req->abort_arg;
  if (!u) return;
  serve_t *s = u->s;
  lua_State *L = cb_state(s);
  if (u->abort_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->abort_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, u->abort_ref);
    u->abort_ref = LUA_NOREF;
    lrock_call(L, 0);
  }
  if (u->req_ref != LUA_NOREF && s->abort_ref != LUA_NOREF) {
    int ref = u->req_ref;
    u->req_ref = LUA_NOREF;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->abort_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    lrock_call(L, 1);
  }
}

static void drop_abort(lua_State *L, request_ud *u) {
  if (u->abort_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, u->abort_ref);
  if (u->req_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, u->req_ref);
  u->abort_ref = u->req_ref = LUA_NOREF;
}


/* ---- request bodies to temp files ---- */

/* A request's temp body file: its path (malloc'ed) is req->user. */
static void body_remove(rock_http_req_t *req) {
  char *b = req->user;
  if (!b) return;
  unlink(b);
  free(b);
  req->user = NULL;
}

/* The request is answered or dropped by C, not by its handle: the Lua
 * side lets go of it (the handle then answers nothing). */
static void detach(rock_http_req_t *req) {
  request_ud *u = req->abort_arg;
  if (!u) return;
  req->abort_arg = NULL;
  u->req = NULL;
  drop_abort(cb_state(u->s), u);
}

/* on_drop: the request dies before it is whole (client gone, malformed,
 * too large): its body file and its Lua side go. */
static void request_drop(rock_http_req_t *req) {
  if (req->body_fd >= 0) close(req->body_fd);
  req->body_fd = -1;
  body_remove(req);
  detach(req);
}

/* ---- requests to Lua ---- */

/* req.headers: names lowercased by the server; repeats joined by ", ".
 * Linear in the headers' size: a repeated name first collects its values
 * in a list, joined once at the end (joining as they come would copy the
 * growing value again for each repeat). */
static void push_headers(lua_State *L, const rock_http_req_t *req) {
  lua_newtable(L);
  int t = lua_gettop(L), repeats = 0;
  const char *p = req->headers, *end = p ? p + req->headers_len : NULL;
  while (p && p < end) {
    const char *name = p;
    p += strlen(p) + 1;
    if (p >= end) break;
    const char *value = p;
    p += strlen(p) + 1;
    int ty = lua_getfield(L, t, name);
    if (ty == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushstring(L, value);
      lua_setfield(L, t, name);
    } else if (ty == LUA_TSTRING) { /* the second: a list of them */
      lua_createtable(L, 4, 0);
      lua_insert(L, -2);
      lua_rawseti(L, -2, 1);
      lua_pushstring(L, value);
      lua_rawseti(L, -2, 2);
      lua_setfield(L, t, name);
      repeats = 1;
    } else {
      lua_pushstring(L, value);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
      lua_pop(L, 1);
    }
  }
  for (p = req->headers; repeats && p && p < end;) { /* join the lists */
    const char *name = p;
    p += strlen(p) + 1;
    if (p >= end) break;
    p += strlen(p) + 1;
    if (lua_getfield(L, t, name) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1; i <= n; i++) {
      if (i > 1) luaL_addlstring(&b, ", ", 2);
      lua_rawgeti(L, t + 1, i);
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_setfield(L, t, name);
    lua_pop(L, 1);
  }
}

/* Push the request table of req (all but its body) and its handle (a
 * rock.http_request userdata, also req._handle); returns the handle's
 * state. */
static request_ud *push_request(lua_State *L, serve_t *s, rock_http_req_t *req) {
  lua_createtable(L, 0, 12); /* room for what Lua adds (query, _gone, ...) */
  lua_pushstring(L, req->method);
  lua_setfield(L, -2, "method");
  lua_pushstring(L, req->path);
  lua_setfield(L, -2, "path");
  lua_pushstring(L, req->query);
  lua_setfield(L, -2, "raw_query");
  push_headers(L, req);
  lua_setfield(L, -2, "headers");
  if (req->peer[0]) {
    lua_pushstring(L, req->peer);
    lua_setfield(L, -2, "peer");
  }
  request_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  memset(u, 0, sizeof *u);
  u->req = req;
  u->s = s;
  u->abort_ref = u->req_ref = LUA_NOREF;
  req->abort_arg = u;
  luaL_setmetatable(L, REQUEST_MT);
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->self_ref); /* the server lives on */
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "_handle");
  if (s->mt_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->mt_ref);
    lua_setmetatable(L, -3);
  }
  return u;
}

/* The headers are in, the body not read yet: opts.on_headers may answer
 * (refuse) now; else a large or chunked body gets its temp file. */
static void on_headers(rock_http_req_t *req, void *data) {
  serve_t *s = data;
  req->on_drop = request_drop;
  if (s->headers_ref != LUA_NOREF) {
    lua_State *L = cb_state(s);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->headers_ref);
    request_ud *u = push_request(L, s, req);
    lua_pushvalue(L, -2);
    u->req_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* for on_request */
    lua_pushvalue(L, -1);
    lua_insert(L, -4); /* the handle stays on the stack past the call: u lives */
    int n = lrock_pcall(L, 2, 1, 0); /* an error is logged */
    int go_on = n > 0 && lua_toboolean(L, -1); /* true: admitted */
    lua_pop(L, n > 0 ? n + 1 : 1);
    if (!u->req) return; /* refused: the body is not read */
    if (!go_on) { /* the hook failed before it answered: refused all the same */
      static const char msg[] = "{\"error\":\"on_headers failed\"}";
      detach(req);
      rock_http_respond(req, 500, "application/json", msg, sizeof msg - 1);
      return;
    }
  }
  uint64_t cl = req->content_length;
  if (cl != UINT64_MAX && (cl <= s->body_to_file || cl > req->max_body)) return;
  request_ud *u = req->abort_arg;
  if (u && u->stream) { /* to on_request now, its body relayed as it comes */
    req->body_stream = 1;
    return;
  }
  size_t tl = strlen(s->tmpdir);
  char *b = malloc(tl + 40);
  int fd = -1;
  if (b) { /* the pid: a later server removes what a crashed one left */
    snprintf(b, tl + 40, "%s/rock-body-%ld-XXXXXX", s->tmpdir, (long)getpid());
    fd = mkostemp(b, O_CLOEXEC);
  }
  if (fd < 0) {
    static const char msg[] =
        "{\"error\":\"cannot store the request body: no temp file\"}";
    rock_log(ROCK_LOG_ERROR, "http", "msg=\"cannot make a temp file for a body\" dir=\"%s\" error=\"%s\"",
             s->tmpdir, b ? strerror(errno) : "no memory");
    free(b);
    detach(req);
    rock_http_respond(req, 500, "application/json", msg, sizeof msg - 1);
    return;
  }
  req->user = b;
  req->body_fd = fd;
}

/* A chunked body that turned out small comes back to memory: read it,
 * delete the file. 0, or -1 (errno) when it cannot be read. */
static int push_small_file(lua_State *L, rock_http_req_t *req) {
  int fd = open(req->user, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  luaL_Buffer lb;
  char *dst = luaL_buffinitsize(L, &lb, req->body_bytes + 1);
  size_t got = 0;
  while (got < req->body_bytes) {
    ssize_t n = read(fd, dst + got, req->body_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  luaL_pushresultsize(&lb, got);
  body_remove(req);
  return 0;
}

static void handler(rock_http_req_t *req, void *data) {
  serve_t *s = data;
  if (req->body_fd >= 0) { /* the body is in its file */
    int err = req->body_err;
    close(req->body_fd);
    req->body_fd = -1;
    if (err) {
      char msg[160];
      int n = snprintf(msg, sizeof msg, "{\"error\":\"cannot store the request body: %s\"}",
                       strerror(err));
      rock_log(ROCK_LOG_ERROR, "http", "msg=\"cannot store a body\" error=\"%s\"", strerror(err));
      body_remove(req);
      detach(req);
      rock_http_respond(req, err == ENOSPC ? 507 : 500, "application/json", msg, n);
      return;
    }
  }
  lua_State *L = cb_state(s);
  lua_rawgeti(L, LUA_REGISTRYINDEX, s->handler_ref);
  request_ud *u = req->abort_arg;
  if (u) { /* made by on_headers */
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->req_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, u->req_ref);
    u->req_ref = LUA_NOREF;
    if (lua_getfield(L, -1, "_handle") != LUA_TUSERDATA || luaL_testudata(L, -1, REQUEST_MT) != u) {
      static const char msg[] = "{\"error\":\"on_headers replaced req._handle\"}";
      lua_pop(L, 3);
      detach(req);
      rock_http_respond(req, 500, "application/json", msg, sizeof msg - 1);
      return;
    }
  } else {
    u = push_request(L, s, req);
  }
  u->handed = 1;
  char *b = req->user; /* the body, into the table (under the handle) */
  if (req->body_stream) { /* not read yet: for body_from */
    lua_pushboolean(L, 1);
    lua_setfield(L, -3, "body_stream");
    if (req->content_length != UINT64_MAX) {
      lua_pushinteger(L, (lua_Integer)req->content_length);
      lua_setfield(L, -3, "body_size");
    }
  } else if (b && req->body_bytes <= s->body_to_file && push_small_file(L, req) == 0) {
    lua_setfield(L, -3, "body");
  } else if (b) {
    lua_pushstring(L, b);
    lua_setfield(L, -3, "body_file");
    lua_pushinteger(L, (lua_Integer)req->body_bytes);
    lua_setfield(L, -3, "body_size");
  } else {
    lua_pushlstring(L, req->body, req->body_len);
    lua_setfield(L, -3, "body");
  }
  req->on_abort = on_client_gone;
  int watch = s->abort_ref != LUA_NOREF;
  if (watch) { /* a copy of req under the call, for on_abort */
    lua_pushvalue(L, -2);
    lua_insert(L, -4);
  }
  lrock_call(L, 2);
  if (!watch) return;
  /* req holds the handle, so u is alive; answered: nothing to watch */
  if (u->req && u->req_ref == LUA_NOREF) u->req_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  else lua_pop(L, 1);
}

/* ---- answering ---- */

static request_ud *check_request(lua_State *L) {
  request_ud *u = luaL_checkudata(L, 1, REQUEST_MT);
  if (!u->req) luaL_error(L, "this request was answered already");
  return u;
}

static serve_t *request_server_at(lua_State *L, int idx) {
  lua_getiuservalue(L, idx, 1);
  serve_t **sp = luaL_testudata(L, -1, SERVER_MT);
  lua_pop(L, 1);
  return sp ? *sp : NULL;
}

static serve_t *request_server(lua_State *L) { return request_server_at(L, 1); }

static int check_status(lua_State *L, int i) {
  lua_Integer st = luaL_checkinteger(L, i);
  if (st < 100 || st > 999) luaL_argerror(L, i, "status must be 100-999");
  return (int)st;
}

/* Answer (body or fd) with the server's callbacks on L. */
static void answer(lua_State *L, request_ud *u, int status, const char *headers,
                   const char *body, size_t len, int fd, uint64_t size) {
  rock_http_req_t *req = u->req;
  u->req = NULL;
  drop_abort(L, u);
  req->abort_arg = NULL;
  serve_t *s = request_server(L);
  lua_State *saved = s ? s->L : NULL;
  if (s) s->L = L;
  /* The body file goes before the answer does: a client that has its
   * answer finds it gone (fd, when it is that file, is open already). */
  body_remove(req);
  if (fd >= 0) rock_http_respond_file(req, status, headers, fd, size);
  else rock_http_respond_headers(req, status, headers, body, len);
  if (s) s->L = saved;
}

/* handle:respond(status, header_lines, body) */
static int l_request_respond(lua_State *L) {
  request_ud *u = check_request(L);
  int status = check_status(L, 2);
  const char *headers = luaL_checkstring(L, 3);
  size_t len;
  const char *body = luaL_optlstring(L, 4, "", &len);
  answer(L, u, status, headers, body, len, -1, 0);
  return 0;
}

/* handle:respond_file(status, header_lines, path): raises io_error (the
 * request is still unanswered) when path cannot be opened. */
static int l_request_respond_file(lua_State *L) {
  request_ud *u = check_request(L);
  int status = check_status(L, 2);
  const char *headers = luaL_checkstring(L, 3);
  const char *path = luaL_checkstring(L, 4);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    int e = fd < 0 ? errno : EISDIR;
    if (fd >= 0) close(fd);
    lrock_push_error(L, ROCK_E_IO, lua_pushfstring(L, "cannot send %s: %s", path, strerror(e)),
                     "http_respond_file");
    lua_pushstring(L, uv_err_name(uv_translate_sys_error(e)));
    lua_setfield(L, -2, "errno");
    return lua_error(L);
  }
  answer(L, u, status, headers, NULL, 0, fd, (uint64_t)st.st_size);
  return 0;
}

/* handle:on_abort(fn): fn() runs once if the client goes away before the
 * answer (nil: none). */
static int l_request_on_abort(lua_State *L) {
  request_ud *u = luaL_checkudata(L, 1, REQUEST_MT);
  if (!lua_isnil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  drop_abort(L, u);
  if (u->req && !lua_isnil(L, 2)) {
    lua_pushvalue(L, 2);
    u->abort_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  return 0;
}

/* handle:max_body(n): from on_headers, this request's body may be up to
 * n bytes (the server's max_body is the default): a route that streams
 * its body to a file takes more than one parsed in memory. */
static int l_request_max_body(lua_State *L) {
  request_ud *u = check_request(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0) return luaL_argerror(L, 2, "must be >= 0");
  u->req->max_body = (uint64_t)n;
  return 0;
}

/* handle:stream_body(): from on_headers: a body that would go to a temp
 * file comes to on_request unread instead, for body_from. */
static int l_request_stream_body(lua_State *L) {
  request_ud *u = check_request(L);
  if (u->handed) return luaL_error(L, "stream_body: only from on_headers, before the body is read");
  u->stream = 1;
  return 0;
}

/* handle:answered() */
static int l_request_answered(lua_State *L) {
  request_ud *u = luaL_checkudata(L, 1, REQUEST_MT);
  lua_pushboolean(L, u->req == NULL);
  return 1;
}

/* A handle collected unanswered (a bug above): 500, and the connection
 * closes after it so nothing pipelined starts from inside the collector. */
static int l_request_gc(lua_State *L) {
  request_ud *u = luaL_checkudata(L, 1, REQUEST_MT);
  if (!u->req) return 0;
  static const char msg[] = "{\"error\":\"the request was never answered\"}";
  rock_http_req_t *req = u->req;
  u->req = NULL;
  drop_abort(L, u);
  req->abort_arg = NULL;
  req->keep_alive = 0;
  body_remove(req);
  rock_http_respond(req, 500, "application/json", msg, sizeof msg - 1);
  return 0;
}

/* ---- relays: another server's answer streamed to a request's client ---- */

/* A relay (lrock_serve_sink): the sink of a client transfer (lua_http.c,
 * core.http_request's relay=) whose 2xx answer goes to the client of a
 * request handle as it comes. Allocated by lrock_serve_sink, freed by
 * lrock_serve_sink_end (the transfer's end, or its cancel); holds the
 * handle (so its request and server) until then. */
typedef struct {
  rock_http_sink_t sink; /* first: what client.c sees */
  request_ud *u;
  int handle_ref;
  rock_http_xfer_t *x;     /* the transfer, once its answer started */
  rock_http_stream_t *st;  /* the answer being streamed, until the end */
  int took;                /* the request left its handle for the relay */
} relay_t;

static const char GONE_MSG[] = "the client went away";

/* The server side: the client took enough to write on (DRAINED), or went
 * away (GONE): the transfer ends now, not at its next byte. */
static void relay_event(void *arg, int event) {
  relay_t *r = arg;
  if (!r->x) return;
  if (event == ROCK_HTTP_STREAM_DRAINED) rock_http_xfer_resume(r->x);
  else rock_http_xfer_abort(r->x, ROCK_E_CANCELLED, GONE_MSG);
}

/* The header lines of the upstream head h[0..n) a relayed answer keeps:
 * the body's type and range, as they came; into out (cap bytes). */
static void relay_headers(const char *h, size_t n, char *out, size_t cap) {
  static const char *const keep[] = {"content-type:", "content-range:", "accept-ranges:",
                                     "last-modified:", "etag:", NULL};
  size_t len = 0;
  int typed = 0;
  const char *end = h + n;
  out[0] = 0;
  for (const char *line = h; line < end;) {
    const char *eol = memchr(line, '\n', end - line);
    if (!eol) eol = end;
    const char *le = eol > line && eol[-1] == '\r' ? eol - 1 : eol;
    for (int i = 0; keep[i]; i++) {
      size_t kl = strlen(keep[i]);
      if ((size_t)(le - line) <= kl || strncasecmp(line, keep[i], kl)) continue;
      if (memchr(line, '\r', le - line) || len + (le - line) + 3 > cap) break;
      memcpy(out + len, line, le - line);
      len += le - line;
      memcpy(out + len, "\r\n", 3); /* and the NUL */
      len += 2;
      typed |= i == 0;
      break;
    }
    line = eol + 1;
  }
  static const char octets[] = "Content-Type: application/octet-stream\r\n";
  if (!typed && len + sizeof octets <= cap) memcpy(out + len, octets, sizeof octets);
}

/* The upstream's 2xx head is in (from inside curl): the request is
 * answered from here on by the stream; its Lua handle lets go of it. */
static int relay_start(rock_http_sink_t *k, rock_http_xfer_t *x, long status,
                       const char *headers, size_t len, uint64_t size) {
  relay_t *r = (relay_t *)k;
  r->x = x;
  rock_http_req_t *req = r->u->req;
  if (!req) {
    rock_http_xfer_abort(x, ROCK_E_CANCELLED, "the request was answered already");
    return -1;
  }
  r->u->req = NULL;
  r->took = 1;
  req->abort_arg = NULL;
  body_remove(req);
  char lines[2048];
  relay_headers(headers, len, lines, sizeof lines);
  r->st = rock_http_respond_stream(req, (int)status, lines, size, relay_event, r);
  if (!r->st) {
    rock_http_xfer_abort(x, ROCK_E_CANCELLED, GONE_MSG);
    return -1;
  }
  return 0;
}

/* Body bytes (from inside curl): on to the client, or "not now" while
 * more than ROCK_HTTP_STREAM_HIGH bytes wait for it (the transfer pauses
 * until DRAINED: the rocklet is read no faster than the client reads). */
static int relay_write(rock_http_sink_t *k, const char *p, size_t n) {
  relay_t *r = (relay_t *)k;
  if (!r->st) return -1;
  if (rock_http_stream_full(r->st)) return 1;
  return rock_http_stream_write(r->st, p, n) ? -1 : 0;
}

rock_http_sink_t *lrock_serve_sink(lua_State *L, int idx, const char **why) {
  request_ud *u = luaL_testudata(L, idx, REQUEST_MT);
  if (!u) {
    *why = "'relay' must be a request handle of rock.http.serve";
    return NULL;
  }
  if (!u->req) {
    *why = "'relay': this request was answered already";
    return NULL;
  }
  relay_t *r = calloc(1, sizeof *r);
  if (!r) {
    *why = "no memory";
    return NULL;
  }
  r->sink.start = relay_start;
  r->sink.write = relay_write;
  r->u = u;
  lua_pushvalue(L, idx);
  r->handle_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return &r->sink;
}

void lrock_serve_sink_end(lua_State *L, rock_http_sink_t *k, int ok) {
  relay_t *r = (relay_t *)k;
  if (r->st) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->handle_ref);
    serve_t *s = request_server_at(L, lua_gettop(L)); /* NULL once collected */
    lua_pop(L, 1);
    lua_State *saved = s ? s->L : NULL;
    if (s) s->L = L; /* a pipelined request may start from here */
    rock_http_stream_end(r->st, ok);
    if (s) s->L = saved;
  }
  if (r->took) drop_abort(L, r->u); /* answered: nothing to watch */
  luaL_unref(L, LUA_REGISTRYINDEX, r->handle_ref);
  free(r);
}

/* ---- relayed bodies: a request's body streamed to another server ---- */

/* A body relay (lrock_serve_source): the source of a client transfer
 * (lua_http.c, core.http_request's body_from=) whose body is the body of
 * a request handle's client, read as the transfer sends it. Allocated by
 * lrock_serve_source, freed by lrock_serve_source_end (the transfer's
 * end, or its cancel); holds the handle (so its request) until then. */
typedef struct {
  rock_http_source_t source; /* first: what client.c sees */
  request_ud *u;
  int handle_ref;
  rock_http_xfer_t *x; /* the transfer, once it read */
} body_relay_t;

/* The server side (req->on_body): bytes came for a read that found none,
 * or the client went away or the request was answered mid-body (the
 * transfer ends, not at its next read: it may be paused for good). */
static void body_event(rock_http_req_t *req, int event) {
  body_relay_t *b = req->body_arg;
  if (!b || !b->x) return; /* not read yet: its first read finds out */
  if (event != ROCK_HTTP_BODY_READY) { /* the client went, or its request
                                        * was answered before its body ended */
    rock_http_xfer_abort(b->x, ROCK_E_CANCELLED,
                         b->u->req == req ? GONE_MSG : "the request was answered already");
  } else { /* READY comes only after a read found nothing (it paused the
              * transfer); resuming one not paused does nothing */
    rock_http_xfer_resume(b->x);
  }
}

/* The transfer wants body bytes (from inside curl): what the client sent
 * so far, straight from the server's input buffer. */
static long body_read(rock_http_source_t *k, rock_http_xfer_t *x, char *p, size_t n) {
  body_relay_t *b = (body_relay_t *)k;
  b->x = x;
  rock_http_req_t *req = b->u->req;
  long got = req ? rock_http_body_read(req, p, n) : ROCK_HTTP_BODY_GONE;
  if (got >= 0) return got;
  if (got == ROCK_HTTP_BODY_WAIT) return -2;
  if (got == ROCK_HTTP_BODY_GONE)
    rock_http_xfer_abort(x, ROCK_E_CANCELLED, req ? GONE_MSG : "the request was answered already");
  else
    rock_http_xfer_abort(x, ROCK_E_BAD_REQUEST,
                         got == ROCK_HTTP_BODY_TOO_LARGE
                             ? "the request body is larger than the route takes"
                             : "the request body is malformed (its chunked framing)");
  return -1;
}

rock_http_source_t *lrock_serve_source(lua_State *L, int idx, const char **why) {
  request_ud *u = luaL_testudata(L, idx, REQUEST_MT);
  rock_http_req_t *req = u ? u->req : NULL;
  *why = !u             ? "'body_from' must be a request handle of rock.http.serve"
         : !req         ? "'body_from': this request was answered already"
         : !req->body_stream ? "'body_from': this request's body is not streamed "
                               "(handle:stream_body() from on_headers, past body_to_file)"
         : u->relayed ? "'body_from': this request's body was relayed already"
                      : NULL;
  if (*why) return NULL;
  body_relay_t *b = calloc(1, sizeof *b);
  if (!b) {
    *why = "no memory";
    return NULL;
  }
  b->source.size = req->content_length;
  b->source.read = body_read;
  b->u = u;
  lua_pushvalue(L, idx);
  b->handle_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  u->relayed = 1;
  req->on_body = body_event;
  req->body_arg = b;
  return &b->source;
}

void lrock_serve_source_end(lua_State *L, rock_http_source_t *k) {
  body_relay_t *b = (body_relay_t *)k;
  rock_http_req_t *req = b->u->req;
  if (req && req->body_arg == b) { /* the server tells nobody any more */
    req->on_body = NULL;
    req->body_arg = NULL;
  }
  luaL_unref(L, LUA_REGISTRYINDEX, b->handle_ref);
  free(b);
}

/* ---- the server ---- */

static serve_t *check_server(lua_State *L) {
  return *(serve_t **)luaL_checkudata(L, 1, SERVER_MT);
}

static void serve_unlink(serve_t *s) {
  lrock_ctx_t *ctx = s->ctx;
  if (!ctx) return;
  if (s->prev) s->prev->next = s->next;
  else ctx->serves = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

/* Close the server: its connections go, requests not answered become
 * orphans (answering them only frees them). Safe to call twice. */
static void serve_close(lua_State *L, serve_t *s) {
  if (!s->srv) return;
  lua_State *saved = s->L;
  s->L = L;
  rock_http_server_close(s->srv);
  s->L = saved;
  s->srv = NULL;
  serve_unlink(s);
  luaL_unref(L, LUA_REGISTRYINDEX, s->handler_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, s->drained_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, s->self_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, s->abort_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, s->mt_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, s->headers_ref);
  s->handler_ref = s->drained_ref = s->self_ref = s->abort_ref = s->mt_ref = LUA_NOREF;
  s->headers_ref = LUA_NOREF;
}

static void close_serves(lrock_ctx_t *ctx) {
  while (ctx->serves) serve_close(ctx->L, ctx->serves);
}

static int l_server_gc(lua_State *L) {
  serve_t **sp = luaL_checkudata(L, 1, SERVER_MT);
  serve_t *s = *sp;
  if (!s) return 0;
  serve_close(L, s);
  free(s->tmpdir);
  free(s);
  *sp = NULL;
  return 0;
}

static int l_server_port(lua_State *L) {
  serve_t *s = check_server(L);
  lua_pushinteger(L, s->srv ? rock_http_server_port(s->srv) : 0);
  return 1;
}

static void on_drained(void *arg) {
  serve_t *s = arg;
  lua_State *L = cb_state(s);
  int ref = s->drained_ref;
  s->drained_ref = LUA_NOREF;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  luaL_unref(L, LUA_REGISTRYINDEX, ref);
  lrock_call(L, 0);
}

/* srv:drain(cb): stop accepting, let requests under way finish; cb() once
 * no connection is left (at once when none is; never after close). */
static int l_server_drain(lua_State *L) {
  serve_t *s = check_server(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!s->srv || s->drained_ref != LUA_NOREF) return 0;
  lua_pushvalue(L, 2);
  s->drained_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_State *saved = s->L;
  s->L = L;
  rock_http_server_drain(s->srv, on_drained, s);
  s->L = saved;
  return 0;
}

static int l_server_close(lua_State *L) {
  serve_close(L, check_server(L));
  return 0;
}

static int l_server_stats(lua_State *L) {
  serve_t *s = check_server(L);
  rock_http_server_stats_t st = {0};
  int inflight = 0;
  if (s->srv) {
    rock_http_server_stats(s->srv, &st);
    inflight = rock_http_server_inflight(s->srv);
  }
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, st.conns);
  lua_setfield(L, -2, "conns");
  lua_pushinteger(L, inflight);
  lua_setfield(L, -2, "inflight");
  lua_pushinteger(L, (lua_Integer)st.buffered);
  lua_setfield(L, -2, "buffered");
  lua_pushboolean(L, s->srv != NULL);
  lua_setfield(L, -2, "open");
  return 1;
}

/* core.http_serve{host=, port= | unix_socket=, max_body=, body_to_file=,
 * max_header=, max_conns=, idle_timeout=, tmpdir=, request_mt=,
 * on_headers=}, on_request [, on_abort] */
static int l_http_serve(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_getfield(L, 1, "request_mt");
  if (!lua_isnil(L, -1)) luaL_argcheck(L, lua_istable(L, -1), 1, "'request_mt' must be a table");
  lua_pop(L, 1);
  lua_getfield(L, 1, "on_headers");
  if (!lua_isnil(L, -1)) luaL_argcheck(L, lua_isfunction(L, -1), 1, "'on_headers' must be a function");
  lua_pop(L, 1);
  lrock_ctx_t *ctx = lrock_ctx(L);
  const char *host = lrock_opt_string(L, 1, "host");
  const char *unix_socket = lrock_opt_string(L, 1, "unix_socket");
  const char *tmpdir = lrock_opt_string(L, 1, "tmpdir");
  if (!host == !unix_socket) return luaL_argerror(L, 1, "give 'host' (and 'port') or 'unix_socket'");
  if (!tmpdir) return luaL_argerror(L, 1, "'tmpdir' is required");
  uint64_t port = lrock_opt_size(L, 1, "port", 0);
  if (port > 65535) return luaL_argerror(L, 1, "'port' must be 0-65535");
  rock_http_server_opts_t o = ROCK_HTTP_SERVER_OPTS_DEFAULT;
  o.max_body = lrock_opt_size(L, 1, "max_body", o.max_body);
  o.max_header = lrock_opt_size(L, 1, "max_header", 64 << 10);
  if (!o.max_header) return luaL_argerror(L, 1, "'max_header' must be > 0");
  o.max_conns = (unsigned)lrock_opt_size(L, 1, "max_conns", o.max_conns);
  double idle = lrock_opt_number(L, 1, "idle_timeout", 600);
  if (!(idle >= 0 && idle <= 1e8)) return luaL_argerror(L, 1, "'idle_timeout' must be 0-1e8 seconds");
  o.idle_timeout_ms = (uint64_t)(idle * 1000);
  uint64_t body_to_file = lrock_opt_size(L, 1, "body_to_file", 1 << 20);
  o.max_body_mem = body_to_file * 2 > ((uint64_t)64 << 20) ? body_to_file * 2 : (uint64_t)64 << 20;
  o.on_headers = on_headers;
  if (ctx->closed) return lrock_raise(L, ROCK_E_CANCELLED, "the host is shutting down", "http_serve");

  serve_t **sp = lua_newuserdatauv(L, sizeof *sp, 0);
  *sp = NULL;
  luaL_setmetatable(L, SERVER_MT);
  serve_t *s = calloc(1, sizeof *s);
  if (!s || !(s->tmpdir = strdup(tmpdir))) {
    free(s);
    return lrock_raise(L, ROCK_E_NO_MEMORY, NULL, "http_serve");
  }
  *sp = s;
  s->ctx = ctx;
  s->body_to_file = body_to_file;
  s->handler_ref = s->drained_ref = s->self_ref = s->abort_ref = s->mt_ref = LUA_NOREF;
  s->headers_ref = LUA_NOREF;
  int rc = host ? rock_http_server_start_tcp(&s->srv, ctx->loop, host, (int)port, &o, handler, s)
                : rock_http_server_start(&s->srv, ctx->loop, unix_socket, &o, handler, s);
  if (rc) {
    s->srv = NULL;
    if (rc == UV_EINVAL && host)
      return lrock_raise(L, ROCK_E_INVALID_ARGUMENT,
                         lua_pushfstring(L, "host %s is not a numeric IPv4 or IPv6 address", host),
                         "http_serve");
    lrock_push_error(L, ROCK_E_IO,
                     host ? lua_pushfstring(L, "cannot listen on %s port %d: %s", host, (int)port,
                                            uv_strerror(rc))
                          : lua_pushfstring(L, "cannot listen on %s: %s", unix_socket,
                                            rc == UV_EADDRINUSE ? "a server is listening there"
                                            : rc == UV_EEXIST   ? "it exists and is not a socket"
                                                                : uv_strerror(rc)),
                     "http_serve");
    lua_pushstring(L, uv_err_name(rc));
    lua_setfield(L, -2, "errno");
    return lua_error(L);
  }
  lua_pushvalue(L, 2);
  s->handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (!lua_isnoneornil(L, 3)) {
    lua_pushvalue(L, 3);
    s->abort_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_getfield(L, 1, "request_mt");
  if (lua_istable(L, -1)) s->mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  else lua_pop(L, 1);
  lua_getfield(L, 1, "on_headers");
  if (lua_isfunction(L, -1)) s->headers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  else lua_pop(L, 1);
  lua_pushvalue(L, -1);
  s->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  s->next = ctx->serves;
  if (ctx->serves) ctx->serves->prev = s;
  ctx->serves = s;
  ctx->close_serve = close_serves;
  return 1;
}

/* ---- buffered log lines (c/core/log.c; here as rock serve's request
 * lines are their user) ---- */

static const char *const LEVELS[] = {"debug", "info", "warn", "error", NULL};

/* core.log_buffered(level, area, message) -> true when the line went into
 * an empty buffer (the caller flushes within ~100 ms: rock.log does). */
static int l_log_buffered(lua_State *L) {
  int level = luaL_checkoption(L, 1, NULL, LEVELS);
  const char *area = luaL_checkstring(L, 2);
  const char *msg = luaL_checkstring(L, 3);
  lua_pushboolean(L, rock_log_buffered(level, area, "%s", msg));
  return 1;
}

/* core.log_flush(): write the buffered lines now. */
static int l_log_flush(lua_State *L) {
  (void)L;
  rock_log_flush();
  return 0;
}

/* core.log_default(level): the level when ROCK_LOG does not set one. */
static int l_log_default(lua_State *L) {
  rock_log_default(luaL_checkoption(L, 1, NULL, LEVELS));
  return 0;
}

/* The length of the UTF-8 sequence of a printable character at p (n
 * bytes left), or 0: an invalid or overlong sequence, a surrogate, a C1
 * control (U+0080-U+009F: a terminal may read U+009B as CSI), a line or
 * paragraph separator, or a bidirectional control. */
static size_t utf8_printable(const unsigned char *p, size_t n) {
  size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
  if (p[0] < 0xc2 || p[0] > 0xf4 || n < len) return 0;
  uint32_t cp = p[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3f);
  }
  static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp <= 0x9f || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
      (cp >= 0x2066 && cp <= 0x2069))
    return 0;
  return len;
}

/* core.log_escape(s) -> s as one word of a log line: printable ASCII and
 * printable UTF-8 as they are; a space, a backslash, control bytes and
 * bytes that are not printable UTF-8 escaped (\n \r \t \\, else \xHH).
 * s itself when nothing needs escaping. */
static int l_log_escape(lua_State *L) {
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  size_t i = 0;
  while (i < n && s[i] > 0x20 && s[i] < 0x7f && s[i] != '\\') i++;
  if (i == n) {
    lua_settop(L, 1);
    return 1;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addlstring(&b, (const char *)s, i);
  while (i < n) {
    unsigned char c = s[i];
    size_t k;
    if (c > 0x20 && c < 0x7f && c != '\\') {
      luaL_addchar(&b, (char)c);
      i++;
    } else if (c >= 0x80 && (k = utf8_printable(s + i, n - i))) {
      luaL_addlstring(&b, (const char *)s + i, k);
      i += k;
    } else {
      static const char hex[] = "0123456789abcdef";
      const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                          : c == '\\' ? "\\\\" : NULL;
      char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
      luaL_addlstring(&b, named ? named : e, named ? 2 : 4);
      i++;
    }
  }
  luaL_pushresult(&b);
  return 1;
}

/* ---- registration ---- */

static const luaL_Reg server_methods[] = {
    {"port", l_server_port},   {"drain", l_server_drain}, {"close", l_server_close},
    {"stats", l_server_stats}, {NULL, NULL},
};

static const luaL_Reg request_methods[] = {
    {"respond", l_request_respond},
    {"respond_file", l_request_respond_file},
    {"answered", l_request_answered},
    {"on_abort", l_request_on_abort},
    {"max_body", l_request_max_body},
    {"stream_body", l_request_stream_body},
    {NULL, NULL},
};

static void metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                      lua_CFunction gc) {
  if (luaL_newmetatable(L, name)) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}

/* The metatables are made on first use (rock.core's table has only
 * functions). */
static int l_http_serve_entry(lua_State *L) {
  metatable(L, SERVER_MT, server_methods, l_server_gc);
  metatable(L, REQUEST_MT, request_methods, l_request_gc);
  return l_http_serve(L);
}

const luaL_Reg lrock_serve_funcs[] = {
    {"http_serve", l_http_serve_entry},
    {"log_buffered", l_log_buffered},
    {"log_flush", l_log_flush},
    {"log_default", l_log_default},
    {"log_escape", l_log_escape},
    {NULL, NULL},
};
