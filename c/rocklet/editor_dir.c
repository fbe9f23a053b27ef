/* editor_dir.c: the editor's view of a directory: the paths up to two
 * levels deep, in the order and form `find P -maxdepth 2 -not -path
 * '*\/\.*'` prints them (pre-order, each directory's entries in readdir
 * order, symlinks not followed, any path holding "/." left out). Names
 * that are not UTF-8 get U+FFFD per bad byte. editor.c calls it. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "editor_text.h"

int rock__list_dir(rock_buf_t *out, const char *p);

static int emit(rock_buf_t *out, const char *path) {
  if (strstr(path, "/.")) return 0;
  return rock__utf8_clean(out, path, strlen(path)) || rock_buf_append(out, "\n", 1) ? -1 : 0;
}

/* dir's entries, each printed and, at depth 1, descended into. An
 * unreadable directory shows no entries (find would say why on stderr). */
static int walk(rock_buf_t *out, const char *dir, int depth) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  rock_buf_t names = {0}; /* NUL-separated, read whole first as fts does */
  int rc = 0;
  for (struct dirent *de; !rc && (de = readdir(d));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    rc = rock_buf_append(&names, de->d_name, strlen(de->d_name) + 1);
  }
  closedir(d);
  size_t dl = strlen(dir);
  int slash = dl && dir[dl - 1] == '/';
  rock_buf_t child = {0};
  for (size_t at = 0; !rc && at < names.len;) {
    const char *name = names.data + at;
    at += strlen(name) + 1;
    child.len = 0;
    rc = rock_buf_append(&child, dir, dl) || (!slash && rock_buf_append(&child, "/", 1)) ||
         rock_buf_puts(&child, name) || emit(out, child.data);
    struct stat st;
    if (!rc && depth < 2 && !lstat(child.data, &st) && S_ISDIR(st.st_mode))
      rc = walk(out, child.data, depth + 1);
  }
  rock_buf_free(&child);
  rock_buf_free(&names);
  return rc ? -1 : 0;
}

int rock__list_dir(rock_buf_t *out, const char *p) {
  struct stat st;
  if (emit(out, p)) return -1;
  if (lstat(p, &st) || !S_ISDIR(st.st_mode)) return 0;
  return walk(out, p, 1);
}
