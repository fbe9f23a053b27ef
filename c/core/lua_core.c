/* lua_core.c: luaopen_rock_core, the one boundary between C and Lua: the
 * per-state context, the error metatable and convention, the one
 * protected-call path, and the table gathered from each folder's luaL_Reg
 * (as luv.c does). It binds to luv's loop (the host sets it with
 * luv_set_loop first; under stock lua5.4 it is the loop of the luv module)
 * so recipes can mix luv handles with rock calls. Only the files of
 * lua/rock call rock.core; lua/rock/_meta/core.lua declares it all. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <luv/luv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../../c/include/rock.h"
#include "base64.h"
#include "log.h"
#include "lua_core.h"
#include "paths.h"
#include "utf8.h"
#include "../rocklet/output.h" /* the scrub, shared with the rocklet */

#define CTX_KEY "rock.ctx"       /* registry: the context userdata */
#define CTX_MT "rock.context" /* its metatable */

static int ctx_gc(lua_State *L) {
  lrock_ctx_t *ctx = luaL_checkudata(L, 1, CTX_MT);
  ctx->closed = 1;
  if (ctx->close_http) ctx->close_http(ctx);
  ctx->close_http = NULL;
  if (ctx->close_serve) ctx->close_serve(ctx);
  ctx->close_serve = NULL;
  if (ctx->close_forms) ctx->close_forms(ctx);
  ctx->close_forms = NULL;
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

/* ---- errors ------------------------------------------------------------ */

static int error_tostring(lua_State *L) {
  lua_getfield(L, 1, "code");
  lua_getfield(L, 1, "message");
  lua_pushfstring(L, "%s: %s", luaL_optstring(L, -2, "?"), luaL_optstring(L, -1, ""));
  return 1;
}

/* The error metatable, made once per state at luaopen (rock.errors takes
 * this same table as its own). */
static void error_mt_init(lua_State *L) {
  if (luaL_newmetatable(L, LROCK_ERROR_MT)) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
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
  luaL_setmetatable(L, LROCK_ERROR_MT);
}

int lrock_raise(lua_State *L, rock_err e, const char *message, const char *op) {
  lrock_push_error(L, e, message, op);
  return lua_error(L);
}

/* ---- options ----------------------------------------------------------- */

const char *lrock_opt_lstring(lua_State *L, int t, const char *k, size_t *len) {
  lua_getfield(L, t, k);
  const char *s = NULL;
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
    s = lua_tolstring(L, -1, len);
  else if (!lua_isnil(L, -1))
    luaL_argerror(L, t, lua_pushfstring(L, "'%s' must be a string, not %s", k,
                                        luaL_typename(L, -1)));
  lua_pop(L, 1); /* still anchored by the options table */
  return s;
}

const char *lrock_opt_string(lua_State *L, int t, const char *k) {
  return lrock_opt_lstring(L, t, k, NULL);
}

double lrock_opt_number(lua_State *L, int t, const char *k, double dflt) {
  lua_getfield(L, t, k);
  double v = dflt;
  if (lua_type(L, -1) == LUA_TNUMBER)
    v = lua_tonumber(L, -1);
  else if (!lua_isnil(L, -1))
    luaL_argerror(L, t, lua_pushfstring(L, "'%s' must be a number, not %s", k,
                                        luaL_typename(L, -1)));
  lua_pop(L, 1);
  return v;
}

uint64_t lrock_opt_size(lua_State *L, int t, const char *k, uint64_t dflt) {
  double v = lrock_opt_number(L, t, k, (double)dflt);
  if (!(v >= 0) || v > 9e15 || v != (double)(uint64_t)v)
    luaL_argerror(L, t, lua_pushfstring(L, "'%s' must be a whole number >= 0", k));
  return (uint64_t)v;
}

/* ---- the protected-call path ------------------------------------------ */

static int traceback(lua_State *L) {
  luaL_traceback(L, L, luaL_tolstring(L, 1, NULL), 1);
  return 1;
}

int lrock_pcall(lua_State *L, int nargs, int nresults, int flags) {
  (void)flags;
  int base = lua_gettop(L) - nargs; /* the function */
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  int rc = lua_pcall(L, nargs, nresults, base);
  if (rc) {
    rock_log(ROCK_LOG_ERROR, "lua", "msg=\"uncaught error in callback\" error=\"%s\"",
             lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_remove(L, base);
  return rc ? -rc : nresults;
}

void lrock_call(lua_State *L, int nargs) {
  lrock_ctx_t *ctx = lrock_ctx(L);
  luv_ctx_t *luv = ctx->luv;
  int n = luv->cb_pcall(L, nargs, 0, 0);
  if (n > 0) lua_pop(L, n);
}

/* ---- rock.core's own functions ----------------------------------------- */

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
    return lrock_raise(L, rc == -1 ? ROCK_E_NO_MEMORY : ROCK_E_INVALID_ARGUMENT,
                       rc == -1 ? NULL : "not base64",
                       encode ? "base64_encode" : "base64_decode");
  }
  lua_pushlstring(L, b.data ? b.data : "", b.len);
  rock_buf_free(&b);
  return 1;
}
static int l_base64_encode(lua_State *L) { return base64_op(L, 1); }
static int l_base64_decode(lua_State *L) { return base64_op(L, 0); }

/* core.utf8_clean(s): s with each byte of an invalid UTF-8 sequence
 * replaced by U+FFFD (c/core/utf8.h); s itself when it is valid. */
static int l_utf8_clean(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  size_t ok = rock_utf8_valid_prefix(s, n);
  if (ok == n) {
    lua_settop(L, 1);
    return 1;
  }
  rock_buf_t b = {0};
  if (rock_buf_append(&b, s, ok) || rock_utf8_clean(&b, s + ok, n - ok)) {
    rock_buf_free(&b);
    return lrock_raise(L, ROCK_E_NO_MEMORY, NULL, "utf8_clean");
  }
  lua_pushlstring(L, b.data, b.len);
  rock_buf_free(&b);
  return 1;
}

/* core.output_clean(s): command output as the rocklet returns it as text
 * (c/rocklet/output.h: CRLF -> LF, ANSI escapes removed, invalid UTF-8 ->
 * U+FFFD), for bytes that came raw (GET /file, a raw /execute) and are
 * to be returned as text; s itself when nothing changes. */
static int l_output_clean(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  rock_buf_t b = {0};
  if (rock_output_clean(&b, s, n)) {
    rock_buf_free(&b);
    return lrock_raise(L, ROCK_E_NO_MEMORY, NULL, "output_clean");
  }
  if (b.len == n && (!n || !memcmp(b.data, s, n))) lua_settop(L, 1);
  else lua_pushlstring(L, b.data ? b.data : "", b.len);
  rock_buf_free(&b);
  return 1;
}

/* core.lock_file(path) -> lock: an exclusive flock(2) on path (made if
 * missing), held until lock:release(), its __close or __gc, or the
 * process's end (kill -9 too: the kernel drops it). The fd is close-on-
 * exec, so no child holds it after us. The file then holds our pid. Held
 * by another open (another process, or this one): raises conflict with
 * holder_pid = the pid the file names (when it names one). path may be a
 * directory: its own inode is locked (a file in it can be deleted while
 * held, and a new one locked beside it; a directory with files cannot),
 * and no pid is written or read. */
#define LOCK_MT "rock.lock"

static int lock_release(lua_State *L) {
  int *fd = luaL_checkudata(L, 1, LOCK_MT);
  if (*fd >= 0) close(*fd); /* closing the only fd drops the flock */
  *fd = -1;
  return 0;
}

static int lock_raise_errno(lua_State *L, int e, const char *path, const char *what) {
  lrock_push_error(L, ROCK_E_IO, NULL, "lock_file");
  lua_pushfstring(L, "cannot %s %s: %s", what, path, strerror(e));
  lua_setfield(L, -2, "message");
  lua_pushstring(L, uv_err_name(uv_translate_sys_error(e)));
  lua_setfield(L, -2, "errno");
  return lua_error(L);
}

static int l_lock_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int *ud = lua_newuserdatauv(L, sizeof *ud, 0);
  *ud = -1;
  if (luaL_newmetatable(L, LOCK_MT)) {
    lua_pushcfunction(L, lock_release);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, lock_release);
    lua_setfield(L, -2, "__close");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, lock_release);
    lua_setfield(L, -2, "release");
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, -2);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644), is_dir = 0;
  if (fd < 0 && errno == EISDIR) {
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    is_dir = 1;
  }
  if (fd < 0) return lock_raise_errno(L, errno, path, "open");
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    int e = errno;
    char buf[32];
    ssize_t n = e == EWOULDBLOCK && !is_dir ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    close(fd);
    if (e != EWOULDBLOCK) return lock_raise_errno(L, e, path, "lock");
    lrock_push_error(L, ROCK_E_CONFLICT, NULL, "lock_file");
    lua_pushfstring(L, "%s is locked by another process", path);
    lua_setfield(L, -2, "message");
    buf[n > 0 ? n : 0] = 0;
    long pid = strtol(buf, NULL, 10);
    if (pid > 0) {
      lua_pushinteger(L, pid);
      lua_setfield(L, -2, "holder_pid");
    }
    return lua_error(L);
  }
  *ud = fd;
  if (is_dir) return 1;
  char pid[32];
  int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  /* the pid only names the holder in a refusal: a full disk does not
   * undo the lock */
  if (ftruncate(fd, 0) == 0) {
    ssize_t w = pwrite(fd, pid, (size_t)len, 0);
    (void)w;
  }
  return 1;
}

static int l_getpid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

/* core.log(level, area, message): one line through rock_log, so ROCK_LOG
 * governs Lua's lines as it does C's; core.log_enabled(level) lets Lua
 * skip formatting a line that would not be written. */
static const char *const LEVELS[] = {"debug", "info", "warn", "error", NULL};

static int l_log(lua_State *L) {
  int level = luaL_checkoption(L, 1, NULL, LEVELS);
  const char *area = luaL_checkstring(L, 2);
  const char *msg = luaL_checkstring(L, 3);
  rock_log(level, area, "%s", msg);
  return 0;
}

static int l_log_enabled(lua_State *L) {
  lua_pushboolean(L, rock_log_enabled(luaL_checkoption(L, 1, NULL, LEVELS)));
  return 1;
}

const luaL_Reg lrock_core_funcs[] = {
    {"version", l_version},
    {"rocklet_path", l_rocklet_path},
    {"getpid", l_getpid},
    {"base64_encode", l_base64_encode},
    {"base64_decode", l_base64_decode},
    {"utf8_clean", l_utf8_clean},
    {"output_clean", l_output_clean},
    {"lock_file", l_lock_file},
    {"log", l_log},
    {"log_enabled", l_log_enabled},
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
    error_mt_init(L);
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
    luv_ctx_t *luv = luv_context(L);
    ctx->luv = luv;
    /* luv's default hook exits the process on an error (stock lua5.4) */
    if (luv->cb_pcall == luv_cfpcall) luv_set_callback(L, lrock_pcall);
  }
  static const luaL_Reg *const all[] = {
      lrock_core_funcs, lrock_http_funcs, lrock_serve_funcs, lrock_form_funcs, lrock_engine_funcs,
      lrock_images_funcs, lrock_local_funcs, lrock_overlay_funcs,
  };
  lua_newtable(L);
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) luaL_setfuncs(L, all[i], 0);
  return 1;
}
