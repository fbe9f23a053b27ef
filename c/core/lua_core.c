/* lua_core.c: luaopen_rock_core, the one boundary between C and Lua.
 * It binds to luv's loop (the host sets it with luv_set_loop first; under
 * stock lua5.4 it is the loop of the luv module) so recipes can mix luv
 * handles with rock calls. Only the files of lua/rock call rock.core; its functions
 * are declared in lua/rock/_meta/core.lua. */
#include <lauxlib.h>
#include <lua.h>
#include <luv/luv.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../c/include/rock.h"
#include "base64.h"
#include "log.h"
#include "lua_core.h"
#include "paths.h"

#define CTX_KEY "rock.ctx"       /* registry: the context userdata */
#define CTX_MT "rock.context" /* its metatable */

static int ctx_gc(lua_State *L) {
  lrock_ctx_t *ctx = luaL_checkudata(L, 1, CTX_MT);
  lrock_http_cancel_all(L);
  if (ctx->http) rock_http_client_close(ctx->http);
  ctx->http = NULL;
  return 0;
}

void lrock_shutdown(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
  if (lua_isuserdata(L, -1)) {
    lua_pushcfunction(L, ctx_gc);
    lua_insert(L, -2);
    lua_call(L, 1, 0);
  } else {
    lua_pop(L, 1);
  }
}

lrock_ctx_t *lrock_ctx(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
  lrock_ctx_t *ctx = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!ctx) luaL_error(L, "rock.core is not initialised");
  return ctx;
}

void lrock_push_error(lua_State *L, rock_err e, const char *message,
                      const char *op) {
  lua_createtable(L, 0, 3);
  lua_pushstring(L, rock_err_name(e));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, message ? message : rock_err_message(e));
  lua_setfield(L, -2, "message");
  if (op) {
    lua_pushstring(L, op);
    lua_setfield(L, -2, "op");
  }
  /* rock.errors' metatable (tostring, errors.is), once that module loaded */
  if (luaL_getmetatable(L, "rock.error") == LUA_TTABLE) lua_setmetatable(L, -2);
  else lua_pop(L, 1);
}

const char *lrock_opt_lstring(lua_State *L, int t, const char *k, size_t *len) {
  lua_getfield(L, t, k);
  const char *s = lua_isnil(L, -1) ? NULL : luaL_checklstring(L, -1, len);
  lua_pop(L, 1); /* still anchored by the options table */
  return s;
}

const char *lrock_opt_string(lua_State *L, int t, const char *k) {
  return lrock_opt_lstring(L, t, k, NULL);
}

double lrock_opt_number(lua_State *L, int t, const char *k, double dflt) {
  lua_getfield(L, t, k);
  double v = luaL_optnumber(L, -1, dflt);
  lua_pop(L, 1);
  return v;
}

static int traceback(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING)
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

void lrock_call(lua_State *L, int nargs) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  if (lua_pcall(L, nargs, 0, base)) {
    const char *msg = luaL_tolstring(L, -1, NULL);
    rock_log(ROCK_LOG_ERROR, "lua", "msg=\"uncaught error in callback\" error=\"%s\"", msg);
    lua_pop(L, 2);
  }
  lua_remove(L, base);
}

static int l_version(lua_State *L) {
  lua_pushstring(L, ROCK_VERSION);
  return 1;
}

/* The rocklet binary: $ROCK_ROCKLET, else the one installed next to this
 * code, else the build tree's, else the configure-time install dir's. */
static int l_rocklet_path(lua_State *L) {
  const char *env = getenv("ROCK_ROCKLET");
  char buf[4096];
  if (!(env && *env)) env = rock__installed(ROCK_INSTALL_LIBEXEC_REL "/rocklet", buf, sizeof buf);
  if (env && *env) {
    lua_pushstring(L, env);
    return 1;
  }
  const char *built = ROCK_BUILD_DIR "/rocklet";
  lua_pushstring(L, access(built, X_OK) == 0
                        ? built
                        : ROCK_INSTALL_LIBEXEC_DIR "/rocklet");
  return 1;
}

/* core.base64_encode(s) / core.base64_decode(s): for bytes JSON cannot
 * carry (c/core/base64.h); decode raises invalid_argument on bad input. */
static int base64_op(lua_State *L, int encode) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  rock_buf_t b = {0};
  int rc = encode ? rock_base64_encode(&b, s, n) : rock_base64_decode(&b, s, n);
  if (rc) {
    rock_buf_free(&b);
    lrock_push_error(L, rc == -1 ? ROCK_E_NO_MEMORY : ROCK_E_INVALID_ARGUMENT,
                     rc == -1 ? NULL : "not base64", "base64");
    return lua_error(L);
  }
  lua_pushlstring(L, b.data ? b.data : "", b.len);
  rock_buf_free(&b);
  return 1;
}
static int l_base64_encode(lua_State *L) { return base64_op(L, 1); }
static int l_base64_decode(lua_State *L) { return base64_op(L, 0); }

static int l_getpid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

static const luaL_Reg funcs[] = {
    {"version", l_version},
    {"rocklet_path", l_rocklet_path},
    {"getpid", l_getpid},
    {"base64_encode", l_base64_encode},
    {"base64_decode", l_base64_decode},
    {"http_request", lrock_http_request},
    {"http_cancel", lrock_http_cancel},
    {"engine_request", lrock_engine_request},
    {"rmtree", lrock_local_rmtree},
    {"proc_start_time", lrock_local_proc_start_time},
    {NULL, NULL},
};

int luaopen_rock_core(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
  int have = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (!have) {
    /* luv first: its loop is ours */
    lua_getglobal(L, "require");
    lua_pushstring(L, "luv");
    lua_call(L, 1, 0);
    lrock_ctx_t *ctx = lua_newuserdatauv(L, sizeof *ctx, 0);
    memset(ctx, 0, sizeof *ctx);
    luaL_newmetatable(L, CTX_MT);
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    ctx->L = lua_tothread(L, -1);
    lua_pop(L, 1);
    ctx->loop = luv_loop(L);
    if (rock_http_client_init(&ctx->http, ctx->loop) != ROCK_E_OK)
      return luaL_error(L, "rock.core: cannot start the http client");
  }
  luaL_newlib(L, funcs);
  luaL_setfuncs(L, lrock_images_funcs, 0);
  return 1;
}
