/* paths.h: where rock's installed files are, found at run time, so an
 * install under any prefix (`cmake --install build --prefix P`) finds its
 * own Lua library and rocklet, not the configure-time prefix's. */
#ifndef ROCK_CORE_PATHS_H
#define ROCK_CORE_PATHS_H

#include <stddef.h>

/* The installed file rel (e.g. "share/lua/5.4/rock/init.lua"), looked up
 * next to the object holding this code (the rock executable, librock or
 * rock.core's core.so): the first ancestor dir D of that object with D/rel
 * present gives D/rel in buf. Returns buf, or NULL when none has it or
 * the code runs from the build tree (which then uses its own files). */
const char *rock__installed(const char *rel, char *buf, size_t cap);

#endif
