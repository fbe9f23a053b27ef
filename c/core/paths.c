/* paths.c: run-time lookup of installed files (paths.h). The object that
 * holds this code is found with dladdr; its ancestors are tried in turn
 * (bin/, lib/<multiarch>/, lib/<multiarch>/lua/5.4/rock/ all lie a few
 * levels under the prefix). */
#include "paths.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 8

const char *rock__installed(const char *rel, char *buf, size_t cap) {
  Dl_info info;
  char self[PATH_MAX], exe[PATH_MAX];
  if (!dladdr((void *)rock__installed, &info) || !info.dli_fname) return NULL;
  const char *name = info.dli_fname;
  if (!strchr(name, '/')) { /* the main program, found on PATH */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return NULL;
    exe[n] = 0;
    name = exe;
  }
  if (!realpath(name, self)) return NULL;
#ifdef ROCK_BUILD_DIR
  size_t nb = strlen(ROCK_BUILD_DIR);
  if (!strncmp(self, ROCK_BUILD_DIR, nb) && self[nb] == '/') return NULL;
#endif
  for (int i = 0; i < MAX_DEPTH; i++) {
    char *slash = strrchr(self, '/');
    if (!slash) return NULL;
    *slash = 0; /* one level up; "" is the root */
    if ((size_t)snprintf(buf, cap, "%s/%s", self, rel) >= cap) return NULL;
    if (access(buf, F_OK) == 0) return buf;
    if (!*self) return NULL;
  }
  return NULL;
}
