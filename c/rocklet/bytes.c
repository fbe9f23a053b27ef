/* bytes.c: /file, a file's exact bytes with no JSON on the path.
 * GET (or HEAD) /file?path=P answers the bytes as application/octet-stream,
 * streamed from the file as the client takes them (http/server.c's answer
 * file: at most two 64 KiB chunks in memory, whatever the file's size), with
 * a single `Range: bytes=a-b` / `a-` / `-n` honoured (206 and
 * Content-Range; a range starting at or past the end is 416 with
 * `Content-Range: bytes * /size`). Only regular files, opened non-blocking
 * as /read_file opens them (files.c): a FIFO or a device never blocks the
 * loop. PUT /file?path=P is upload.c's (the body streamed to a temp file
 * renamed into place); this file answers it once the body is in. Errors
 * are the rocklet's JSON {code, message}. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocklet.h"

/* A decimal at *p (no sign), advancing *p; -1 if none or past 2^63. */
static int64_t read_u63(const char **p) {
  const char *s = *p;
  int64_t v = 0;
  if (*s < '0' || *s > '9') return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (*s - '0');
  }
  *p = s;
  return v;
}

/* The Range header against a file of size bytes: 0 (no range we take:
 * absent, another unit, several ranges, malformed: the whole file, as
 * HTTP lets a server do), 1 (*from, *to set, inclusive) or -1 (not
 * satisfiable: 416). */
static int parse_range(const char *h, uint64_t size, uint64_t *from, uint64_t *to) {
  if (!h) return 0;
  while (*h == ' ' || *h == '\t') h++;
  if (strncmp(h, "bytes=", 6)) return 0;
  const char *p = h + 6;
  while (*p == ' ') p++;
  int64_t a = -1, b = -1;
  if (*p == '-') { /* the last n bytes */
    p++;
    if ((b = read_u63(&p)) < 0) return 0;
  } else {
    if ((a = read_u63(&p)) < 0 || *p++ != '-') return 0;
    if (*p >= '0' && *p <= '9' && (b = read_u63(&p)) < 0) return 0;
  }
  while (*p == ' ' || *p == '\t') p++;
  if (*p) return 0; /* several ranges, or junk */
  if (a < 0) { /* suffix: -n */
    if (b == 0 || size == 0) return -1;
    *from = (uint64_t)b >= size ? 0 : size - (uint64_t)b;
    *to = size - 1;
    return 1;
  }
  if (b >= 0 && b < a) return 0; /* invalid: ignored */
  if ((uint64_t)a >= size) return -1;
  *from = (uint64_t)a;
  *to = b < 0 || (uint64_t)b >= size ? size - 1 : (uint64_t)b;
  return 1;
}

static void file_get(rock_http_req_t *req) {
  char *path = query_arg(req->query, "path");
  if (!path || !*path) {
    free(path);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "GET /file needs ?path=<url-encoded path>");
    return;
  }
  /* O_NONBLOCK: opening a FIFO without a writer must not wait */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    reply_error(req, e == ENOENT || e == ENOTDIR ? ROCK_E_NOT_FOUND : ROCK_E_IO,
                "file %s: %s", path, strerror(e));
    free(path);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    reply_error(req, ROCK_E_INVALID_ARGUMENT, "file %s: %s", path,
                S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    free(path);
    return;
  }
  free(path);
  uint64_t size = (uint64_t)st.st_size, from = 0, to = size ? size - 1 : 0;
  int r = parse_range(rock_http_req_header(req, "range"), size, &from, &to);
  char h[256];
  if (r < 0) {
    close(fd);
    snprintf(h, sizeof h, "Content-Range: bytes */%" PRIu64 "\r\n", size);
    reply_error_headers(req, 416, h, ROCK_E_INVALID_ARGUMENT,
                        "range not satisfiable: the file has %" PRIu64 " bytes", size);
    return;
  }
  if (r > 0 && from && lseek(fd, (off_t)from, SEEK_SET) < 0) {
    int e = errno;
    close(fd);
    reply_error(req, ROCK_E_IO, "file: seek: %s", strerror(e));
    return;
  }
  int n = snprintf(h, sizeof h,
                   "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\n");
  if (r > 0)
    snprintf(h + n, sizeof h - n, "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64 "\r\n",
             from, to, size);
  rock_http_respond_file(req, r > 0 ? 206 : 200, h, fd, r > 0 ? to - from + 1 : size);
  if (rocklet.touch) rocklet.touch();
}

void bytes_file(rock_http_req_t *req) {
  const char *m = req->method ? req->method : "";
  if (!strcmp(m, "PUT")) upload_run(req, NULL);
  else if (!strcmp(m, "GET") || !strcmp(m, "HEAD")) file_get(req);
  else reply_error_status(req, 405, ROCK_E_BAD_REQUEST, "/file takes GET, HEAD or PUT, not %s", m);
}
