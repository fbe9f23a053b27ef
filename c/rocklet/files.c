/* files.c: /read_file and /write_file.
 * Paths are the sandbox's own (relative ones from the rocklet's cwd).
 * write_file creates missing parent directories and replaces the file
 * atomically (replace.c), so a reader never sees half a file. Contents are
 * text (bytes that are not UTF-8 read back as U+FFFD) or, with
 * "encoding": "base64", any bytes. read_file never blocks the loop: only
 * regular files, opened non-blocking, up to ROCKLET_MAX_READ bytes.
 * Large files stream in through /upload (upload.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/base64.h"
#include "output.h"
#include "replace.h"
#include "rocklet.h"

/* The largest file read_file reads: the same as a JSON body's limit, so a
 * read fits a small sandbox. */
#define ROCKLET_MAX_READ ((size_t)32 << 20)

static rock_err errno_code(int e) {
  return e == ENOENT || e == ENOTDIR ? ROCK_E_NOT_FOUND : e == EISDIR ? ROCK_E_INVALID_ARGUMENT : ROCK_E_IO;
}

/* "encoding": absent or "utf-8" (text) -> 0, "base64" -> 1, else -1. */
static int arg_encoding(json_t *args, char **err) {
  const char *e = arg_string(args, "encoding", 0, err);
  if (!e || !strcmp(e, "utf-8") || !strcmp(e, "utf8")) return 0;
  if (!strcmp(e, "base64")) return 1;
  if (!*err && (*err = malloc(96)))
    snprintf(*err, 96, "field 'encoding' must be \"utf-8\" or \"base64\"");
  return -1;
}

void files_read(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *path = arg_string(args, "path", 1, &err);
  int b64 = arg_encoding(args, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  /* O_NONBLOCK: opening a FIFO without a writer must not wait */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    reply_error(req, errno_code(e), "read_file %s: %s", path, strerror(e));
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "read_file %s: %s", path,
                S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    return;
  }
  /* exactly the file's size (and a little, to see it grow) */
  rock_buf_t raw = {0};
  int e = (size_t)st.st_size > ROCKLET_MAX_READ ? EFBIG : 0;
  if (!e) {
    raw.cap = (size_t)st.st_size + 4097;
    if (!(raw.data = malloc(raw.cap))) e = ENOMEM;
  }
  while (!e) {
    if (raw.len + 1 == raw.cap) { /* it grew since fstat */
      if (raw.len > ROCKLET_MAX_READ) break;
      if (rock_buf_reserve(&raw, 65536)) {
        e = ENOMEM;
        break;
      }
    }
    ssize_t n = read(fd, raw.data + raw.len, raw.cap - raw.len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) e = errno;
    if (n <= 0) break;
    raw.len += n;
  }
  close(fd);
  if (!e && raw.len > ROCKLET_MAX_READ) e = EFBIG;
  if (e) {
    rock_buf_free(&raw);
    if (e == EFBIG)
      reply_error(req, ROCK_E_INVALID_ARGUMENT,
                  "read_file %s: larger than %zu MiB: stream its bytes with GET "
                  "/file?path=..., or read it in parts with /execute (e.g. head -c, "
                  "tail -c, split)",
                  path, ROCKLET_MAX_READ >> 20);
    else
      reply_error(req, e == ENOMEM ? ROCK_E_NO_MEMORY : ROCK_E_IO,
                  "read_file %s: %s", path, strerror(e));
    return;
  }
  rock_buf_t out = {0}; /* sized for the usual case, not doubled into */
  out.cap = (b64 ? (raw.len + 2) / 3 * 4 : raw.len) + 1;
  int rc = (out.data = malloc(out.cap)) ? 0 : -1;
  if (!rc) out.data[0] = 0;
  if (!rc) rc = b64 ? rock_base64_encode(&out, raw.data, raw.len)
                    : rock_output_clean(&out, raw.data, raw.len);
  rock_buf_free(&raw);
  if (rc) {
    rock_buf_free(&out);
    reply_error(req, ROCK_E_NO_MEMORY, "read_file %s: out of memory", path);
    return;
  }
  /* {"content": s[, "encoding": "base64"]}: s escaped once into the answer */
  const char *key = "content", *text = out.data;
  size_t len = out.len;
  reply_json_texts(req, b64 ? json_pack("{s:s}", "encoding", "base64") : json_object(), 1,
                   &key, &text, &len);
  rock_buf_free(&out);
  if (rocklet.touch) rocklet.touch();
}

void files_write(rock_http_req_t *req, json_t *args) {
  char *err = NULL;
  const char *path = arg_string(args, "path", 1, &err);
  json_t *cv = json_object_get(args, "content");
  if (!err && !json_is_string(cv)) err = strdup("missing string field 'content'");
  if (!err && !*path) err = strdup("field 'path' is empty");
  int b64 = arg_encoding(args, &err);
  if (err) {
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "%s", err);
    free(err);
    return;
  }
  const char *content = json_string_value(cv);
  size_t len = json_string_length(cv);
  rock_buf_t bytes = {0};
  if (b64) {
    int rc = rock_base64_decode(&bytes, content, len);
    if (rc) {
      rock_buf_free(&bytes);
      reply_error(req, rc == -1 ? ROCK_E_NO_MEMORY : ROCK_E_INVALID_ARGUMENT,
                  "write_file %s: %s", path,
                  rc == -1 ? "out of memory" : "content is not base64");
      return;
    }
    content = bytes.data ? bytes.data : "";
    len = bytes.len;
  }
  rock_replace_t r;
  int rc = rock_replace_open(&r, path);
  if (!rc) {
    rc = rock_replace_write(&r, content, len);
    if (rc) rock_replace_abort(&r);
    else rc = rock_replace_commit(&r);
  }
  rock_buf_free(&bytes);
  if (rc) {
    reply_replace_error(req, "write_file", path, rc);
    return;
  }
  char msg[PATH_MAX + 48];
  snprintf(msg, sizeof msg, "wrote %zu bytes to %s", len, path);
  reply_json(req, json_pack("{s:b, s:s}", "success", 1, "message", msg));
}
