/* log.h: one-line, key=value logging to stderr for host and rocklet.
 * ROCK_LOG (env) picks the lowest level printed: debug, info, warn (default),
 * error. ROCK_ASSERT guards internal invariants only, never input. */
#ifndef ROCK_CORE_LOG_H
#define ROCK_CORE_LOG_H

enum { ROCK_LOG_DEBUG, ROCK_LOG_INFO, ROCK_LOG_WARN, ROCK_LOG_ERROR };

void rock_log(int level, const char *area, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int rock_log_enabled(int level);

#define ROCK_ASSERT(expr)                                                      \
  do {                                                                         \
    if (!(expr)) {                                                             \
      rock_log(ROCK_LOG_ERROR, "assert", "failed=\"%s\" at=%s:%d", #expr,      \
               __FILE__, __LINE__);                                            \
      __builtin_trap();                                                        \
    }                                                                          \
  } while (0)

#endif
