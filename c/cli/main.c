/* main.c: the rock executable.
 *   rock recipe.lua [args...]   run a recipe (arg as in lua)
 *   rock -e 'code'              run a chunk
 *   rock gc | rock ps [--json]  reap / list sandboxes (lua/rock/cli.lua)
 *   rock serve [flags]          ROCK's sandbox HTTP API (lua/rock/serve/)
 *   rock report RUN_DIR [...]   a run as a static site (lua/rock/report/)
 *   rock --version
 * Everything else is in librock (c/core/host.c) and lua/rock/. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "../include/rock.h"

static void usage(FILE *f) {
  fprintf(f, "usage: rock recipe.lua [args...]\n"
             "       rock -e 'lua code'\n"
             "       rock gc            remove sandboxes left by dead hosts\n"
             "       rock ps [--json]   list live sandboxes\n"
             "       rock serve [...]   ROCK's sandbox HTTP API (rock serve --help)\n"
             "       rock report RUN_DIR [--out DIR] [--instances FILE]\n"
             "                          a run's trajectories as a static site\n"
             "       rock --version\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v")) {
    printf("rock %s\n", rock_version());
    return 0;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  const char *err = NULL;
  rock_host_t *h = rock_host_new(&err);
  if (!h) {
    fprintf(stderr, "rock: %s\n", err);
    return 1;
  }
  int rc;
  if (!strcmp(argv[1], "-e")) {
    if (argc < 3) {
      usage(stderr);
      rock_host_free(h);
      return 2;
    }
    rc = rock_host_run_string(h, argv[2]);
  } else if (!strcmp(argv[1], "gc") || !strcmp(argv[1], "ps") || !strcmp(argv[1], "serve") ||
             !strcmp(argv[1], "report")) {
    lua_State *L = rock_host_lua(h);
    lua_createtable(L, argc, 0);
    for (int i = 1; i < argc; i++) {
      lua_pushstring(L, argv[i]);
      lua_rawseti(L, -2, i);
    }
    lua_setglobal(L, "arg");
    /* rock serve owns its ROCK_HOME's sandboxes as a service: claim them
     * before the host's first gc pass, which would take a previous
     * server's sandboxes (its owner gone) before this one adopts them */
    if (!strcmp(argv[1], "serve") &&
        luaL_dostring(L, "local ok, e = pcall(require('rock.state').serve_as) "
                         "if not ok then io.stderr:write('rock serve: ', tostring(e), '\\n') os.exit(1) end")) {
      fprintf(stderr, "rock serve: %s\n", lua_tostring(L, -1));
      rock_host_free(h);
      return 1;
    }
    rc = rock_host_run_string(h, "require('rock.cli').main(arg)");
  } else {
    rc = rock_host_run_file(h, argv[1], argc - 2, argv + 2);
  }
  rock_host_free(h);
  return rc;
}
