/* replace.h: replace a file whole, so a reader never sees half of it: the
 * bytes go to a temp file next to the target, renamed over it at the end.
 * The temp file gets a random name and is created with O_EXCL|O_NOFOLLOW,
 * so nothing planted at a temp path (a symlink) is ever followed. Used by
 * /write_file (files.c) and /upload (upload.c); no HTTP in here. */
#ifndef ROCK_ROCKLET_REPLACE_H
#define ROCK_ROCKLET_REPLACE_H

#include <limits.h>
#include <stddef.h>

typedef struct {
  int fd; /* the temp file, open for writing; -1 once closed */
  char path[PATH_MAX];
  char tmp[PATH_MAX];
} rock_replace_t;

/* Create path's missing parent directories and open a temp file next to
 * it (with the mode of the file it replaces, else 0644). Returns 0 or
 * -errno (nothing is left open then): -EISDIR for a directory at path,
 * -EINVAL for anything else that is not a regular file (a device, FIFO or
 * socket is never replaced). */
int rock_replace_open(rock_replace_t *r, const char *path);
/* Create path's missing parent directories (0755, less the umask), as a
 * shell's mkdir -p of its dirname would. Returns 0 or -errno. */
int rock_replace_mkdirs(const char *path);
/* Write n bytes to the temp file. Returns 0 or -errno. */
int rock_replace_write(rock_replace_t *r, const void *p, size_t n);
/* Close the temp file and rename it over path. Returns 0 or -errno (the
 * temp file is then removed). */
int rock_replace_commit(rock_replace_t *r);
/* Close and remove the temp file; path is untouched. */
void rock_replace_abort(rock_replace_t *r);

#endif
