/* lua_core.h: glue shared by the C files that face Lua (rock.core).
 * One context per Lua state holds the loop (luv's), the HTTP client and the
 * main thread that runs callbacks. lua_core.c builds the rock.core table. */
#ifndef ROCK_CORE_LUA_CORE_H
#define ROCK_CORE_LUA_CORE_H

#include <lauxlib.h>
#include <lua.h>
#include <uv.h>

#include "../http/client.h"
#include "err.h"

typedef struct {
  lua_State *L; /* the main thread: callbacks run here */
  uv_loop_t *loop;
  rock_http_client_t *http;
} lrock_ctx_t;

/* The context of L's state (created by luaopen_rock_core). */
lrock_ctx_t *lrock_ctx(lua_State *L);
/* Push {code=, message=, op=}. message may be NULL (the default is used). */
void lrock_push_error(lua_State *L, rock_err e, const char *message,
                      const char *op);
/* Fields of an options table at index t: a string (NULL when absent; it
 * stays valid while the table holds it), with its length, or a number. */
const char *lrock_opt_string(lua_State *L, int t, const char *k);
const char *lrock_opt_lstring(lua_State *L, int t, const char *k, size_t *len);
double lrock_opt_number(lua_State *L, int t, const char *k, double dflt);
/* Call the function below nargs arguments in protected mode; an error is
 * logged with its traceback and dropped (a callback has no caller). */
void lrock_call(lua_State *L, int nargs);

/* Close rock.core's C handles (HTTP client); safe to call twice. The
 * host calls it before closing luv's handles and the Lua state. */
void lrock_shutdown(lua_State *L);

int lrock_http_request(lua_State *L);
int lrock_http_cancel(lua_State *L);
void lrock_http_cancel_all(lua_State *L);
/* Start req on the context's client; cb and chunk (0 = none) are stack
 * indexes of the callbacks; engine_op makes the answer an Engine API
 * result; no_headers skips the response's header table. Returns the id
 * http_cancel takes. */
lua_Integer lrock_http_start(lua_State *L, rock_http_request_t *req, int cb,
                             int chunk, const char *engine_op, int no_headers);
int lrock_engine_request(lua_State *L);
/* c/images/lua_images.c: the image cache index functions. */
extern const luaL_Reg lrock_images_funcs[];
int lrock_local_rmtree(lua_State *L);
int lrock_local_proc_start_time(lua_State *L);

#endif
