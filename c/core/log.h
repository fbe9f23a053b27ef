/* log.h: one-line, key=value logging to stderr for host and rocklet.
 * ROCK_LOG (env) picks the lowest level printed: debug, info, warn (the
 * default unless the program set another with rock_log_default), error.
 * ROCK_ASSERT guards internal invariants only, never input. */
#ifndef ROCK_CORE_LOG_H
#define ROCK_CORE_LOG_H

enum { ROCK_LOG_DEBUG, ROCK_LOG_INFO, ROCK_LOG_WARN, ROCK_LOG_ERROR };

/* Buffered lines are written once they pass this many bytes. */
#define ROCK_LOG_BUF_FLUSH 4096

/* A line, written at once (after any buffered ones). */
void rock_log(int level, const char *area, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A line that may wait in a buffer (debug and info; warn and error are
 * written at once) until it passes ROCK_LOG_BUF_FLUSH bytes, the next
 * rock_log or rock_log_flush, or exit. Returns 1 when this line went into
 * an empty buffer (the caller then arranges a rock_log_flush soon). */
int rock_log_buffered(int level, const char *area, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write the buffered lines now. */
void rock_log_flush(void);
int rock_log_enabled(int level);
/* The level used when ROCK_LOG is unset (or unknown); warn unless set. */
void rock_log_default(int level);

#define ROCK_ASSERT(expr)                                                      \
  do {                                                                         \
    if (!(expr)) {                                                             \
      rock_log(ROCK_LOG_ERROR, "assert", "failed=\"%s\" at=%s:%d", #expr,      \
               __FILE__, __LINE__);                                            \
      __builtin_trap();                                                        \
    }                                                                          \
  } while (0)

#endif
