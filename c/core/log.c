/* log.c: the rock_log sink. Level comes from $ROCK_LOG once, on first use
 * (a program may set the default it falls back to: rock serve's is info).
 * Lines look like: "rock warn session: msg=... session=bash-1".
 * rock_log writes its line at once (after any buffered lines, so the order
 * holds); rock_log_buffered keeps lines of a busy path (rock serve's one
 * line per request: a write(2) each costs more than the request) in a
 * buffer written when it passes ROCK_LOG_BUF_FLUSH bytes, on
 * rock_log_flush (rock.log's timer calls it within ~100 ms) and at exit.
 * Every message is escaped here, at the sink (escape_into): a newline, a
 * CR or a terminal escape in what a message quotes (an image name, an id
 * a client sent) reaches the log as \n, \r, \x1b, never raw. */
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

/* The length of the UTF-8 sequence of a printable character at p (n
 * bytes left, p[0] >= 0x80), or 0: an invalid or overlong sequence, a
 * surrogate, a C1 control (U+0080-U+009F: a terminal may read U+009B as
 * CSI), a line or paragraph separator, or a bidirectional control. */
static size_t printable_utf8(const unsigned char *p, size_t n) {
  size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
  if (p[0] < 0xc2 || p[0] > 0xf4 || n < len) return 0;
  unsigned long cp = p[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3f);
  }
  static const unsigned long min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp <= 0x9f || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
      (cp >= 0x2066 && cp <= 0x2069))
    return 0;
  return len;
}

/* s[0..n) at dst (room bytes) with whatever could end the line or drive
 * a terminal escaped: control bytes (\n \r \t by name, else \xHH), DEL
 * and every byte of no printable UTF-8 character (\xHH). Spaces and
 * backslashes stay (the message is text; a caller's own escapes, such as
 * core.log_escape's, pass through once). Stops where the next piece
 * does not fit; returns the length written. */
static size_t escape_into(char *dst, size_t room, const unsigned char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0, i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t k = 1;
    if (c >= 0x20 && c < 0x7f) {
      if (o + 1 > room) break;
      dst[o++] = (char)c;
    } else if (c >= 0x80 && (k = printable_utf8(s + i, n - i))) {
      if (o + k > room) break;
      memcpy(dst + o, s + i, k);
      o += k;
    } else {
      k = 1;
      char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
      const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
      size_t len = named ? 2 : 4;
      if (o + len > room) break;
      memcpy(dst + o, named ? named : e, len);
      o += len;
    }
    i += k;
  }
  return o;
}

/* "rock LEVEL AREA: " + the formatted message, escaped (escape_into: no
 * message can forge a line or send a terminal escape, whoever wrote the
 * text it quotes) + "\n" at dst (cap bytes, cap >= 2); returns the
 * length, cut to fit. */
static size_t format_line(char *dst, size_t cap, int level, const char *area,
                          const char *fmt, va_list ap) {
  int h = snprintf(dst, cap, "rock %s %s: ", names[level & 3], area);
  size_t n = h < 0 ? 0 : (size_t)h < cap - 1 ? (size_t)h : cap - 2;
  char msg[1024 + 64];
  int m = vsnprintf(msg, sizeof msg, fmt, ap);
  if (m > 0) {
    size_t len = (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1;
    n += escape_into(dst + n, cap - 1 - n, (const unsigned char *)msg, len);
  }
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
