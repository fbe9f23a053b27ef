/* lua_engine.c: the Lua face of engine.c, registered into rock.core as
 *   id = core.engine_request(opts, cb [, on_chunk])
 * opts: {socket=, op=, params={name=value}, body= (JSON text),
 *        body_file=, out_file=, timeout=}
 * cb(res) with res {status=, body=}, or cb(nil, err) with err {code=,
 * message=, status=, op=}; on_chunk(bytes) gets a streaming body (image
 * pull progress) as it arrives. core.http_cancel(id) cancels. The policy
 * (which calls, in which order, what to retry) is lua/rock/engine.lua's.
 * Reading the Engine's answers (rock_engine_result) happens here, in the
 * push function handed to lrock_http_start; lua_http.c knows no engine. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../core/lua_core.h"
#include "../http/lua_http.h"
#include "engine.h"

#define MAX_PARAMS 16

/* An Engine API answer: (res) for success, (nil, err) with the engine's
 * message and the HTTP status otherwise. data is the op's name. */
static int push_engine_result(lua_State *L, void *data,
                              const rock_http_response_t *r) {
  const char *op = data ? data : "engine_request";
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

static int l_engine_request(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  int chunk = lua_isnoneornil(L, 3) ? 0 : (luaL_checktype(L, 3, LUA_TFUNCTION), 3);
  rock_engine_call_t call = {0};
  call.socket = lrock_opt_string(L, 1, "socket");
  call.op = lrock_opt_string(L, 1, "op");
  call.body_file = lrock_opt_string(L, 1, "body_file");
  call.out_file = lrock_opt_string(L, 1, "out_file");
  call.body = lrock_opt_lstring(L, 1, "body", &call.body_len);
  call.timeout = lrock_opt_number(L, 1, "timeout", 0);
  if (!(call.timeout >= 0)) return luaL_argerror(L, 1, "'timeout' must be >= 0");
  /* params: string values kept alive in a list table on the stack */
  const char *params[2 * MAX_PARAMS + 1];
  int np = 0;
  lua_newtable(L);
  int keep = lua_gettop(L);
  lua_getfield(L, 1, "params");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (np == 2 * MAX_PARAMS) return luaL_argerror(L, 1, "more than 16 params");
      lua_pushvalue(L, -2);
      params[np] = luaL_tolstring(L, -1, NULL);
      lua_rawseti(L, keep, np + 1);
      params[np + 1] = luaL_tolstring(L, -2, NULL);
      lua_rawseti(L, keep, np + 2);
      np += 2;
      lua_pop(L, 2); /* the key copy, the value */
    }
  }
  params[np] = NULL;
  call.params = params;
  rock_http_request_t req;
  char *url;
  const char *why = NULL;
  rock_err e = rock_engine_request(&call, &req, &url, &why);
  if (e != ROCK_E_OK) /* an unknown op, a missing path parameter */
    return lrock_raise(L, e, why, call.op);
  lua_Integer id = lrock_http_start(L, &req, 2, chunk, push_engine_result,
                                    call.op ? strdup(call.op) : NULL);
  free(url);
  lua_pushinteger(L, id);
  return 1;
}

const luaL_Reg lrock_engine_funcs[] = {
    {"engine_request", l_engine_request},
    {NULL, NULL},
};
