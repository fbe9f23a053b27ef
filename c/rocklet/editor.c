/* editor.c: SWE-agent's str_replace_editor (editor.h): argparse's check
 * of insert_line and the path checks in SWE-agent's order, the five
 * commands, the file I/O (non-blocking open, regular files up to 32 MiB,
 * writes through a temp file and a rename: replace.c) and the undo
 * history, bounded in bytes with the oldest entries dropped first. Every
 * pass over a file is linear: the matches of old_str are found by one
 * forward scan (find), whatever memmem costs per call. Texts and views are
 * editor_text.c's; the listing of a directory is editor_dir.c's. */
#include "editor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "editor_text.h"
#include "replace.h"

#define SNIPPET_LINES 4

/* What argparse prints (stderr, exit code 2) for an argument it cannot
 * convert, at its default width of 80 columns. */
#define ARGPARSE_USAGE                                                         \
  "usage: str_replace_editor [-h] [--file_text FILE_TEXT]\n"                   \
  "                          [--view_range VIEW_RANGE VIEW_RANGE]\n"           \
  "                          [--old_str OLD_STR] [--new_str NEW_STR]\n"        \
  "                          [--insert_line INSERT_LINE]\n"                    \
  "                          command path\n"

/* One undo step: the bytes path held before an edit (for create: after). */
typedef struct entry {
  struct entry *prev, *next; /* oldest first */
  char *path;
  char *data;
  size_t len, cost;
} entry_t;

struct rock_editor_s {
  entry_t *head, *tail;
  size_t bytes, max;
};

/* --------------------------------------------------------- history */

rock_editor_t *rock_editor_new(size_t history_max) {
  rock_editor_t *ed = calloc(1, sizeof *ed);
  if (ed) ed->max = history_max ? history_max : ROCK_EDITOR_HISTORY_MAX;
  return ed;
}

static void unlink_entry(rock_editor_t *ed, entry_t *e) {
  if (e->prev) e->prev->next = e->next;
  else ed->head = e->next;
  if (e->next) e->next->prev = e->prev;
  else ed->tail = e->prev;
  ed->bytes -= e->cost;
  free(e->path);
  free(e->data);
  free(e);
}

void rock_editor_free(rock_editor_t *ed) {
  if (!ed) return;
  while (ed->head) unlink_entry(ed, ed->head);
  free(ed);
}

size_t rock_editor_history_bytes(const rock_editor_t *ed) { return ed->bytes; }

static entry_t *last_of(rock_editor_t *ed, const char *path) {
  for (entry_t *e = ed->tail; e; e = e->prev)
    if (!strcmp(e->path, path)) return e;
  return NULL;
}

/* Keep the bytes of *old as path's newest undo step, taking them (*old
 * is left empty). One that cannot fit drops path's older steps too (an
 * undo must never skip an edit). Returns 0 or -1. */
static int push_take(rock_editor_t *ed, const char *path, rock_buf_t *old) {
  size_t cost = sizeof(entry_t) + strlen(path) + 1 + old->len + 1;
  if (cost > ed->max) {
    for (entry_t *e; (e = last_of(ed, path));) unlink_entry(ed, e);
    rock_buf_free(old);
    return 0;
  }
  while (ed->head && ed->bytes + cost > ed->max) unlink_entry(ed, ed->head);
  entry_t *e = calloc(1, sizeof *e);
  if (e && !(e->path = strdup(path))) free(e), e = NULL;
  if (!e || (!old->data && rock_buf_append(old, "", 0))) {
    if (e) free(e->path);
    free(e);
    rock_buf_free(old);
    return -1;
  }
  e->data = old->data, e->len = old->len, e->cost = cost;
  old->data = NULL, old->len = old->cap = 0;
  e->prev = ed->tail;
  if (ed->tail) ed->tail->next = e;
  else ed->head = e;
  ed->tail = e;
  ed->bytes += cost;
  return 0;
}

/* ------------------------------------------------------------ text */

/* Append a message; return code (or -1 when out of memory). */
static int fail(rock_buf_t *out, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(rock_buf_t *out, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = rock_buf_vprintf(out, fmt, ap);
  va_end(ap);
  return rc ? -1 : code;
}

/* Append s[0..n) as a message quotes it: cut after ROCK_EDITOR_CLIP
 * characters (then followed by ROCK_EDITOR_CLIPPED), so an answer never
 * grows with an argument. 0 or -1. */
static int echo(rock_buf_t *out, const char *s, size_t n) {
  size_t at = rock__utf8_prefix(s, n, ROCK_EDITOR_CLIP);
  return rock_buf_append(out, s, at) || (at < n && rock_buf_puts(out, ROCK_EDITOR_CLIPPED))
             ? -1
             : 0;
}

/* The path as Python's pathlib prints it: repeated slashes and "."
 * components gone, no trailing slash; "" is ".". */
static int norm_path(rock_buf_t *o, const char *in) {
  int rc = 0;
  if (in[0] == '/') rc = rock_buf_puts(o, in[1] == '/' && in[2] != '/' ? "//" : "/");
  size_t root = o->len;
  for (const char *s = in; *s && !rc;) {
    while (*s == '/') s++;
    size_t n = strcspn(s, "/");
    if (n && !(n == 1 && s[0] == '.')) {
      if (o->len > root) rc = rock_buf_append(o, "/", 1);
      if (!rc) rc = rock_buf_append(o, s, n);
    }
    s += n;
  }
  if (!rc && !o->len) rc = rock_buf_puts(o, ".");
  return rc;
}

/* Split text into lines: n lines, the byte where line k (0-based) starts. */
static size_t count_lines(const char *s, size_t n) {
  size_t k = 1;
  for (const char *p = s; (p = memchr(p, '\n', s + n - p)); p++) k++;
  return k;
}

static size_t line_start(const char *s, size_t n, size_t k) {
  const char *p = s;
  while (k-- && (p = memchr(p, '\n', s + n - p))) p++;
  return p ? (size_t)(p - s) : n;
}

/* Lines [from, to) of s, joined by \n (Python's "\n".join(lines[from:to])),
 * clamped to the text: [*b, *e). Reads s only up to the slice's end. */
static void slice_lines(const char *s, size_t n, size_t from, size_t to, size_t *b,
                        size_t *e) {
  const char *p = s, *end = s + n, *nl = NULL;
  *b = *e = 0;
  if (from >= to) return;
  for (size_t k = 0; k < from; k++, p = nl + 1)
    if (!(nl = memchr(p, '\n', end - p))) return; /* the text has no line `from` */
  *b = (size_t)(p - s);
  for (size_t k = from; k < to; k++, p = nl + 1)
    if (!(nl = memchr(p, '\n', end - p)) || k + 1 == to) break;
  *e = nl ? (size_t)(nl - s) : n;
}

/* The \n in s[0..n). */
static size_t count_newlines(const char *s, size_t n) { return count_lines(s, n) - 1; }

/* ------------------------------------------------------------ files */

/* Python's text of an OSError: "[Errno 2] No such file or directory: 'p'". */
static int os_error(rock_buf_t *out, int code, int e, const char *p, const char *verb) {
  return fail(out, code, "Ran into [Errno %d] %s: '%s' while trying to %s %s", e, strerror(e),
              p, verb, p);
}

/* Read the regular file p (up to ROCK_EDITOR_MAX_FILE) into raw. Never
 * blocks: opened non-blocking, anything but a regular file refused. */
static int read_raw(const char *p, rock_buf_t *raw, rock_buf_t *out) {
  int fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    return os_error(out, ROCK_EDITOR_E_READ, e, p, "read");
  }
  int rc = 0;
  if (!S_ISREG(st.st_mode))
    rc = fail(out, ROCK_EDITOR_E_READ,
              "The path %s is not a regular file (a device, FIFO or socket): the editor "
              "only opens regular files.", p);
  else if ((size_t)st.st_size > ROCK_EDITOR_MAX_FILE) rc = EFBIG;
  else if (rock_buf_reserve(raw, (size_t)st.st_size + 4096)) rc = -1;
  while (!rc) {
    if (raw->len + 1 >= raw->cap && rock_buf_reserve(raw, 65536)) rc = -1;
    if (rc) break;
    ssize_t n = read(fd, raw->data + raw->len, raw->cap - raw->len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) rc = os_error(out, ROCK_EDITOR_E_READ, errno, p, "read");
    if (n <= 0) break;
    raw->len += n;
    raw->data[raw->len] = 0;
    if (raw->len > ROCK_EDITOR_MAX_FILE) rc = EFBIG;
  }
  close(fd);
  if (rc == EFBIG)
    rc = fail(out, ROCK_EDITOR_E_READ,
              "The file %s is larger than %zu MiB, the most this editor opens. Read and "
              "edit it in parts with shell commands (`grep -n`, `sed -n`).",
              p, ROCK_EDITOR_MAX_FILE >> 20);
  return rc;
}

/* Replace the file p with data, keeping its mode (and owner, when we
 * may): a temp file renamed over it, so a failure leaves it whole. A
 * symlink is followed: its target is replaced. */
static int write_raw(const char *p, const char *data, size_t n, rock_buf_t *out) {
  char real[PATH_MAX];
  const char *target = realpath(p, real) ? real : p;
  struct stat st;
  int had = stat(target, &st) == 0;
  rock_replace_t r;
  int rc = rock_replace_open(&r, target);
  if (!rc) {
    if (had && fchown(r.fd, st.st_uid, st.st_gid)) { /* not ours to give: keep ours */
    }
    rc = rock_replace_write(&r, data, n);
    if (rc) rock_replace_abort(&r);
    else rc = rock_replace_commit(&r);
  }
  return rc ? os_error(out, ROCK_EDITOR_E_WRITE, -rc, p, "write to") : 0;
}

/* Read p as text (enc says how it was stored); raw keeps the bytes. */
static int read_text(const char *p, rock_buf_t *raw, rock_buf_t *text, rock__enc_t *enc,
                     rock_buf_t *out) {
  int rc = read_raw(p, raw, out);
  if (rc) return rc;
  return rock__decode(text, raw->data ? raw->data : "", raw->len, enc);
}

/* Store text in p as enc says; on success the old bytes (taken) become
 * an undo step. */
static int write_text(rock_editor_t *ed, const char *p, const rock_buf_t *text,
                      const rock__enc_t *enc, rock_buf_t *old, rock_buf_t *out) {
  rock_buf_t bytes = {0}, msg = {0};
  const char *t = text->data ? text->data : "";
  int rc = 0, same = !enc->latin1 && !enc->crlf; /* UTF-8 with \n: the text is the bytes */
  if (!same) rc = rock__encode(&bytes, t, text->len, enc, &msg);
  if (rc == 1)
    rc = fail(out, ROCK_EDITOR_E_WRITE, "Ran into %s while trying to write to %s",
              msg.data, p);
  if (!rc) rc = same ? write_raw(p, t, text->len, out)
                     : write_raw(p, bytes.data ? bytes.data : "", bytes.len, out);
  rock_buf_free(&bytes);
  rock_buf_free(&msg);
  if (!rc) rc = push_take(ed, p, old);
  return rc;
}

/* --------------------------------------------------------- commands */

int rock__list_dir(rock_buf_t *out, const char *p); /* editor_dir.c */

static int view(const rock_editor_req_t *q, const char *p, int isdir, rock_buf_t *out) {
  if (isdir) {
    if (q->view_range_set)
      return fail(out, 10, "The `view_range` parameter is not allowed when `path` points to "
                  "a directory.");
    return rock_buf_printf(out, "Here's the files and directories up to 2 levels deep in %s, "
                        "excluding hidden items:\n", p) || rock__list_dir(out, p) ||
           rock_buf_puts(out, "\n") ? -1 : 0;
  }
  if (q->view_range_set < 0)
    return fail(out, 11, "Invalid `view_range`. It should be a list of two integers.");
  rock_buf_t raw = {0}, text = {0};
  rock__enc_t enc;
  int rc = read_text(p, &raw, &text, &enc, out);
  const char *s = text.data ? text.data : "";
  size_t b = 0, e = text.len;
  long long a = 1;
  if (!rc && q->view_range_set) {
    long long n = (long long)count_lines(s, text.len), z = q->view_range[1];
    a = q->view_range[0];
    if (a < 1 || a > n)
      rc = fail(out, 12, "Invalid `view_range`: [%lld, %lld]. Its first element `%lld` should "
                "be within the range of lines of the file: [1, %lld]", a, z, a, n);
    else if (z > n)
      rc = fail(out, 13, "Invalid `view_range`: [%lld, %lld]. Its second element `%lld` should "
                "be smaller than the number of lines in the file: `%lld`", a, z, z, n);
    else if (z != -1 && z < a)
      rc = fail(out, 14, "Invalid `view_range`: [%lld, %lld]. Its second element `%lld` should "
                "be larger or equal than its first `%lld`", a, z, z, a);
    else slice_lines(s, text.len, (size_t)a - 1, z == -1 ? (size_t)n : (size_t)z, &b, &e);
  }
  if (!rc) rc = rock__view(out, s + b, e - b, p, a);
  rock_buf_free(&raw);
  rock_buf_free(&text);
  return rc;
}

static int create(rock_editor_t *ed, const rock_editor_req_t *q, const char *p,
                  rock_buf_t *out) {
  if (!q->file_text) return fail(out, 1, "Parameter `file_text` is required for command: create");
  const char *slash = strrchr(p, '/');
  rock_buf_t dir = {0};
  int rc = rock_buf_append(&dir, p, slash == p ? 1 : (size_t)(slash - p)) ? -1 : 0;
  struct stat st;
  if (!rc && stat(dir.data, &st) != 0)
    rc = fail(out, 21, "The parent directory %s does not exist. Please create it first.",
              dir.data);
  rock_buf_free(&dir);
  if (rc) return rc;
  size_t n = strlen(q->file_text);
  if ((rc = write_raw(p, q->file_text, n, out))) return rc;
  rock_buf_t copy = {0};
  if (rock_buf_append(&copy, q->file_text, n) || push_take(ed, p, &copy)) return -1;
  return fail(out, 0, "File created successfully at: %s", p);
}

/* The first x (xn > 0) in [s, e), or NULL. memmem is asked about windows
 * that double from 1 KiB: where memmem costs its haystack's length, not
 * the distance to the match (a sanitizer checks the whole range, valgrind
 * replaces it), k searches over the rest of a text cost O(n * k); these
 * cost O(distance + xn) each, so a pass over all matches stays linear. */
static const char *find(const char *s, const char *e, const char *x, size_t xn) {
  size_t w = xn < 512 ? 1024 : 2 * xn;
  while ((size_t)(e - s) >= xn) {
    size_t len = (size_t)(e - s) < w ? (size_t)(e - s) : w;
    const char *hit = memmem(s, len, x, xn);
    if (hit || len == (size_t)(e - s)) return hit;
    s += len - xn + 1;
    if (w < ((size_t)1 << 40)) w *= 2;
  }
  return NULL;
}

/* Does x occur in s once, or more (Python's str.count(x) == 1, > 1)?
 * Returns 0, 1 or 2 (two or more), the first at *first. An empty x occurs
 * before every character and at the end. */
static int occurrences(const char *s, size_t n, const char *x, size_t xn, size_t *first) {
  *first = 0;
  if (!xn) return n ? 2 : 1;
  const char *a = find(s, s + n, x, xn);
  if (!a) return 0;
  *first = (size_t)(a - s);
  return find(a + xn, s + n, x, xn) ? 2 : 1;
}

/* Append the 1-based numbers of the lines of s that hold x, as SWE-agent
 * lists them ([i + 1 for i, l in enumerate(s.split("\n")) if x in l]),
 * the first ROCK_EDITOR_MAX_LINES_LISTED of them: "[1, 5, 9]", then " and
 * N more lines" for the rest. One pass: from each match to the next line. */
static int list_lines(rock_buf_t *o, const char *s, size_t n, const char *x, size_t xn) {
  const char *e = s + n;
  size_t listed = 0, more = 0;
  int rc = rock_buf_puts(o, "[");
  if (!xn) { /* "" is in every line */
    size_t lines = count_lines(s, n);
    for (size_t k = 1; k <= lines && k <= ROCK_EDITOR_MAX_LINES_LISTED && !rc; k++)
      rc = (listed++ && rock_buf_puts(o, ", ")) || rock_buf_putu(o, k);
    more = lines - listed;
  } else if (!memchr(x, '\n', xn)) { /* (one with \n is in no line) */
    size_t line = 1;
    for (const char *p = s, *hit; !rc && (hit = find(p, e, x, xn));) {
      for (const char *nl; (nl = memchr(p, '\n', hit - p)); p = nl + 1) line++;
      if (listed < ROCK_EDITOR_MAX_LINES_LISTED)
        rc = (listed++ && rock_buf_puts(o, ", ")) || rock_buf_putu(o, line);
      else more++;
      const char *nl = memchr(hit, '\n', e - hit); /* on to the next line */
      if (!nl) break;
      p = nl + 1, line++;
    }
  }
  rc = rc || rock_buf_puts(o, "]") || (more && rock_buf_printf(o, " and %zu more lines", more));
  return rc ? -1 : 0;
}

static int str_replace(rock_editor_t *ed, const rock_editor_req_t *q, const char *p,
                       rock_buf_t *out) {
  if (!q->old_str)
    return fail(out, 2, "Parameter `old_str` is required for command: str_replace");
  rock_buf_t raw = {0}, file = {0}, text = {0}, old = {0}, new = {0}, edited = {0};
  rock__enc_t enc;
  int rc = read_text(p, &raw, &file, &enc, out);
  if (!rc && (rock__expandtabs(&text, file.data ? file.data : "", file.len) ||
              rock__expandtabs(&old, q->old_str, strlen(q->old_str)) ||
              rock__expandtabs(&new, q->new_str ? q->new_str : "",
                               q->new_str ? strlen(q->new_str) : 0)))
    rc = -1;
  rock_buf_free(&file); /* the expanded text is the one edited */
  const char *t = text.data ? text.data : "", *o = old.data ? old.data : "",
             *w = new.data ? new.data : "";
  size_t at = 0;
  int k = rc ? 0 : occurrences(t, text.len, o, old.len, &at);
  if (!rc && k == 0)
    rc = rock_buf_puts(out, "No replacement was performed, old_str `") ||
         echo(out, o, old.len) ||
         rock_buf_printf(out, "` did not appear verbatim in %s.", p) ? -1 : 15;
  if (!rc && k > 1)
    rc = rock_buf_puts(out, "No replacement was performed. Multiple occurrences of old_str `") ||
         echo(out, o, old.len) || rock_buf_puts(out, "` in lines ") ||
         list_lines(out, t, text.len, o, old.len) ||
         rock_buf_puts(out, ". Please ensure it is unique") ? -1 : 16;
  if (!rc && old.len == new.len && !memcmp(o, w, old.len))
    rc = rock_buf_puts(out, "No replacement was performed, old_str `") ||
         echo(out, o, old.len) || rock_buf_puts(out, "` is the same as new_str `") ||
         echo(out, w, new.len) || rock_buf_puts(out, "`.") ? -1 : 161;
  if (!rc && (rock_buf_append(&edited, t, at) || rock_buf_append(&edited, w, new.len) ||
              rock_buf_append(&edited, t + at + old.len, text.len - at - old.len)))
    rc = -1;
  if (!rc) rc = write_text(ed, p, &edited, &enc, &raw, out);
  if (!rc) {
    size_t line = count_newlines(t, at);
    size_t from = line > SNIPPET_LINES ? line - SNIPPET_LINES : 0;
    size_t to = line + SNIPPET_LINES + count_newlines(w, new.len) + 1, b, e;
    slice_lines(edited.data, edited.len, from, to, &b, &e);
    rock_buf_t desc = {0};
    rc = rock_buf_printf(out, "The file %s has been edited. ", p) ||
         rock_buf_printf(&desc, "a snippet of %s", p) ||
         rock__view(out, edited.data + b, e - b, desc.data, (long long)from + 1) ||
         rock_buf_puts(out, "Review the changes and make sure they are as expected. Edit the "
                       "file again if necessary.") ? -1 : 0;
    rock_buf_free(&desc);
  }
  rock_buf_free(&raw), rock_buf_free(&file), rock_buf_free(&text);
  rock_buf_free(&old), rock_buf_free(&new), rock_buf_free(&edited);
  return rc;
}

static int insert(rock_editor_t *ed, const rock_editor_req_t *q, const char *p,
                  rock_buf_t *out) {
  if (!q->insert_line_set)
    return fail(out, 3, "Parameter `insert_line` is required for command: insert");
  if (!q->new_str) return fail(out, 4, "Parameter `new_str` is required for command: insert");
  rock_buf_t raw = {0}, file = {0}, text = {0}, new = {0}, edited = {0}, snip = {0};
  rock__enc_t enc;
  int rc = read_text(p, &raw, &file, &enc, out);
  if (!rc && (rock__expandtabs(&text, file.data ? file.data : "", file.len) ||
              rock__expandtabs(&new, q->new_str, strlen(q->new_str))))
    rc = -1;
  rock_buf_free(&file);
  const char *t = text.data ? text.data : "", *w = new.data ? new.data : "";
  long long k = q->insert_line, n = rc ? 0 : (long long)count_lines(t, text.len);
  if (!rc && (k < 0 || k > n)) {
    char num[24];
    snprintf(num, sizeof num, "%lld", k);
    rc = fail(out, 17, "Invalid `insert_line` parameter: %s. It should be within the range "
              "of lines of the file: [0, %lld]", q->insert_line_text ? q->insert_line_text : num,
              n);
  }
  if (!rc) {
    /* lines[:k] + new_lines + lines[k:], joined by \n */
    size_t at = line_start(t, text.len, (size_t)k);
    if (k == 0)
      rc = rock_buf_append(&edited, w, new.len) || rock_buf_append(&edited, "\n", 1) ||
           rock_buf_append(&edited, t, text.len);
    else if (k == n)
      rc = rock_buf_append(&edited, t, text.len) || rock_buf_append(&edited, "\n", 1) ||
           rock_buf_append(&edited, w, new.len);
    else
      rc = rock_buf_append(&edited, t, at) || rock_buf_append(&edited, w, new.len) ||
           rock_buf_append(&edited, "\n", 1) || rock_buf_append(&edited, t + at, text.len - at);
    /* the snippet: 4 lines before, the new lines, 4 after */
    size_t b1, e1, b2, e2, from = k > SNIPPET_LINES ? (size_t)k - SNIPPET_LINES : 0;
    slice_lines(t, text.len, from, (size_t)k, &b1, &e1);
    slice_lines(t, text.len, (size_t)k, (size_t)k + SNIPPET_LINES, &b2, &e2);
    if (!rc)
      rc = (k > 0 && (rock_buf_append(&snip, t + b1, e1 - b1) || rock_buf_append(&snip, "\n", 1))) ||
           rock_buf_append(&snip, w, new.len) ||
           (k < n && (rock_buf_append(&snip, "\n", 1) || rock_buf_append(&snip, t + b2, e2 - b2)));
    rc = rc ? -1 : 0;
  }
  if (!rc) rc = write_text(ed, p, &edited, &enc, &raw, out);
  if (!rc)
    rc = rock_buf_printf(out, "The file %s has been edited. ", p) ||
         rock__view(out, snip.data, snip.len, "a snippet of the edited file",
                    k - SNIPPET_LINES + 1 > 1 ? k - SNIPPET_LINES + 1 : 1) ||
         rock_buf_puts(out, "Review the changes and make sure they are as expected (correct "
                       "indentation, no duplicate lines, etc). Edit the file again if "
                       "necessary.") ? -1 : 0;
  rock_buf_free(&raw), rock_buf_free(&file), rock_buf_free(&text);
  rock_buf_free(&new), rock_buf_free(&edited), rock_buf_free(&snip);
  return rc;
}

static int undo(rock_editor_t *ed, const char *p, rock_buf_t *out) {
  entry_t *e = last_of(ed, p);
  if (!e) return fail(out, 18, "No edit history found for %s.", p);
  int rc = write_raw(p, e->data, e->len, out);
  if (rc) return rc;
  rock_buf_t text = {0};
  rock__enc_t enc;
  rc = rock__decode(&text, e->data, e->len, &enc) ||
       rock_buf_printf(out, "Last edit to %s undone successfully. ", p) ||
       rock__view(out, text.data, text.len, p, 1) ? -1 : 0;
  rock_buf_free(&text);
  unlink_entry(ed, e);
  return rc;
}

/* argparse's conversion of insert_line, SWE-agent's validate_path, then
 * the command. */
static int run(rock_editor_t *ed, const rock_editor_req_t *q, const char *p, rock_buf_t *out) {
  const char *c = q->command ? q->command : "";
  if (q->insert_line_set < 0) {
    const char *v = q->insert_line_text ? q->insert_line_text : "''";
    return rock_buf_puts(out, ARGPARSE_USAGE "str_replace_editor: error: argument "
                         "--insert_line: invalid int value: ") ||
           echo(out, v, strlen(v)) ? -1 : 2;
  }
  if (p[0] != '/') {
    const char *cwd = q->cwd && *q->cwd ? q->cwd : "/";
    size_t cl = strlen(cwd);
    int dot = !strcmp(p, ".");
    return fail(out, 6, "The path %s is not an absolute path, it should start with `/`. Maybe "
                "you meant %s%s%s?", p, cwd, dot || cwd[cl - 1] == '/' ? "" : "/",
                dot ? "" : p);
  }
  struct stat st;
  int exists = stat(p, &st) == 0, isdir = exists && S_ISDIR(st.st_mode);
  int create_cmd = !strcmp(c, "create");
  if (!exists && !create_cmd)
    return fail(out, 7, "The path %s does not exist. Please provide a valid path.", p);
  if (create_cmd && (exists || lstat(p, &st) == 0)) /* a dangling symlink too */
    return fail(out, 8, "File already exists at: %s. Cannot overwrite files using command "
                "`create`.", p);
  if (isdir && strcmp(c, "view"))
    return fail(out, 9, "The path %s is a directory and only the `view` command can be used on "
                "directories", p);
  if (!strcmp(c, "view")) return view(q, p, isdir, out);
  if (create_cmd) return create(ed, q, p, out);
  if (!strcmp(c, "str_replace")) return str_replace(ed, q, p, out);
  if (!strcmp(c, "insert")) return insert(ed, q, p, out);
  if (!strcmp(c, "undo_edit")) return undo(ed, p, out);
  return fail(out, 5, "Unrecognized command %s. The allowed commands for the str_replace_editor "
              "tool are: \"view\", \"create\", \"str_replace\", \"insert\", \"undo_edit\"", c);
}

int rock_editor_run(rock_editor_t *ed, const rock_editor_req_t *req, rock_buf_t *out) {
  rock_buf_t p = {0};
  size_t mark = out->len;
  int rc = norm_path(&p, req->path ? req->path : "") ? -1 : run(ed, req, p.data, out);
  rock_buf_free(&p);
  if (rc < 0 && out->data) out->data[out->len = mark] = 0;
  return rc;
}
