/* fs.c: file-system and process helpers for the local backend (Lua policy
 * in lua/rock/backends/local.lua decides when to call them).
 *   core.rmtree(path)          remove a tree, never following symlinks;
 *                              true, or raises io_error
 *   core.proc_start_time(pid)  the kernel's start time of pid, or nil when
 *                              no such process: tells a live owner from a
 *                              reused pid (nil is an answer, not a failure) */
#include <errno.h>
#include <ftw.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/lua_core.h"

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
  return rc && errno != ENOENT ? -1 : 0;
}

static int l_rmtree(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (!strcmp(path, "/") || !*path) return luaL_argerror(L, 1, "refusing to remove /");
  if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) && errno != ENOENT) {
    int e = errno;
    lrock_push_error(L, ROCK_E_IO, NULL, "rmtree");
    lua_pushfstring(L, "cannot remove %s: %s", path, strerror(e));
    lua_setfield(L, -2, "message");
    lua_pushstring(L, uv_err_name(uv_translate_sys_error(e)));
    lua_setfield(L, -2, "errno");
    return lua_error(L);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_proc_start_time(lua_State *L) {
  lua_Integer pid = luaL_checkinteger(L, 1);
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  /* an ended process not reaped yet (zombie, dead) holds nothing: gone */
  if (p && (p[1] == 0 || p[2] == 'Z' || p[2] == 'X')) return 0;
  /* field 22 (starttime) is the 20th after the comm field */
  for (int i = 0; p && i < 20; i++) p = strchr(p + 1, ' ');
  if (!p) return 0;
  lua_pushinteger(L, strtoll(p + 1, NULL, 10));
  return 1;
}

const luaL_Reg lrock_local_funcs[] = {
    {"rmtree", l_rmtree},
    {"proc_start_time", l_proc_start_time},
    {NULL, NULL},
};
