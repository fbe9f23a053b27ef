/* lua_http.c: the Lua face of client.c, registered into rock.core as
 *   id = core.http_request(opts, cb)   cb(res) or cb(nil, err), later
 *   core.http_cancel(id)               the callback will not run
 * opts: {method=, url=, headers={k=v}|{"K: v"}, body=, timeout=, unix_socket=,
 *        response_headers= (false: res.headers is not made)}
 * res: {status=, headers={lowercased name=value}, body=}; err: {code=, message=}.
 * lrock_http_start is shared with lua_engine.c, whose calls answer with
 * rock_engine_result's reading of the response instead.
 * The callback runs on the main Lua state from the loop (never inside curl);
 * lua/rock/http.lua turns this into a call that waits inside a task. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../core/lua_core.h"
#include "../engine/engine.h"
#include "client.h"

typedef struct op {
  struct op *prev, *next;
  lrock_ctx_t *ctx;
  rock_http_xfer_t *xfer;
  lua_Integer id;
  int cb_ref;
  int chunk_ref;   /* on_chunk function, or LUA_NOREF */
  int no_headers;  /* the caller does not read the response headers */
  char *engine_op; /* an Engine API call: answer read by rock_engine_result */
} op_t;

static op_t *ops;
static lua_Integer next_id;

static void op_unlink(op_t *o) {
  if (o->prev) o->prev->next = o->next;
  else ops = o->next;
  if (o->next) o->next->prev = o->prev;
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

static void op_free(lua_State *L, op_t *o) {
  luaL_unref(L, LUA_REGISTRYINDEX, o->cb_ref);
  luaL_unref(L, LUA_REGISTRYINDEX, o->chunk_ref);
  free(o->engine_op);
  free(o);
}

static void on_chunk(void *data, const char *p, size_t n) {
  op_t *o = data;
  lua_State *L = o->ctx->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, o->chunk_ref);
  lua_pushlstring(L, p, n);
  lrock_call(L, 1);
}

/* An Engine API answer: (res) for success, (nil, err) with the engine's
 * message and the HTTP status otherwise. */
static int push_engine_result(lua_State *L, const char *op,
                              const rock_http_response_t *r) {
  rock_engine_result_t er;
  rock_engine_result(op, r, &er);
  if (er.err != ROCK_E_OK) {
    lua_pushnil(L);
    lrock_push_error(L, er.err, er.message, op);
    lua_pushinteger(L, er.status);
    lua_setfield(L, -2, "status");
    return 2;
  }
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, er.status);
  lua_setfield(L, -2, "status");
  lua_pushlstring(L, er.body, er.body_len);
  lua_setfield(L, -2, "body");
  return 1;
}

static void on_done(void *data, const rock_http_response_t *r) {
  op_t *o = data;
  lua_State *L = o->ctx->L;
  op_unlink(o);
  lua_rawgeti(L, LUA_REGISTRYINDEX, o->cb_ref);
  int nargs;
  if (o->engine_op) {
    nargs = push_engine_result(L, o->engine_op, r);
  } else if (r->err == ROCK_E_OK) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, r->status);
    lua_setfield(L, -2, "status");
    if (!o->no_headers) {
      push_headers(L, r->headers, r->headers_len);
      lua_setfield(L, -2, "headers");
    }
    lua_pushlstring(L, r->body, r->body_len);
    lua_setfield(L, -2, "body");
    nargs = 1;
  } else {
    lua_pushnil(L);
    lrock_push_error(L, r->err, r->message, "http_request");
    nargs = 2;
  }
  op_free(L, o);
  lrock_call(L, nargs);
}

lua_Integer lrock_http_start(lua_State *L, rock_http_request_t *req, int cb,
                             int chunk, const char *engine_op, int no_headers) {
  lrock_ctx_t *ctx = lrock_ctx(L);
  op_t *o = calloc(1, sizeof *o);
  if (!o || (engine_op && !(o->engine_op = strdup(engine_op)))) {
    free(o);
    return luaL_error(L, "out of memory");
  }
  o->ctx = ctx;
  o->cb_ref = o->chunk_ref = LUA_NOREF;
  o->no_headers = no_headers;
  if (chunk) req->on_chunk = on_chunk;
  rock_err e = rock_http_client_request(ctx->http, req, on_done, o, &o->xfer);
  if (e != ROCK_E_OK) {
    free(o->engine_op);
    free(o);
    return luaL_error(L, "%s: %s", engine_op ? engine_op : "http_request",
                      rock_err_message(e));
  }
  lua_pushvalue(L, cb);
  o->cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (chunk) {
    lua_pushvalue(L, chunk);
    o->chunk_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  o->id = ++next_id;
  o->next = ops;
  if (ops) ops->prev = o;
  ops = o;
  return o->id;
}

int lrock_http_request(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  rock_http_request_t req = {0};
  req.url = lrock_opt_string(L, 1, "url");
  if (!req.url) return luaL_argerror(L, 1, "'url' is required");
  req.method = lrock_opt_string(L, 1, "method");
  req.unix_socket = lrock_opt_string(L, 1, "unix_socket");
  req.body = lrock_opt_lstring(L, 1, "body", &req.body_len);
  req.timeout = lrock_opt_number(L, 1, "timeout", 0);
  /* headers: {["Name"]="value"} or {"Name: value"}, flattened into a list
   * table that stays on the stack so the strings outlive this call's C use */
  const char *hdrs[65];
  int nh = 0;
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_getfield(L, 1, "headers");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2) && nh < 64) {
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
  lua_pushinteger(L, lrock_http_start(L, &req, 2, 0, NULL, no_headers));
  return 1;
}

int lrock_http_cancel(lua_State *L) {
  lua_Integer id = luaL_checkinteger(L, 1);
  for (op_t *o = ops; o; o = o->next) {
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

void lrock_http_cancel_all(lua_State *L) {
  while (ops) {
    op_t *o = ops;
    op_unlink(o);
    op_free(L, o); /* the client frees the transfers when it closes */
  }
}
