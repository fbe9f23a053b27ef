/* lua_form.c: multipart/form-data bodies for Lua (the parser is
 * multipart.c), registered into rock.core as
 *   parts = core.multipart_parse{body=, boundary=, tmpdir=, max_value=, max_parts=}
 *   id = core.multipart_parse_file({path=, boundary=, ...}, cb)
 *   core.multipart_cancel(id)
 * A body in memory (rock.http.serve keeps up to body_to_file, 1 MiB, there)
 * is parsed at once. A body in a file is parsed on libuv's thread pool:
 * 30 MB take ~40 ms of CPU, which on the loop would stall every other
 * request of the server that long. cb(parts) or cb(nil, err) then runs on
 * the loop. A cancelled parse, or one still running when the host closes,
 * removes the temp files it made and calls nobody.
 * parts: {{name=, filename=, content_type=, value= | file=}, ...} in order;
 * errors: bad_request (a malformed body: no temp file is left) or io_error. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "../core/lua_core.h"
#include "multipart.h"

#define CHUNK (64 << 10)

/* A parse on the thread pool. The work thread touches only m, rc and
 * sys_err (and the inputs); everything else is the loop's. */
typedef struct lrock_form {
  uv_work_t work;
  lrock_ctx_t *ctx; /* NULL once nobody waits (cancelled, or the host closed) */
  lua_Integer id;
  int cb_ref;
  char *path;
  rock_multipart_t *m;
  int rc, sys_err;
  struct lrock_form *next, *prev; /* ctx->forms: the parses in flight */
} lrock_form_t;

/* Feed the file at path to m, 64 KiB at a time: 0, or -1 (rock_multipart_error
 * says why), or with *sys_err set when the file cannot be read. */
static int feed_file(rock_multipart_t *m, const char *path, int *sys_err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return *sys_err = errno, 0;
  char *chunk = malloc(CHUNK);
  int rc = 0;
  if (!chunk) *sys_err = ENOMEM;
  while (chunk && !rc) {
    ssize_t n = read(fd, chunk, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) *sys_err = errno;
    if (n <= 0) break;
    rc = rock_multipart_feed(m, chunk, (size_t)n);
  }
  free(chunk);
  close(fd);
  return rc;
}

static void push_parts(lua_State *L, rock_multipart_t *m) {
  size_t n = rock_multipart_count(m);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    rock_multipart_part_t *p = rock_multipart_part(m, i);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, p->name);
    lua_setfield(L, -2, "name");
    if (p->filename) {
      lua_pushstring(L, p->filename);
      lua_setfield(L, -2, "filename");
    }
    if (p->content_type) {
      lua_pushstring(L, p->content_type);
      lua_setfield(L, -2, "content_type");
    }
    if (p->file) {
      lua_pushstring(L, p->file);
      lua_setfield(L, -2, "file");
    } else {
      lua_pushlstring(L, p->value.data, p->value.len);
      lua_setfield(L, -2, "value");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* The parse's outcome on the stack: its parts (1 returned; m keeps no
 * file of them), or its error table (0; m removed its files). Frees m. */
static int push_outcome(lua_State *L, rock_multipart_t *m, int rc, int sys_err, const char *path) {
  if (!sys_err && !rc) rc = rock_multipart_finish(m);
  if (!sys_err && !rc) {
    push_parts(L, m);
    rock_multipart_free(m, 0);
    return 1;
  }
  if (sys_err)
    lrock_push_error(L, ROCK_E_IO, lua_pushfstring(L, "cannot read %s: %s", path, strerror(sys_err)),
                     "multipart_parse");
  else
    lrock_push_error(L, rock_multipart_bad_input(m) ? ROCK_E_BAD_REQUEST : ROCK_E_IO,
                     lua_pushstring(L, rock_multipart_error(m)), "multipart_parse");
  lua_remove(L, -2); /* the message */
  rock_multipart_free(m, 1);
  return 0;
}

/* A parser for opts at index 1, or raise (a bad boundary is bad_request). */
static rock_multipart_t *new_parser(lua_State *L) {
  const char *boundary = lrock_opt_string(L, 1, "boundary");
  const char *tmpdir = lrock_opt_string(L, 1, "tmpdir");
  if (!boundary || !tmpdir) luaL_argerror(L, 1, "'boundary' and 'tmpdir' are required");
  size_t max_value = lrock_opt_size(L, 1, "max_value", 1 << 20);
  size_t max_parts = lrock_opt_size(L, 1, "max_parts", 1000);
  rock_multipart_t *m = rock_multipart_new(boundary, tmpdir, max_value, max_parts);
  if (!m) {
    size_t bl = strlen(boundary);
    lrock_raise(L, bl < 1 || bl > 70 ? ROCK_E_BAD_REQUEST : ROCK_E_NO_MEMORY,
                bl < 1 || bl > 70 ? "multipart boundary must be 1-70 characters" : NULL,
                "multipart_parse");
  }
  return m;
}

/* core.multipart_parse{body=, ...} -> parts, or raises */
static int l_multipart_parse(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  size_t blen = 0;
  const char *body = lrock_opt_lstring(L, 1, "body", &blen);
  if (!body) return luaL_argerror(L, 1, "'body' is required (a file: multipart_parse_file)");
  rock_multipart_t *m = new_parser(L);
  if (push_outcome(L, m, rock_multipart_feed(m, body, blen), 0, NULL)) return 1;
  return lua_error(L);
}

/* ---- on the thread pool ---- */

static void form_unlink(lrock_form_t *f) {
  lrock_ctx_t *ctx = f->ctx;
  if (f->prev) f->prev->next = f->next;
  else ctx->forms = f->next;
  if (f->next) f->next->prev = f->prev;
  f->next = f->prev = NULL;
  luaL_unref(ctx->L, LUA_REGISTRYINDEX, f->cb_ref);
  f->cb_ref = LUA_NOREF;
  f->ctx = NULL;
}

static void form_work(uv_work_t *w) {
  lrock_form_t *f = w->data;
  f->rc = feed_file(f->m, f->path, &f->sys_err);
}

static void form_done(uv_work_t *w, int status) {
  lrock_form_t *f = w->data;
  lrock_ctx_t *ctx = f->ctx;
  if (!ctx || status == UV_ECANCELED) { /* nobody waits: no file stays */
    rock_multipart_free(f->m, 1);
  } else {
    lua_State *L = ctx->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->cb_ref);
    form_unlink(f);
    int nargs = 1;
    if (!push_outcome(L, f->m, f->rc, f->sys_err, f->path)) {
      lua_pushnil(L);
      lua_insert(L, -2);
      nargs = 2;
    }
    lrock_call(L, nargs);
  }
  free(f->path);
  free(f);
}

/* The host is closing: parses still running end on their own (the loop
 * runs until they do) and leave no file. */
static void close_forms(lrock_ctx_t *ctx) {
  while (ctx->forms) {
    lrock_form_t *f = ctx->forms;
    form_unlink(f);
    uv_cancel((uv_req_t *)&f->work);
  }
}

/* core.multipart_parse_file({path=, boundary=, tmpdir=, max_value=,
 * max_parts=}, cb) -> id */
static int l_multipart_parse_file(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  const char *path = lrock_opt_string(L, 1, "path");
  if (!path) return luaL_argerror(L, 1, "'path' is required");
  lrock_ctx_t *ctx = lrock_ctx(L);
  if (ctx->closed) return lrock_raise(L, ROCK_E_CANCELLED, "the host is closing", "multipart_parse");
  rock_multipart_t *m = new_parser(L);
  lrock_form_t *f = calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(path))) {
    free(f);
    rock_multipart_free(m, 1);
    return lrock_raise(L, ROCK_E_NO_MEMORY, NULL, "multipart_parse");
  }
  f->m = m;
  f->work.data = f;
  int e = uv_queue_work(ctx->loop, &f->work, form_work, form_done);
  if (e) {
    rock_multipart_free(m, 1);
    free(f->path);
    free(f);
    return lrock_raise(L, ROCK_E_IO, uv_strerror(e), "multipart_parse");
  }
  lua_pushvalue(L, 2);
  f->cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  f->ctx = ctx;
  f->id = ++ctx->next_form_id;
  f->next = ctx->forms;
  if (f->next) f->next->prev = f;
  ctx->forms = f;
  ctx->close_forms = close_forms;
  lua_pushinteger(L, f->id);
  return 1;
}

/* core.multipart_cancel(id): its callback is not called; a parse that has
 * not started never does, one running finishes and removes its files. */
static int l_multipart_cancel(lua_State *L) {
  lua_Integer id = luaL_checkinteger(L, 1);
  lrock_ctx_t *ctx = lrock_ctx(L);
  for (lrock_form_t *f = ctx->forms; f; f = f->next) {
    if (f->id != id) continue;
    form_unlink(f);
    uv_cancel((uv_req_t *)&f->work);
    break;
  }
  return 0;
}

const luaL_Reg lrock_form_funcs[] = {
    {"multipart_parse", l_multipart_parse},
    {"multipart_parse_file", l_multipart_parse_file},
    {"multipart_cancel", l_multipart_cancel},
    {NULL, NULL},
};
