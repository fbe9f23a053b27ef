/* editor_dir.c: the editor's view of a directory: the paths up to two
 * levels deep, in the order and form `find P -maxdepth 2 -not -path
 * '*\/\.*'` prints them (pre-order, each directory's entries in readdir
 * order, symlinks not followed, any path holding "/." left out). Names
 * that are not UTF-8 get U+FFFD per bad byte. The listing stops after
 * ROCK_EDITOR_MAX_LISTING bytes (whole lines), with a line
 * "<response clipped>", and no directory is read past that much. editor.c
 * calls it. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "editor.h"
#include "editor_text.h"

int rock__list_dir(rock_buf_t *out, const char *p);

typedef struct {
  rock_buf_t *out;
  size_t base; /* where the listing starts in out */
  int full;    /* the bound was reached: nothing more is listed */
} listing_t;

static int emit(listing_t *l, const char *path) {
  if (l->full || strstr(path, "/.")) return 0;
  size_t mark = l->out->len;
  if (rock__utf8_clean(l->out, path, strlen(path)) || rock_buf_append(l->out, "\n", 1))
    return -1;
  if (l->out->len - l->base <= ROCK_EDITOR_MAX_LISTING) return 0;
  l->out->data[l->out->len = mark] = 0; /* this line does not fit */
  l->full = 1;
  return rock_buf_puts(l->out, ROCK_EDITOR_CLIPPED "\n");
}

/* dir's entries, each printed and, at depth 1, descended into. An
 * unreadable directory shows no entries (find would say why on stderr). */
static int walk(listing_t *l, const char *dir, int depth) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  rock_buf_t names = {0}; /* NUL-separated, read whole first as fts does */
  int rc = 0;
  /* a hidden name is never listed, nor anything under it; names longer
   * in all than the bound cannot all be listed */
  for (struct dirent *de; !rc && names.len <= ROCK_EDITOR_MAX_LISTING && (de = readdir(d));)
    if (de->d_name[0] != '.') rc = rock_buf_append(&names, de->d_name, strlen(de->d_name) + 1);
  closedir(d);
  size_t dl = strlen(dir);
  int slash = dl && dir[dl - 1] == '/';
  rock_buf_t child = {0};
  for (size_t at = 0; !rc && !l->full && at < names.len;) {
    const char *name = names.data + at;
    at += strlen(name) + 1;
    child.len = 0;
    rc = rock_buf_append(&child, dir, dl) || (!slash && rock_buf_append(&child, "/", 1)) ||
         rock_buf_puts(&child, name) || emit(l, child.data);
    struct stat st;
    if (!rc && depth < 2 && !lstat(child.data, &st) && S_ISDIR(st.st_mode))
      rc = walk(l, child.data, depth + 1);
  }
  rock_buf_free(&child);
  rock_buf_free(&names);
  return rc ? -1 : 0;
}

int rock__list_dir(rock_buf_t *out, const char *p) {
  listing_t l = {out, out->len, 0};
  struct stat st;
  if (emit(&l, p)) return -1;
  if (lstat(p, &st) || !S_ISDIR(st.st_mode)) return 0;
  return walk(&l, p, 1);
}
