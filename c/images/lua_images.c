/* lua_images.c: the Lua face of index.c, registered into rock.core as
 *   core.images_tar_path(dir, image)            -> path
 *   core.images_touch(dir, image, engine_size?, tar_size?)
 *   core.images_forget(dir, image)
 *   core.images_index(dir)                      -> {image = {last_used=, engine_size=, tar_size=}}
 *   core.images_plan(dir, budget, keep?)        -> {image, ...} to evict, LRU first
 * Failures raise a rock error {code=, message=, op="images"}. These are quick local file operations
 * under a lock, so they run synchronously. lua/rock/images.lua is the policy. */
#include <lauxlib.h>
#include <lua.h>

#include "../core/lua_core.h"
#include "index.h"

static int fail(lua_State *L, rock_err e, const char *why) {
  return lrock_raise(L, e, why, "images");
}

static int l_tar_path(lua_State *L) {
  char buf[4096];
  int n = rock_images_tar_path(buf, sizeof buf, luaL_checkstring(L, 1), luaL_checkstring(L, 2));
  if (n >= (int)sizeof buf) return fail(L, ROCK_E_INVALID_ARGUMENT, "image name too long");
  lua_pushstring(L, buf);
  return 1;
}

static int l_touch(lua_State *L) {
  const char *why = NULL;
  rock_err e = rock_images_touch(luaL_checkstring(L, 1), luaL_checkstring(L, 2),
                                 luaL_optnumber(L, 3, -1), luaL_optnumber(L, 4, -1), &why);
  return e ? fail(L, e, why) : 0;
}

static int l_forget(lua_State *L) {
  const char *why = NULL;
  rock_err e = rock_images_forget(luaL_checkstring(L, 1), luaL_checkstring(L, 2), &why);
  return e ? fail(L, e, why) : 0;
}

static int l_index(lua_State *L) {
  const char *why = NULL;
  json_t *j;
  rock_err e = rock_images_read(luaL_checkstring(L, 1), &j, &why);
  if (e) return fail(L, e, why);
  lua_newtable(L);
  const char *name, *k;
  json_t *entry, *v;
  json_object_foreach(j, name, entry) {
    lua_newtable(L);
    json_object_foreach(entry, k, v) {
      lua_pushnumber(L, json_number_value(v));
      lua_setfield(L, -2, k);
    }
    lua_setfield(L, -2, name);
  }
  json_decref(j);
  return 1;
}

static int l_plan(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  double budget = luaL_checknumber(L, 2);
  const char *keep[65];
  int nk = 0;
  if (lua_istable(L, 3))
    for (lua_Integer i = 1; nk < 64 && lua_rawgeti(L, 3, i) == LUA_TSTRING; i++) {
      keep[nk++] = lua_tostring(L, -1); /* anchored by the table */
      lua_pop(L, 1);
    }
  lua_settop(L, 3);
  keep[nk] = NULL;
  const char *why = NULL;
  json_t *out;
  rock_err e = rock_images_plan(dir, budget, keep, &out, &why);
  if (e) return fail(L, e, why);
  lua_newtable(L);
  size_t i;
  json_t *v;
  json_array_foreach(out, i, v) {
    lua_pushstring(L, json_string_value(v));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  json_decref(out);
  return 1;
}

const luaL_Reg lrock_images_funcs[] = {
    {"images_tar_path", l_tar_path}, {"images_touch", l_touch},
    {"images_forget", l_forget},     {"images_index", l_index},
    {"images_plan", l_plan},         {NULL, NULL},
};
