/* lua_http.c: the Lua face of client.c, registered into rock.core as
 *   id = core.http_request(opts, cb)   cb(res) or cb(nil, err), later
 *   core.http_cancel(id)               the callback will not run
 *   n = core.http_local_pending()      requests under way to unix sockets
 * opts: {method=, url=, headers={k=v}|{"K: v"}, body= | body_file= (a file
 *        sent as the body, streamed), timeout=, unix_socket=,
 *        peer_pid= (the unix socket's server must be this process),
 *        response_headers= (false: res.headers is not made),
 *        max_body= (bytes of a body kept; past it: http_error, err.too_large),
 *        output_file= (a 2xx body is written there as it comes, never held
 *        in memory; res.body is then ""; the file is removed unless the
 *        whole body came),
 *        relay= (a rock.http_request handle of core.http_serve, not yet
 *        answered: a 2xx answer's head and body go on to its client as they
 *        come (lua_serve.c), read no faster than that client reads; res.body
 *        is then ""; a client gone mid-way ends the transfer (cancelled);
 *        another answer's body comes to res as usual, the handle unanswered),
 *        body_from= (a rock.http_request handle whose body is streamed
 *        (stream_body): that body is sent as its client sends it (chunked
 *        when it was), the client read no faster than this request sends;
 *        a client gone mid-way ends the transfer (cancelled), a malformed
 *        body too (bad_request); the handle is left to answer)}
 * res: {status=, headers={lowercased name=value}, body=}; err: a rock error
 * {code=, message=, op=, [errno=], [peer_pid=]} (lua_core.h): errno names a
 * failed connect's cause, peer_pid the process found serving the socket
 * when it was not opts.peer_pid. Every request's state (ids,
 * callbacks) hangs off the per-state context, so two hosts in one process
 * never see each other's requests. lrock_http_start (lua_http.h) serves
 * lua_engine.c too, with its own response reader. Callbacks run on the main
 * state from the loop (never inside curl); lua/rock/http.lua waits on them. */
#include "lua_http.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../core/lua_core.h"

typedef struct lrock_http_op {
  struct lrock_http_op *prev, *next; /* the context's list */
  lrock_ctx_t *ctx;
  rock_http_xfer_t *xfer;
  lua_Integer id;
  int cb_ref;    /* callback, or LUA_NOREF */
  int chunk_ref; /* on_chunk function, or LUA_NOREF */
  lrock_http_push_fn push;
  void *data; /* push's, freed with the op (by data_free, else free) */
  void (*data_free)(lua_State *L, void *data);
} op_t;

static void op_unlink(op_t *o) {
  lrock_ctx_t *ctx = o->ctx;
  if (o->prev) o->prev->next = o->next;
  else ctx->ops = o->next;
  if (o->next) o->next->prev = o->prev;
  o->prev = o->next = NULL;
}

static void op_free(lua_State *L, op_t *o) {
  luaL_unref(L, LUA_REGISTRYINDEX, o->cb_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, o->chunk_ref);
  if (o->data_free) o->data_free(L, o->data);
  else free(o->data);
  free(o);
}

/* Drop every request (no callback runs) and close the client, which frees
 * the transfers; called once, by lrock_shutdown. */
static void close_http(lrock_ctx_t *ctx) {
  while (ctx->ops) {
    op_t *o = ctx->ops;
    op_unlink(o);
    op_free(ctx->L, o);
  }
  if (ctx->http) rock_http_client_close(ctx->http);
  ctx->http = NULL;
}

/* The context's client, made on first use. */
static rock_err client(lrock_ctx_t *ctx, rock_http_client_t **out) {
  if (ctx->closed) return ROCK_E_CANCELLED;
  if (!ctx->http) {
    rock_err e = rock_http_client_init(&ctx->http, ctx->loop);
    if (e) return e;
    ctx->close_http = close_http;
  }
  *out = ctx->http;
  return ROCK_E_OK;
}

/* Push the response headers as a table, names lowercased; of repeated
 * names the last wins. Only the last response's block counts (redirects,
 * 100 Continue). */
static void push_headers(lua_State *L, const char *h, size_t n) {
  lua_newtable(L);
  const char *end = h + n, *line = h;
  while (line < end) {
    const char *eol = memchr(line, '\n', end - line);
    if (!eol) eol = end;
    const char *colon = memchr(line, ':', eol - line);
    if (!strncmp(line, "HTTP/", 5)) {
      lua_pop(L, 1);
      lua_newtable(L);
    } else if (colon) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (const char *p = line; p < colon; p++)
        luaL_addchar(&b, (*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
      luaL_pushresult(&b);
      const char *v = colon + 1, *ve = eol;
      while (v < ve && (*v == ' ' || *v == '\t')) v++;
      while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ')) ve--;
      lua_pushlstring(L, v, ve - v);
      lua_settable(L, -3);
    }
    line = eol + 1;
  }
}

/* (nil, err) for a request that got no response: its rock_err, curl's
 * words and, for a failed connect, the errno's name (EAGAIN: the server's
 * backlog is full; ECONNREFUSED, ENOENT: nobody listens there). */
static int push_failure(lua_State *L, const rock_http_response_t *r, const char *op) {
  lua_pushnil(L);
  lrock_push_error(L, r->err, r->message, op);
  if (r->sys_errno) {
    lua_pushstring(L, uv_err_name(uv_translate_sys_error(r->sys_errno)));
    lua_setfield(L, -2, "errno");
  }
  if (r->peer_pid) {
    lua_pushinteger(L, r->peer_pid);
    lua_setfield(L, -2, "peer_pid");
  }
  if (r->too_large) {
    lua_pushinteger(L, (lua_Integer)r->too_large);
    lua_setfield(L, -2, "too_large");
  }
  return 2;
}

static int push_response(lua_State *L, const rock_http_response_t *r, int headers) {
  if (r->err != ROCK_E_OK) return push_failure(L, r, "http_request");
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, r->status);
  lua_setfield(L, -2, "status");
  if (headers) {
    push_headers(L, r->headers, r->headers_len);
    lua_setfield(L, -2, "headers");
  }
  lua_pushlstring(L, r->body, r->body_len);
  lua_setfield(L, -2, "body");
  return 1;
}

static int push_with_headers(lua_State *L, void *data, const rock_http_response_t *r) {
  (void)data;
  return push_response(L, r, 1);
}

static int push_without_headers(lua_State *L, void *data, const rock_http_response_t *r) {
  (void)data;
  return push_response(L, r, 0);
}

static void on_chunk(void *data, const char *p, size_t n) {
  op_t *o = data;
  lua_State *L = o->ctx->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, o->chunk_ref);
  lua_pushlstring(L, p, n);
  lrock_call(L, 1);
}

/* The op leaves the context before its callback runs, so the callback may
 * start or cancel any request (itself included: not found). */
static void on_done(void *data, const rock_http_response_t *r) {
  op_t *o = data;
  lua_State *L = o->ctx->L;
  op_unlink(o);
  lua_rawgeti(L, LUA_REGISTRYINDEX, o->cb_ref);
  int nargs = o->push(L, o->data, r);
  op_free(L, o);
  lrock_call(L, nargs);
}

static lua_Integer start_op(lua_State *L, rock_http_request_t *req, int cb, int chunk,
                            lrock_http_push_fn push, void *data,
                            void (*data_free)(lua_State *, void *)) {
  lrock_ctx_t *ctx = lrock_ctx(L);
  rock_http_client_t *c = NULL;
  rock_err e = client(ctx, &c);
  op_t *o = NULL;
  if (!e && !(o = calloc(1, sizeof *o))) e = ROCK_E_NO_MEMORY;
  if (!e) {
    o->ctx = ctx;
    o->cb_ref = o->chunk_ref = LUA_NOREF;
    o->push = push;
    o->data = data;
    o->data_free = data_free;
    if (chunk) req->on_chunk = on_chunk;
    e = rock_http_client_request(c, req, on_done, o, &o->xfer);
  }
  if (e) { /* the same arrival as any failure: cb(nil, err), now */
    rock_http_response_t r = {.err = e};
    r.message = e == ROCK_E_CANCELLED ? "the host is shutting down" : NULL;
    lua_pushvalue(L, cb);
    int nargs = push(L, data, &r);
    free(o);
    if (data_free) data_free(L, data);
    else free(data);
    lrock_call(L, nargs);
    return 0;
  }
  lua_pushvalue(L, cb);
  o->cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (chunk) {
    lua_pushvalue(L, chunk);
    o->chunk_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  o->id = ++ctx->next_id;
  o->next = ctx->ops;
  if (ctx->ops) ctx->ops->prev = o;
  ctx->ops = o;
  return o->id;
}

lua_Integer lrock_http_start(lua_State *L, rock_http_request_t *req, int cb,
                             int chunk, lrock_http_push_fn push, void *data) {
  return start_op(L, req, cb, chunk, push, data, NULL);
}

/* A relayed request (opts.relay, opts.body_from): its sink ends with the
 * op, whole when the answer was a 2xx that came whole; its source too. */
typedef struct {
  rock_http_sink_t *sink;
  rock_http_source_t *source;
  int headers, ok;
} relay_op_t;

static int push_relay(lua_State *L, void *data, const rock_http_response_t *r) {
  relay_op_t *d = data;
  d->ok = r->err == ROCK_E_OK && r->status >= 200 && r->status < 300;
  return push_response(L, r, d->headers);
}

static void relay_free(lua_State *L, void *data) {
  relay_op_t *d = data;
  if (d->sink) lrock_serve_sink_end(L, d->sink, d->ok);
  if (d->source) lrock_serve_source_end(L, d->source);
  free(d);
}

static int l_http_request(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  rock_http_request_t req = {0};
  req.url = lrock_opt_string(L, 1, "url");
  if (!req.url) return luaL_argerror(L, 1, "'url' is required");
  req.method = lrock_opt_string(L, 1, "method");
  req.unix_socket = lrock_opt_string(L, 1, "unix_socket");
  req.body = lrock_opt_lstring(L, 1, "body", &req.body_len);
  req.body_file = lrock_opt_string(L, 1, "body_file");
  if (req.body && req.body_file) return luaL_argerror(L, 1, "'body' and 'body_file' exclude each other");
  req.out_file = lrock_opt_string(L, 1, "output_file");
  req.timeout = lrock_opt_number(L, 1, "timeout", 0);
  if (!(req.timeout >= 0)) return luaL_argerror(L, 1, "'timeout' must be >= 0");
  req.max_body = lrock_opt_size(L, 1, "max_body", 0);
  lua_getfield(L, 1, "peer_pid");
  if (!lua_isnil(L, -1)) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) <= 0)
      return luaL_argerror(L, 1, "'peer_pid' must be a positive integer");
    if (!req.unix_socket) return luaL_argerror(L, 1, "'peer_pid' needs 'unix_socket'");
    req.peer_pid = (long)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  /* headers: {["Name"]="value"} or {"Name: value"}, flattened into a list
   * table that stays on the stack so the strings outlive this call's C use */
  const char *hdrs[65];
  int nh = 0;
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_getfield(L, 1, "headers");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (nh == 64) return luaL_argerror(L, 1, "more than 64 headers");
      if (lua_type(L, -2) == LUA_TSTRING) {
        const char *name = lua_tostring(L, -2);
        const char *value = luaL_tolstring(L, -1, NULL);
        lua_pushfstring(L, "%s: %s", name, value);
      } else {
        luaL_tolstring(L, -1, NULL);
      }
      lua_rawseti(L, list, ++nh);
      lua_settop(L, list + 2); /* headers table, key */
    }
  } else if (!lua_isnil(L, -1)) {
    return luaL_argerror(L, 1, "'headers' must be a table");
  }
  lua_settop(L, list);
  for (int i = 0; i < nh; i++) {
    lua_rawgeti(L, list, i + 1);
    hdrs[i] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  hdrs[nh] = NULL;
  req.headers = hdrs;
  lua_getfield(L, 1, "response_headers");
  int no_headers = lua_toboolean(L, -1) == 0 && !lua_isnil(L, -1);
  lua_pop(L, 1);
  int relay = lua_getfield(L, 1, "relay") != LUA_TNIL;
  int from = lua_getfield(L, 1, "body_from") != LUA_TNIL;
  if (relay && req.out_file) return luaL_argerror(L, 1, "'relay' and 'output_file' exclude each other");
  if (from && (req.body || req.body_file))
    return luaL_argerror(L, 1, "'body_from' excludes 'body' and 'body_file'");
  if (relay || from) {
    relay_op_t *d = calloc(1, sizeof *d);
    const char *why = "no memory";
    if (!d || (relay && !(d->sink = lrock_serve_sink(L, lua_gettop(L) - 1, &why))) ||
        (from && !(d->source = lrock_serve_source(L, lua_gettop(L), &why)))) {
      if (d) relay_free(L, d); /* what was made lets go of its handle */
      return luaL_argerror(L, 1, why);
    }
    d->headers = !no_headers;
    req.sink = d->sink;
    req.source = d->source;
    lua_pop(L, 2);
    lua_pushinteger(L, start_op(L, &req, 2, 0, push_relay, d, relay_free));
    return 1;
  }
  lua_pop(L, 2);
  lua_pushinteger(L, lrock_http_start(L, &req, 2, 0,
                                      no_headers ? push_without_headers : push_with_headers,
                                      NULL));
  return 1;
}

static int l_http_cancel(lua_State *L) {
  lua_Integer id = luaL_checkinteger(L, 1);
  lrock_ctx_t *ctx = lrock_ctx(L);
  for (op_t *o = ctx->ops; o; o = o->next) {
    if (o->id != id) continue;
    op_unlink(o);
    rock_http_xfer_cancel(o->xfer);
    op_free(L, o);
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  return 1;
}

/* n = core.http_local_pending(): requests under way to a unix socket
 * peer (task.lua polls briefly before sleeping only while n > 0). */
static int l_http_local_pending(lua_State *L) {
  lrock_ctx_t *ctx = lrock_ctx(L);
  lua_pushinteger(L, ctx->http ? rock_http_client_local_pending(ctx->http) : 0);
  return 1;
}

const luaL_Reg lrock_http_funcs[] = {
    {"http_request", l_http_request},
    {"http_cancel", l_http_cancel},
    {"http_local_pending", l_http_local_pending},
    {NULL, NULL},
};
