/* replace.c: whole-file replacement for write_file and upload (replace.h):
 * parents made, a temp file with a random name created exclusively next to
 * the target, renamed over it once every byte is written. */
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int rock_replace_mkdirs(const char *path) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return -ENAMETOOLONG;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0755) && errno != EEXIST) return -errno;
    *s = '/';
  }
  return 0;
}

int rock_replace_open(rock_replace_t *r, const char *path) {
  r->fd = -1;
  if (!*path) return -ENOENT;
  if (snprintf(r->path, sizeof r->path, "%s", path) >= (int)sizeof r->path)
    return -ENAMETOOLONG;
  int rc = rock_replace_mkdirs(path);
  if (rc) return rc;
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return -EISDIR; /* before any byte */
  /* a device, FIFO or socket is written into by a shell's `>`, never
   * replaced: renaming over /dev/null or /dev/zero would break every
   * process after us (issue 7, hostile round) */
  if (exists && !S_ISREG(st.st_mode)) return -EINVAL;
  mode_t mode = exists ? (st.st_mode & 07777) : 0644;
  for (int tries = 0; tries < 16; tries++) {
    unsigned long long nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
      nonce ^= ((unsigned long long)getpid() << 32) ^ (unsigned long long)tries;
    if (snprintf(r->tmp, sizeof r->tmp, "%s.rock-tmp.%016llx", path, nonce) >=
        (int)sizeof r->tmp)
      return -ENAMETOOLONG;
    r->fd = open(r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (r->fd >= 0) return 0;
    if (errno != EEXIST) return -errno;
  }
  return -EEXIST;
}

int rock_replace_write(rock_replace_t *r, const void *p, size_t n) {
  const char *s = p;
  while (n) {
    ssize_t w = write(r->fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    s += w, n -= w;
  }
  return 0;
}

int rock_replace_commit(rock_replace_t *r) {
  int rc = close(r->fd) ? -errno : 0;
  r->fd = -1;
  if (!rc && rename(r->tmp, r->path)) rc = -errno;
  if (rc) unlink(r->tmp);
  return rc;
}

void rock_replace_abort(rock_replace_t *r) {
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
  unlink(r->tmp);
}
