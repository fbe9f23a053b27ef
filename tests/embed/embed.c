/* embed.c: the smallest program that embeds rock (docs/c-api.md):
 *   embed recipe.lua [args...]
 * It links librock, adds one C function of its own to the Lua state, and
 * runs the recipe as the main task. */
#include <lauxlib.h>
#include <rock.h>
#include <stdio.h>

static int answer(lua_State *L) {
  lua_pushinteger(L, 42);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: embed recipe.lua [args...]\n");
    return 2;
  }
  const char *err;
  rock_host_t *h = rock_host_new(&err);
  if (!h) {
    fprintf(stderr, "embed: %s\n", err);
    return 1;
  }
  lua_State *L = rock_host_lua(h);
  lua_pushcfunction(L, answer);
  lua_setglobal(L, "embedder_answer");
  int rc = rock_host_run_file(h, argv[1], argc - 2, argv + 2);
  rock_host_free(h);
  return rc;
}
