/* multipart.c: the multipart/form-data parser of multipart.h. The body is
 * scanned for the delimiter "\r\n--boundary" (a virtual CRLF before the
 * first byte lets the first delimiter open the body); between delimiters
 * come a part's header lines, an empty line and its content. Content is
 * written out as it is found, keeping back only the bytes that could be
 * the start of a delimiter, so memory stays at a chunk whatever the size
 * of a file part. Headers other than Content-Disposition and Content-Type
 * are ignored; the epilogue after the closing delimiter too. */
#include "multipart.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_PART_HEADERS (16u << 10) /* a part's header block */
#define MAX_PADDING 256              /* blanks after a delimiter */

enum { PREAMBLE, AFTER_DELIM, HEADERS, BODY, DONE, FAILED };

struct rock_multipart {
  char *delim; /* "\r\n--" boundary */
  size_t dlen;
  char *tmpdir;
  size_t max_value, max_parts;
  rock_buf_t buf; /* bytes not yet consumed */
  int state;
  rock_multipart_part_t *parts;
  size_t nparts, cap;
  int fd; /* the current part's temp file, or -1 */
  int bad_input;
  char err[256];
};

static int fail(rock_multipart_t *m, int bad_input, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->err, sizeof m->err, fmt, ap);
  va_end(ap);
  m->bad_input = bad_input;
  m->state = FAILED;
  return -1;
}

rock_multipart_t *rock_multipart_new(const char *boundary, const char *tmpdir,
                                     size_t max_value, size_t max_parts) {
  size_t bl = strlen(boundary);
  if (bl < 1 || bl > 70) return NULL;
  rock_multipart_t *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->dlen = bl + 4;
  m->delim = malloc(m->dlen + 1);
  m->tmpdir = strdup(tmpdir);
  if (!m->delim || !m->tmpdir || rock_buf_append(&m->buf, "\r\n", 2)) {
    rock_multipart_free(m, 0);
    return NULL;
  }
  memcpy(m->delim, "\r\n--", 4);
  memcpy(m->delim + 4, boundary, bl + 1);
  m->max_value = max_value;
  m->max_parts = max_parts;
  m->fd = -1;
  return m;
}

static void consume(rock_multipart_t *m, size_t n) {
  memmove(m->buf.data, m->buf.data + n, m->buf.len - n);
  m->buf.len -= n;
}

/* ---- a part's headers ---- */

/* Copy a parameter value at *pp (a quoted-string or a token) into a new
 * string; *pp moves past it. */
static char *param_value(const char **pp, const char *end) {
  const char *p = *pp;
  rock_buf_t v = {0};
  int bad = 0;
  if (p < end && *p == '"') {
    for (p++; p < end && *p != '"'; p++) {
      if (*p == '\\' && p + 1 < end) p++;
      bad |= rock_buf_append(&v, p, 1);
    }
    if (p < end) p++; /* the closing quote */
  } else {
    const char *s = p;
    while (p < end && *p != ';' && *p != ' ' && *p != '\t') p++;
    bad |= rock_buf_append(&v, s, p - s);
  }
  *pp = p;
  if (bad || rock_buf_append(&v, "", 0)) { /* "" still gets its NUL */
    rock_buf_free(&v);
    return NULL;
  }
  return v.data;
}

/* Content-Disposition: form-data; name="x"; filename="y" */
static int disposition(rock_multipart_t *m, rock_multipart_part_t *part,
                       const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if ((size_t)(end - p) < 9 || strncasecmp(p, "form-data", 9))
    return fail(m, 1, "a part's Content-Disposition is not form-data");
  p += 9;
  while (p < end) {
    while (p < end && (*p == ';' || *p == ' ' || *p == '\t')) p++;
    const char *k = p;
    while (p < end && *p != '=' && *p != ';') p++;
    size_t kl = p - k;
    while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t')) kl--;
    if (p >= end || *p != '=') continue; /* a flag without a value */
    p++;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    char *v = param_value(&p, end);
    if (!v) return fail(m, 0, "out of memory");
    char **slot = kl == 4 && !strncasecmp(k, "name", 4)       ? &part->name
                  : kl == 8 && !strncasecmp(k, "filename", 8) ? &part->filename
                                                              : NULL;
    if (slot) {
      free(*slot);
      *slot = v;
    } else {
      free(v);
    }
  }
  return 0;
}

/* Parse the header block h[0..n) (lines ending in CRLF) into part. */
static int part_headers(rock_multipart_t *m, rock_multipart_part_t *part,
                        const char *h, size_t n) {
  const char *line = h, *end = h + n;
  int seen = 0;
  while (line < end) {
    const char *eol = memmem(line, end - line, "\r\n", 2);
    if (!eol) eol = end;
    const char *colon = memchr(line, ':', eol - line);
    if (colon) {
      size_t nl = colon - line;
      const char *v = colon + 1, *ve = eol;
      while (v < ve && (*v == ' ' || *v == '\t')) v++;
      while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
      if (nl == 19 && !strncasecmp(line, "content-disposition", 19)) {
        if (disposition(m, part, v, ve)) return -1;
        seen = 1;
      } else if (nl == 12 && !strncasecmp(line, "content-type", 12)) {
        free(part->content_type);
        part->content_type = strndup(v, ve - v);
        if (!part->content_type) return fail(m, 0, "out of memory");
      }
    }
    line = eol + 2;
  }
  if (!seen) return fail(m, 1, "a part without Content-Disposition");
  if (!part->name) return fail(m, 1, "a part without a name");
  return 0;
}

/* ---- a part's content ---- */

static int open_file(rock_multipart_t *m, rock_multipart_part_t *part) {
  size_t tl = strlen(m->tmpdir);
  part->file = malloc(tl + 40);
  if (!part->file) return fail(m, 0, "out of memory");
  /* the pid: a later server removes what a crashed one left */
  snprintf(part->file, tl + 40, "%s/rock-part-%ld-XXXXXX", m->tmpdir, (long)getpid());
  m->fd = mkostemp(part->file, O_CLOEXEC);
  if (m->fd < 0) {
    int e = errno;
    free(part->file);
    part->file = NULL;
    return fail(m, 0, "cannot make a temp file in %s: %s", m->tmpdir, strerror(e));
  }
  return 0;
}

static int write_all(rock_multipart_t *m, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(m->fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return fail(m, 0, "cannot write a part's temp file: %s", strerror(errno));
    p += w, n -= (size_t)w;
  }
  return 0;
}

/* Content bytes of the current part: to its file, or to memory until they
 * pass max_value (then what was kept moves to a file). */
static int content(rock_multipart_t *m, const char *p, size_t n) {
  rock_multipart_part_t *part = &m->parts[m->nparts - 1];
  if (!n) return 0;
  if (m->fd < 0 && part->value.len + n > m->max_value) {
    if (open_file(m, part) || write_all(m, part->value.data ? part->value.data : "",
                                        part->value.len))
      return -1;
    rock_buf_free(&part->value);
  }
  if (m->fd >= 0) return write_all(m, p, n);
  if (rock_buf_append(&part->value, p, n)) return fail(m, 0, "out of memory");
  return 0;
}

static int part_end(rock_multipart_t *m) {
  if (m->fd >= 0 && close(m->fd))
    return m->fd = -1, fail(m, 0, "cannot write a part's temp file: %s", strerror(errno));
  m->fd = -1;
  rock_multipart_part_t *part = &m->parts[m->nparts - 1];
  if (!part->file && !part->value.data && rock_buf_append(&part->value, "", 0))
    return fail(m, 0, "out of memory");
  return 0;
}

static int part_begin(rock_multipart_t *m, const char *h, size_t n) {
  if (m->nparts == m->max_parts) return fail(m, 1, "more than %zu parts", m->max_parts);
  if (m->nparts == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 8;
    rock_multipart_part_t *p = realloc(m->parts, cap * sizeof *p);
    if (!p) return fail(m, 0, "out of memory");
    m->parts = p;
    m->cap = cap;
  }
  rock_multipart_part_t *part = &m->parts[m->nparts++];
  memset(part, 0, sizeof *part);
  if (part_headers(m, part, h, n)) return -1;
  if (part->filename) return open_file(m, part);
  return 0;
}

/* ---- the scanner ---- */

/* One step: 1 progress, 0 more bytes are needed, -1 failed. */
static int step(rock_multipart_t *m) {
  char *b = m->buf.data;
  size_t len = m->buf.len;
  switch (m->state) {
  case PREAMBLE: {
    char *d = memmem(b, len, m->delim, m->dlen);
    if (d) {
      consume(m, d - b + m->dlen);
      m->state = AFTER_DELIM;
      return 1;
    }
    if (len >= m->dlen) consume(m, len - (m->dlen - 1));
    return 0;
  }
  case AFTER_DELIM: {
    if (len < 2) return 0;
    if (b[0] == '-' && b[1] == '-') { /* the closing delimiter */
      m->state = DONE;
      m->buf.len = 0;
      return 0;
    }
    size_t i = 0;
    while (i < len && (b[i] == ' ' || b[i] == '\t')) i++;
    if (i > MAX_PADDING) return fail(m, 1, "malformed multipart delimiter line");
    if (i + 1 >= len) return 0;
    if (b[i] != '\r' || b[i + 1] != '\n')
      return fail(m, 1, "malformed multipart delimiter line");
    consume(m, i + 2);
    m->state = HEADERS;
    return 1;
  }
  case HEADERS: {
    if (len >= 2 && b[0] == '\r' && b[1] == '\n')
      return fail(m, 1, "a part without Content-Disposition");
    char *e = memmem(b, len, "\r\n\r\n", 4);
    if (!e) {
      if (len > MAX_PART_HEADERS) return fail(m, 1, "a part's headers are larger than %u bytes",
                                              MAX_PART_HEADERS);
      return 0;
    }
    if (part_begin(m, b, e + 2 - b)) return -1;
    consume(m, e + 4 - b);
    m->state = BODY;
    return 1;
  }
  case BODY: {
    char *d = memmem(b, len, m->delim, m->dlen);
    if (d) {
      if (content(m, b, d - b) || part_end(m)) return -1;
      consume(m, d - b + m->dlen);
      m->state = AFTER_DELIM;
      return 1;
    }
    if (len >= m->dlen) { /* keep what could start a delimiter */
      size_t out = len - (m->dlen - 1);
      if (content(m, b, out)) return -1;
      consume(m, out);
    }
    return 0;
  }
  case DONE:
    m->buf.len = 0; /* the epilogue */
    return 0;
  default:
    return -1;
  }
}

int rock_multipart_feed(rock_multipart_t *m, const char *p, size_t n) {
  if (m->state == FAILED) return -1;
  if (m->state == DONE) return 0;
  if (rock_buf_append(&m->buf, p, n)) return fail(m, 0, "out of memory");
  int rc;
  while ((rc = step(m)) > 0) {}
  return rc < 0 ? -1 : 0;
}

int rock_multipart_finish(rock_multipart_t *m) {
  if (m->state == FAILED) return -1;
  if (m->state != DONE)
    return fail(m, 1, "truncated multipart body: no closing boundary");
  return 0;
}

const char *rock_multipart_error(rock_multipart_t *m) { return m->err; }
int rock_multipart_bad_input(rock_multipart_t *m) { return m->bad_input; }
size_t rock_multipart_count(rock_multipart_t *m) { return m->nparts; }
rock_multipart_part_t *rock_multipart_part(rock_multipart_t *m, size_t i) {
  return i < m->nparts ? &m->parts[i] : NULL;
}

void rock_multipart_free(rock_multipart_t *m, int remove_files) {
  if (!m) return;
  if (m->fd >= 0) close(m->fd);
  for (size_t i = 0; i < m->nparts; i++) {
    rock_multipart_part_t *p = &m->parts[i];
    if (p->file && remove_files) unlink(p->file);
    free(p->name);
    free(p->filename);
    free(p->content_type);
    free(p->file);
    rock_buf_free(&p->value);
  }
  free(m->parts);
  rock_buf_free(&m->buf);
  free(m->delim);
  free(m->tmpdir);
  free(m);
}
