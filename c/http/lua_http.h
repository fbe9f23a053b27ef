/* lua_http.h: the request start lua_http.c shares with the other Lua faces
 * that speak HTTP (lua_engine.c). The generic glue knows no protocol on top
 * of HTTP: the caller passes the function that turns a response into the
 * callback's arguments. */
#ifndef ROCK_HTTP_LUA_HTTP_H
#define ROCK_HTTP_LUA_HTTP_H

#include <lua.h>

#include "client.h"

/* Push the callback's arguments for res (or for a failure: res->err set)
 * and return how many: (res) or (nil, err) by rock's convention. data is
 * the pointer given to lrock_http_start. */
typedef int (*lrock_http_push_fn)(lua_State *L, void *data,
                                  const rock_http_response_t *res);

/* Start req on L's context: cb and chunk (0 = none) are stack indexes of
 * the callback and of an on_chunk(bytes) function; push builds cb's
 * arguments. data (may be NULL) is owned by the request from here on and
 * freed with free() once it ends (answered, cancelled, or failed to
 * start). Returns the id core.http_cancel takes. A request that cannot
 * start calls cb(nil, err) before returning (and returns 0, an id of
 * nothing), so a failure always arrives the same way. */
lua_Integer lrock_http_start(lua_State *L, rock_http_request_t *req, int cb,
                             int chunk, lrock_http_push_fn push, void *data);

/* lua_serve.c's relays (core.http_request's relay=): a sink that streams
 * a 2xx answer to the client of the rock.http_request handle at stack
 * index idx, or NULL (*why says why: not such a handle, or answered).
 * The handle is held until lrock_serve_sink_end, which the transfer's end
 * calls once (ok: a whole 2xx answer; else a started answer is cut). */
rock_http_sink_t *lrock_serve_sink(lua_State *L, int idx, const char **why);
void lrock_serve_sink_end(lua_State *L, rock_http_sink_t *k, int ok);

/* lua_serve.c's body relays (core.http_request's body_from=): a source
 * that reads the body of the rock.http_request handle at stack index idx
 * as its client sends it, or NULL (*why says why: not such a handle,
 * answered, its body not streamed, or relayed already). The handle is
 * held until lrock_serve_source_end, which the transfer's end calls once. */
rock_http_source_t *lrock_serve_source(lua_State *L, int idx, const char **why);
void lrock_serve_source_end(lua_State *L, rock_http_source_t *k);

#endif
