/* files.c: /read_file and /write_file.
 * Paths are the sandbox's own (relative ones from the rocklet's cwd).
 * write_file creates missing parent directories and replaces the file
 * atomically (temp file + rename), so a reader never sees half a file.
 * read_file returns text; bytes that are not UTF-8 come back as U+FFFD. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "rocklet.h"

#define MAX_READ (256u << 20)

static int mkdirs(const char *path) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0755) && errno != EEXIST) return -errno;
    *s = '/';
  }
  return 0;
}

static rock_err errno_code(int e) {
  return e == ENOENT || e == ENOTDIR ? ROCK_E_NOT_FOUND : ROCK_E_IO;
}

void files_read(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *path = arg_string(args, "path", 1, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    reply_error(req, errno_code(e), "read_file %s: %s", path, strerror(e));
    return;
  }
  if (S_ISDIR(st.st_mode) || st.st_size > MAX_READ) {
    close(fd);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "read_file %s: %s", path,
                S_ISDIR(st.st_mode) ? "is a directory" : "larger than 256 MiB");
    return;
  }
  rock_buf_t raw = {0}, clean = {0};
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 && raw.len < MAX_READ)
    rock_buf_append(&raw, buf, n);
  int e = n < 0 ? errno : 0;
  close(fd);
  if (e) {
    rock_buf_free(&raw);
    reply_error(req, ROCK_E_IO, "read_file %s: %s", path, strerror(e));
    return;
  }
  rock_output_clean(&clean, raw.data ? raw.data : "", raw.len);
  rock_buf_free(&raw);
  json_t *o = json_object();
  json_object_set_new(o, "content", json_stringn(clean.data ? clean.data : "", clean.len));
  rock_buf_free(&clean);
  reply_json(req, o);
}

void files_write(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *path = arg_string(args, "path", 1, &err);
  json_t *cv = json_object_get(args, "content");
  if (!err && !json_is_string(cv)) err = strdup("missing string field 'content'");
  if (!err && !*path) err = strdup("field 'path' is empty");
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  const char *content = json_string_value(cv);
  size_t len = json_string_length(cv);
  char tmp[PATH_MAX];
  int rc = mkdirs(path);
  if (!rc && snprintf(tmp, sizeof tmp, "%s.rock-tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
    rc = -ENAMETOOLONG;
  int fd = -1;
  if (!rc) {
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) rc = -errno;
  }
  for (size_t off = 0; !rc && off < len;) {
    ssize_t w = write(fd, content + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) rc = -errno;
    else off += w;
  }
  if (fd >= 0 && close(fd) && !rc) rc = -errno;
  if (!rc && rename(tmp, path)) rc = -errno;
  if (rc) {
    if (fd >= 0) unlink(tmp);
    reply_error(req, errno_code(-rc), "write_file %s: %s", path, strerror(-rc));
    return;
  }
  char msg[PATH_MAX + 32];
  snprintf(msg, sizeof msg, "wrote %zu bytes to %s", len, path);
  reply_json(req, json_pack("{s:b, s:s}", "success", 1, "message", msg));
}
