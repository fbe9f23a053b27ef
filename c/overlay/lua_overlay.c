/* lua_overlay.c: the kernel calls of the runc backend's file systems, which
 * Lua cannot make (lua/rock/layers.lua and lua/rock/backends/runc.lua are
 * the policy), registered into rock.core as
 *   core.overlay_whiteouts(dir)   turn an unpacked OCI layer's whiteouts into
 *                                 overlayfs's: a file ".wh.NAME" becomes a
 *                                 0/0 character device NAME, a file
 *                                 ".wh..wh..opq" the xattr
 *                                 trusted.overlay.opaque=y on its dir;
 *                                 returns how many it turned
 *   core.overlay_oci_whiteouts(dir)  the reverse, on a copy of an upper dir
 *                                 (a commit's layer): 0/0 devices and
 *                                 opaque dirs become OCI's whiteout files
 *   core.overlay_mount(lowers, upper, work, target)
 *                                 mount an overlay on target: lowers a list
 *                                 of dirs, the topmost first
 *   core.overlay_umount(target)   unmount it, or any mount there (lazily when
 *                                 busy); false when nothing is mounted there
 *   core.tmpfs_mount(target, bytes)  a tmpfs of at most bytes, mode 0700, on
 *                                 target (runsc's socket dir: what a sandbox
 *                                 writes there is bounded)
 *   core.overlay_mounted(target)  is target a mount point (its device differs
 *                                 from its parent's)?
 *   core.flock_try(path)          an exclusive flock on path (made 0600 if
 *                                 missing) without waiting: its fd, or nil
 *                                 when another holder has it
 *   core.flock_release(fd)        let it go
 * Failures raise a rock error {code=, message=, op=}: engine_unavailable
 * when the kernel has no overlayfs, io_error otherwise. These are quick
 * local calls (a whiteout walk reads one layer's tree once), run
 * synchronously. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../core/lua_core.h"

static int fail(lua_State *L, rock_err e, const char *op, const char *path, int err) {
  lua_pushfstring(L, "%s %s: %s", op, path, strerror(err));
  return lrock_raise(L, e, lua_tostring(L, -1), "overlay");
}

/* the whiteouts found by the walk, handled after it (the walk must not
 * change the dirs it is reading); nftw passes no context to its callback,
 * so this is the calling thread's, for the length of one call */
static _Thread_local struct {
  char **paths;
  size_t n, cap;
} found;

static int remember(const char *path);
static int collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  if (flag != FTW_F || strncmp(path + ftw->base, ".wh.", 4)) return 0;
  return remember(path);
}

static int remember(const char *path) {
  if (found.n == found.cap) {
    size_t cap = found.cap ? found.cap * 2 : 64;
    char **p = realloc(found.paths, cap * sizeof *p);
    if (!p) return -1;
    found.paths = p, found.cap = cap;
  }
  if (!(found.paths[found.n] = strdup(path))) return -1;
  found.n++;
  return 0;
}

/* overlayfs's whiteouts (0/0 character devices) and opaque dirs (their
 * xattr) under a copy of an upper dir */
static int collect_overlay(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_F && S_ISCHR(sb->st_mode) && sb->st_rdev == makedev(0, 0)) return remember(path);
  if (flag == FTW_D) {
    char v[2];
    if (lgetxattr(path, "trusted.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y') return remember(path);
  }
  return 0;
}

static void release_found(void) {
  for (size_t i = 0; i < found.n; i++) free(found.paths[i]);
  free(found.paths);
  found.paths = NULL, found.n = found.cap = 0;
}

static int l_whiteouts(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  release_found();
  if (nftw(dir, collect, 32, FTW_PHYS | FTW_MOUNT)) {
    int e = errno;
    release_found();
    return fail(L, ROCK_E_IO, "cannot walk", dir, e);
  }
  for (size_t i = 0; i < found.n; i++) {
    char *path = found.paths[i], *slash = strrchr(path, '/');
    const char *name = slash + 1 + 4; /* past ".wh." */
    char target[4096];
    int e = 0;
    if (unlink(path)) e = errno;
    else if (!strcmp(name, ".wh..opq")) { /* ".wh..wh..opq": its dir is opaque */
      *slash = 0;
      if (lsetxattr(path, "trusted.overlay.opaque", "y", 1, 0)) e = errno;
      *slash = '/';
    } else if (snprintf(target, sizeof target, "%.*s/%s", (int)(slash - path), path, name) >=
               (int)sizeof target) {
      e = ENAMETOOLONG;
    } else if (mknod(target, S_IFCHR | 0, makedev(0, 0)) && errno != EEXIST) {
      e = errno;
    }
    if (e) {
      lua_pushstring(L, path);
      release_found();
      return fail(L, ROCK_E_IO, "cannot turn the whiteout", lua_tostring(L, -1), e);
    }
  }
  lua_pushinteger(L, (lua_Integer)found.n);
  release_found();
  return 1;
}

/* The reverse, for a commit's layer: on a copy of an upper dir, a 0/0
 * character device NAME becomes an empty file ".wh.NAME", an opaque dir
 * loses its xattr and gains a file ".wh..wh..opq". */
static int l_oci_whiteouts(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  release_found();
  if (nftw(dir, collect_overlay, 32, FTW_PHYS | FTW_MOUNT)) {
    int e = errno;
    release_found();
    return fail(L, ROCK_E_IO, "cannot walk", dir, e);
  }
  for (size_t i = 0; i < found.n; i++) {
    char *path = found.paths[i], target[4096];
    struct stat st;
    int e = 0, fd;
    if (lstat(path, &st)) e = errno;
    else if (S_ISDIR(st.st_mode)) {
      if (lremovexattr(path, "trusted.overlay.opaque")) e = errno;
      else if (snprintf(target, sizeof target, "%s/.wh..wh..opq", path) >= (int)sizeof target) e = ENAMETOOLONG;
    } else {
      char *slash = strrchr(path, '/');
      if (snprintf(target, sizeof target, "%.*s/.wh.%s", (int)(slash - path), path, slash + 1) >=
          (int)sizeof target)
        e = ENAMETOOLONG;
      else if (unlink(path)) e = errno;
    }
    if (!e && (fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) e = errno;
    else if (!e) close(fd);
    if (e) {
      lua_pushstring(L, path);
      release_found();
      return fail(L, ROCK_E_IO, "cannot turn the whiteout", lua_tostring(L, -1), e);
    }
  }
  lua_pushinteger(L, (lua_Integer)found.n);
  release_found();
  return 1;
}

static int l_mount(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const char *upper = luaL_checkstring(L, 2), *work = luaL_checkstring(L, 3);
  const char *target = luaL_checkstring(L, 4);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "lowerdir=");
  lua_Integer n = luaL_len(L, 1);
  if (n < 1) return luaL_argerror(L, 1, "at least one lower dir");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    const char *d = luaL_checkstring(L, -1);
    if (strpbrk(d, ":,")) return luaL_argerror(L, 1, "a lower dir with ':' or ','");
    lua_pop(L, 1);
    if (i > 1) luaL_addchar(&b, ':');
    luaL_addstring(&b, d);
  }
  luaL_addstring(&b, ",upperdir=");
  luaL_addstring(&b, upper);
  luaL_addstring(&b, ",workdir=");
  luaL_addstring(&b, work);
  luaL_pushresult(&b);
  size_t len;
  const char *data = lua_tolstring(L, -1, &len);
  if (len >= 4096) /* mount(2) takes one page of options */
    return lrock_raise(L, ROCK_E_INVALID_ARGUMENT,
                       "overlay mount: the image has too many layers for one mount's options", "overlay");
  if (mount("overlay", target, "overlay", MS_NODEV, data)) {
    int e = errno;
    if (e == ENODEV)
      return lrock_raise(L, ROCK_E_ENGINE_UNAVAILABLE,
                         "this kernel has no overlayfs (modprobe overlay): the runc backend needs it",
                         "overlay");
    return fail(L, ROCK_E_IO, "cannot mount an overlay on", target, e);
  }
  return 0;
}

static int l_tmpfs(lua_State *L) {
  const char *target = luaL_checkstring(L, 1);
  lua_Integer bytes = luaL_checkinteger(L, 2);
  char data[64];
  snprintf(data, sizeof data, "size=%lld,mode=0700", (long long)bytes);
  if (mount("tmpfs", target, "tmpfs", MS_NODEV | MS_NOSUID | MS_NOEXEC, data))
    return fail(L, ROCK_E_IO, "cannot mount a tmpfs on", target, errno);
  return 0;
}

static int l_umount(lua_State *L) {
  const char *target = luaL_checkstring(L, 1);
  if (umount2(target, UMOUNT_NOFOLLOW) == 0) return lua_pushboolean(L, 1), 1;
  if (errno == EBUSY && umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) == 0) return lua_pushboolean(L, 1), 1;
  if (errno == EINVAL || errno == ENOENT) return lua_pushboolean(L, 0), 1;
  return fail(L, ROCK_E_IO, "cannot unmount", target, errno);
}

static int l_mounted(lua_State *L) {
  const char *target = luaL_checkstring(L, 1);
  char parent[4096];
  struct stat a, p;
  if (snprintf(parent, sizeof parent, "%s/..", target) >= (int)sizeof parent) return luaL_argerror(L, 1, "too long");
  lua_pushboolean(L, lstat(target, &a) == 0 && stat(parent, &p) == 0 &&
                         (a.st_dev != p.st_dev || a.st_ino == p.st_ino));
  return 1;
}

static int l_flock_try(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(L, ROCK_E_IO, "cannot open the lock", path, errno);
  if (flock(fd, LOCK_EX | LOCK_NB)) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK) return 0;
    return fail(L, ROCK_E_IO, "cannot lock", path, e);
  }
  lua_pushinteger(L, fd);
  return 1;
}

static int l_flock_release(lua_State *L) {
  close((int)luaL_checkinteger(L, 1));
  return 0;
}

const luaL_Reg lrock_overlay_funcs[] = {
    {"overlay_whiteouts", l_whiteouts}, {"overlay_oci_whiteouts", l_oci_whiteouts},
    {"overlay_mount", l_mount},
    {"overlay_umount", l_umount},       {"overlay_mounted", l_mounted},
    {"tmpfs_mount", l_tmpfs},           {"flock_try", l_flock_try},
    {"flock_release", l_flock_release},
    {NULL, NULL},
};
