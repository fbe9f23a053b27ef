/* lua_engine.c: the Lua face of engine.c, registered into rock.core as
 *   id = core.engine_request(opts, cb [, on_chunk])
 * opts: {socket=, op=, params={name=value}, body= (JSON text),
 *        body_file=, out_file=, timeout=}
 * cb(res) with res {status=, body=}, or cb(nil, err) with err {code=,
 * message=, status=, op=}; on_chunk(bytes) gets a streaming body (image
 * pull progress) as it arrives. core.http_cancel(id) cancels. The policy
 * (which calls, in which order, what to retry) is lua/rock/engine.lua's. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>

#include "../core/lua_core.h"
#include "engine.h"

#define MAX_PARAMS 16

int lrock_engine_request(lua_State *L) {
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
  /* params: string values kept alive in a list table on the stack */
  const char *params[2 * MAX_PARAMS + 1];
  int np = 0;
  lua_newtable(L);
  int keep = lua_gettop(L);
  lua_getfield(L, 1, "params");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (np == 2 * MAX_PARAMS) return luaL_error(L, "engine_request: too many params");
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
  if (e != ROCK_E_OK) { /* a rock error, as a bad call to any rock function */
    lrock_push_error(L, e, why, call.op);
    return lua_error(L);
  }
  lua_Integer id = lrock_http_start(L, &req, 2, chunk, call.op, 1);
  free(url);
  lua_pushinteger(L, id);
  return 1;
}
