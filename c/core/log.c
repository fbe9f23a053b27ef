/* log.c: the rock_log sink. Level comes from $ROCK_LOG once, on first use
 * (a program may set the default it falls back to: rock serve's is info).
 * Lines look like: "rock warn session: msg=... session=bash-1".
 * rock_log writes its line at once (after any buffered lines, so the order
 * holds); rock_log_buffered keeps lines of a busy path (rock serve's one
 * line per request: a write(2) each costs more than the request) in a
 * buffer written when it passes ROCK_LOG_BUF_FLUSH bytes, on
 * rock_log_flush (rock.log's timer calls it within ~100 ms) and at exit. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int threshold = -1;
static int fallback = ROCK_LOG_WARN; /* when ROCK_LOG says nothing we know */
static const char *names[] = {"debug", "info", "warn", "error"};

static char buf[ROCK_LOG_BUF_FLUSH + 1024]; /* the buffered lines */
static size_t buf_len;
static int flush_at_exit; /* atexit(rock_log_flush) registered */

static int parse_level(const char *s) {
  if (!s) return fallback;
  if (!strcmp(s, "debug")) return ROCK_LOG_DEBUG;
  if (!strcmp(s, "info")) return ROCK_LOG_INFO;
  if (!strcmp(s, "warn")) return ROCK_LOG_WARN;
  if (!strcmp(s, "error")) return ROCK_LOG_ERROR;
  return fallback;
}

int rock_log_enabled(int level) {
  if (threshold < 0) threshold = parse_level(getenv("ROCK_LOG"));
  return level >= threshold;
}

void rock_log_default(int level) {
  fallback = level & 3;
  threshold = parse_level(getenv("ROCK_LOG"));
}

void rock_log_flush(void) {
  size_t off = 0;
  while (off < buf_len) {
    ssize_t n = write(STDERR_FILENO, buf + off, buf_len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* stderr is gone: the lines are lost */
    off += (size_t)n;
  }
  buf_len = 0;
}

/* "rock LEVEL AREA: " + the formatted message + "\n" at dst (cap bytes,
 * cap >= 2); returns the length, cut to fit. */
static size_t format_line(char *dst, size_t cap, int level, const char *area,
                          const char *fmt, va_list ap) {
  int h = snprintf(dst, cap, "rock %s %s: ", names[level & 3], area);
  size_t n = h < 0 ? 0 : (size_t)h < cap - 1 ? (size_t)h : cap - 2;
  int m = vsnprintf(dst + n, cap - 1 - n, fmt, ap);
  if (m > 0) n += (size_t)m < cap - 1 - n ? (size_t)m : cap - 2 - n;
  dst[n++] = '\n';
  return n;
}

void rock_log(int level, const char *area, const char *fmt, ...) {
  if (!rock_log_enabled(level)) return;
  char line[1024 + 64];
  va_list ap;
  va_start(ap, fmt);
  size_t n = format_line(line, sizeof line, level, area, fmt, ap);
  va_end(ap);
  rock_log_flush(); /* what was logged before comes first */
  fwrite(line, 1, n, stderr);
}

int rock_log_buffered(int level, const char *area, const char *fmt, ...) {
  if (!rock_log_enabled(level)) return 0;
  int was_empty = buf_len == 0;
  va_list ap;
  va_start(ap, fmt);
  if (level >= ROCK_LOG_WARN) { /* never held back */
    char line[1024 + 64];
    size_t n = format_line(line, sizeof line, level, area, fmt, ap);
    va_end(ap);
    rock_log_flush();
    fwrite(line, 1, n, stderr);
    return 0;
  }
  if (!flush_at_exit) {
    flush_at_exit = 1;
    atexit(rock_log_flush);
  }
  if (sizeof buf - buf_len < 1024 + 64) rock_log_flush();
  buf_len += format_line(buf + buf_len, 1024 + 64, level, area, fmt, ap);
  va_end(ap);
  if (buf_len >= ROCK_LOG_BUF_FLUSH) rock_log_flush();
  return was_empty && buf_len > 0;
}
