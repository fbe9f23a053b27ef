/* lua_core.h: what every C file facing Lua (rock.core) shares: the
 * per-state context, the error convention, option readers and the one
 * protected-call path. It knows no mechanism: each lua_*.c exports its own
 * luaL_Reg table (declared at the end) and lua_core.c gathers them, as luv.c
 * does. The HTTP start shared with lua_engine.c is in http/lua_http.h. */
#ifndef ROCK_CORE_LUA_CORE_H
#define ROCK_CORE_LUA_CORE_H

#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <uv.h>

#include "err.h"

struct rock_http_client;
struct lrock_http_op;
struct lrock_serve;

/* One per Lua state, created by luaopen_rock_core and owned by the state
 * (a userdata in the registry; its __gc closes what it holds). Every piece
 * of per-host state hangs here, never in a C static: a process may run
 * several hosts (rock.h). */
typedef struct lrock_ctx {
  lua_State *L;       /* the main thread: callbacks run here */
  uv_loop_t *loop;    /* luv's loop */
  void *luv;          /* luv's context (luv_ctx_t *): its cb_pcall */
  int closed;         /* lrock_shutdown ran: no new work starts */
  /* lua_http.c's: the client (made on first use), the requests not yet
   * answered, the next id for http_cancel, and how to close them all */
  struct rock_http_client *http;
  struct lrock_http_op *ops;
  lua_Integer next_id;
  void (*close_http)(struct lrock_ctx *ctx);
  /* lua_serve.c's: the servers listening, and how to close them all */
  struct lrock_serve *serves;
  void (*close_serve)(struct lrock_ctx *ctx);
  /* lua_form.c's: the parses on the thread pool, the next id for
   * multipart_cancel, and how to let them all go */
  struct lrock_form *forms;
  lua_Integer next_form_id;
  void (*close_forms)(struct lrock_ctx *ctx);
} lrock_ctx_t;

/* The context of L's state (created by luaopen_rock_core). */
lrock_ctx_t *lrock_ctx(lua_State *L);

/* Errors (one convention, as luv's): misuse raises at once through
 * luaL_argerror; every runtime failure is an error table {code=, message=,
 * op=} with the "rock.error" metatable (created here, in C, before
 * rock.errors loads; its __tostring gives "code: message"). A synchronous
 * function raises it (lrock_raise); an asynchronous one passes it to its
 * callback as cb(nil, err). message NULL = the code's default. */
#define LROCK_ERROR_MT "rock.error"
void lrock_push_error(lua_State *L, rock_err e, const char *message,
                      const char *op);
int lrock_raise(lua_State *L, rock_err e, const char *message, const char *op);

/* Fields of an options table at index t: a string (NULL when absent; it
 * stays valid while the table holds it), with its length, or a number.
 * A field of the wrong type is misuse (luaL_argerror on argument t). */
const char *lrock_opt_string(lua_State *L, int t, const char *k);
const char *lrock_opt_lstring(lua_State *L, int t, const char *k, size_t *len);
double lrock_opt_number(lua_State *L, int t, const char *k, double dflt);
/* A whole number >= 0 (a size, a count, a port), else misuse. */
uint64_t lrock_opt_size(lua_State *L, int t, const char *k, uint64_t dflt);

/* The one protected-call path for callbacks: the function below nargs
 * arguments is called through luv's cb_pcall (lrock_pcall unless the
 * embedder installed another), so luv's and rock's callbacks fail alike. */
void lrock_call(lua_State *L, int nargs);
/* The hook itself (luv_CFpcall): logs an uncaught error with its traceback
 * through rock_log and keeps the loop running (luv's default exits). The
 * host installs it with luv_set_callback; under stock lua5.4,
 * luaopen_rock_core installs it in place of luv's default. */
int lrock_pcall(lua_State *L, int nargs, int nresults, int flags);

/* Close rock.core's C handles (HTTP client, servers); safe to call twice. The
 * host calls it before closing luv's handles and the Lua state. */
void lrock_shutdown(lua_State *L);

/* Each folder's functions, gathered into rock.core by lua_core.c. */
extern const luaL_Reg lrock_core_funcs[];   /* c/core/lua_core.c */
extern const luaL_Reg lrock_http_funcs[];   /* c/http/lua_http.c */
extern const luaL_Reg lrock_serve_funcs[];  /* c/http/lua_serve.c */
extern const luaL_Reg lrock_form_funcs[];   /* c/http/lua_form.c */
extern const luaL_Reg lrock_engine_funcs[]; /* c/engine/lua_engine.c */
extern const luaL_Reg lrock_images_funcs[]; /* c/images/lua_images.c */
extern const luaL_Reg lrock_local_funcs[];  /* c/local/fs.c */
extern const luaL_Reg lrock_overlay_funcs[]; /* c/overlay/lua_overlay.c */

#endif
