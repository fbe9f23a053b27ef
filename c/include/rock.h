/* rock.h: the public C API of librock, for programs that embed the host.
 *
 *   rock_host_t *h = rock_host_new(&err);
 *   int status = rock_host_run_file(h, "recipe.lua", argc, argv);
 *   rock_host_free(h);
 *
 * A host is one Lua state (with the rock library, luv and cjson) on one
 * libuv loop. Running a recipe runs its top-level code as the main task and
 * the loop until every task is done, then stops what the recipe left
 * running (sandboxes). Link with `pkg-config --libs rock`.
 *
 * A process may hold several hosts, each on its own loop: each host's
 * state (HTTP client, requests in flight) belongs to its Lua state alone.
 * Callbacks into Lua (luv's and rock's) run through luv's protected-call
 * hook; the host installs one that logs an uncaught error with its
 * traceback and keeps the loop running (see docs/c-api.md). */
#ifndef ROCK_H
#define ROCK_H

#include <lua.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rock_host rock_host_t;

/* The library version, "MAJOR.MINOR.PATCH". */
const char *rock_version(void);

/* A new host on a new loop. NULL on failure, with a message in *err (static
 * storage) when err is not NULL. A process whose SIGPIPE disposition is
 * still the default gets a handler that does nothing (docs/c-api.md). */
rock_host_t *rock_host_new(const char **err);

/* Run a recipe file with arg = {[0]=path, argv...} as the lua command does.
 * Returns 0 when the main task ended without error, 1 otherwise (the error
 * and its traceback are printed on stderr). */
int rock_host_run_file(rock_host_t *h, const char *path, int argc,
                       char **argv);
/* Run a chunk of Lua source as the main task; same result as above. */
int rock_host_run_string(rock_host_t *h, const char *code);

/* The host's Lua state and loop, to add C functions or uv handles. */
lua_State *rock_host_lua(rock_host_t *h);
uv_loop_t *rock_host_loop(rock_host_t *h);

/* Close the Lua state (closing rock's handles) and the loop. */
void rock_host_free(rock_host_t *h);

/* The rock.core module, for a Lua state of your own (package.preload). */
int luaopen_rock_core(lua_State *L);

#ifdef __cplusplus
}
#endif
#endif
