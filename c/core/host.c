/* host.c: the embeddable host of rock.h: a Lua state with luv bound to the
 * host's loop, rock.core preloaded, package.path pointing at rock's Lua
 * library, and recipes run as the main task by lua/rock/_main.lua. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <luv/luv.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../include/rock.h"
#include "log.h"
#include "lua_core.h"
#include "paths.h"

struct rock_host {
  lua_State *L;
  uv_loop_t loop;
};

const char *rock_version(void) { return ROCK_VERSION; }

/* The main task's error handler: the message with its traceback. */
static int traceback(lua_State *L) {
  luaL_traceback(L, L, luaL_tolstring(L, 1, NULL), 1);
  return 1;
}

/* The directory holding rock/init.lua: $ROCK_LUA_DIR, the installed copy
 * next to this program, the source tree (build-tree programs), or the
 * configure-time install dir. */
static const char *lua_dir(char *buf, size_t cap) {
  const char *env = getenv("ROCK_LUA_DIR");
  if (env && *env) return env;
  if (rock__installed(ROCK_INSTALL_LUA_REL "/rock/init.lua", buf, cap)) {
    buf[strlen(buf) - strlen("/rock/init.lua")] = 0;
    return buf;
  }
  if (access(ROCK_SOURCE_LUA_DIR "/rock/init.lua", R_OK) == 0)
    return ROCK_SOURCE_LUA_DIR;
  return ROCK_INSTALL_LUA_DIR;
}

/* A write to a peer that went away (a client of rock serve, a rocklet)
 * must fail that connection with EPIPE, not end the host with SIGPIPE.
 * A handler that does nothing, rather than SIG_IGN: an exec resets a
 * handled signal to its default but keeps an ignored one ignored, so the
 * commands a recipe starts (io.popen, os.execute) still die of SIGPIPE as
 * `yes | head` expects. A program that chose its own disposition keeps it. */
static void on_sigpipe(int sig) { (void)sig; }

static void quiet_sigpipe(void) {
  struct sigaction old, sa = {.sa_handler = on_sigpipe, .sa_flags = SA_RESTART};
  if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
      !(old.sa_flags & SA_SIGINFO)) {
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
  }
}

rock_host_t *rock_host_new(const char **err) {
  quiet_sigpipe();
  rock_host_t *h = calloc(1, sizeof *h);
  if (!h || uv_loop_init(&h->loop)) {
    free(h);
    if (err) *err = "cannot create the event loop";
    return NULL;
  }
  lua_State *L = h->L = luaL_newstate();
  if (!L) {
    uv_loop_close(&h->loop);
    free(h);
    if (err) *err = "cannot create a Lua state";
    return NULL;
  }
  luaL_openlibs(L);
  luv_set_loop(L, &h->loop);
  luv_set_callback(L, lrock_pcall); /* logs, keeps running */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_luv);
  lua_setfield(L, -2, "luv");
  lua_pushcfunction(L, luaopen_rock_core);
  lua_setfield(L, -2, "rock.core");
  lua_pop(L, 1);
  /* package.path = <lua dir>/?.lua;<lua dir>/?/init.lua;<default> */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  char buf[4096];
  const char *dir = lua_dir(buf, sizeof buf);
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", dir, dir, lua_tostring(L, -1));
  lua_setfield(L, -3, "path");
  lua_pop(L, 2);
  return h;
}

lua_State *rock_host_lua(rock_host_t *h) { return h->L; }
uv_loop_t *rock_host_loop(rock_host_t *h) { return &h->loop; }

/* Call the function below its nargs arguments on the stack as the main
 * task, through rock._main.run; returns the recipe's exit status. */
static int run_main(rock_host_t *h, int nargs) {
  lua_State *L = h->L;
  int base = lua_gettop(L) - nargs; /* the function */
  lua_pushcfunction(L, traceback);
  lua_insert(L, base); /* stack: traceback fn args... */
  lua_getglobal(L, "require");
  lua_pushstring(L, "rock._main");
  int status = 1;
  if (lua_pcall(L, 1, 1, base)) {
    fprintf(stderr, "rock: %s\n", lua_tostring(L, -1));
  } else {
    lua_getfield(L, -1, "run");
    lua_remove(L, -2);
    lua_insert(L, base + 1); /* stack: traceback run fn args... */
    if (lua_pcall(L, nargs + 1, 1, base))
      fprintf(stderr, "rock: %s\n", lua_tostring(L, -1));
    else
      status = (int)lua_tointeger(L, -1);
  }
  lua_settop(L, base - 1);
  return status;
}

int rock_host_run_file(rock_host_t *h, const char *path, int argc, char **argv) {
  lua_State *L = h->L;
  lua_createtable(L, argc, 1);
  lua_pushstring(L, path);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");
  if (luaL_loadfile(L, path)) {
    fprintf(stderr, "rock: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
  return run_main(h, argc);
}

int rock_host_run_string(rock_host_t *h, const char *code) {
  if (luaL_loadbuffer(h->L, code, strlen(code), "=(command line)")) {
    fprintf(stderr, "rock: %s\n", lua_tostring(h->L, -1));
    lua_pop(h->L, 1);
    return 1;
  }
  return run_main(h, 0);
}

static void close_walk(uv_handle_t *hd, void *arg) {
  (void)arg;
  if (!uv_is_closing(hd)) uv_close(hd, NULL);
}

/* Order matters: rock's C handles first, then luv's handles through luv
 * (their close callbacks need the Lua state), then the state, then the loop. */
void rock_host_free(rock_host_t *h) {
  if (!h) return;
  lua_State *L = h->L;
  lrock_shutdown(L);
  uv_run(&h->loop, UV_RUN_NOWAIT);
  static const char close_luv[] =
      "local uv = require 'luv'\n"
      "uv.walk(function(h) if not h:is_closing() then h:close() end end)\n"
      "uv.run()\n";
  if (luaL_dostring(L, close_luv)) lua_pop(L, 1);
  lua_close(L);
  uv_walk(&h->loop, close_walk, NULL);
  uv_run(&h->loop, UV_RUN_DEFAULT);
  uv_loop_close(&h->loop);
  free(h);
}
