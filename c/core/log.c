/* log.c: the rock_log sink. Level comes from $ROCK_LOG once, on first use.
 * Lines look like: "rock warn session: msg=... session=bash-1". */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int threshold = -1;

static int parse_level(const char *s) {
  if (!s) return ROCK_LOG_WARN;
  if (!strcmp(s, "debug")) return ROCK_LOG_DEBUG;
  if (!strcmp(s, "info")) return ROCK_LOG_INFO;
  if (!strcmp(s, "error")) return ROCK_LOG_ERROR;
  return ROCK_LOG_WARN;
}

int rock_log_enabled(int level) {
  if (threshold < 0) threshold = parse_level(getenv("ROCK_LOG"));
  return level >= threshold;
}

void rock_log(int level, const char *area, const char *fmt, ...) {
  static const char *names[] = {"debug", "info", "warn", "error"};
  if (!rock_log_enabled(level)) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "rock %s %s: %s\n", names[level & 3], area, line);
}
