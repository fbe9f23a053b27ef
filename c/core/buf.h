/* buf.h: rock's one growable byte buffer, used by the host and the rocklet
 * (HTTP bodies, URLs, captured output). The data is always NUL-terminated
 * after len bytes once anything was added, so text can be read as a C
 * string. A zeroed rock_buf_t is an empty buffer; rock_buf_free makes it
 * empty again. Allocation failures return -1 and leave the buffer as it
 * was. */
#ifndef ROCK_CORE_BUF_H
#define ROCK_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
  char *data;
  size_t len, cap;
} rock_buf_t;

/* Make room for at least n more bytes (and the NUL). Returns 0 or -1. */
int rock_buf_reserve(rock_buf_t *b, size_t n);
/* Append n bytes of p. Returns 0 or -1. */
int rock_buf_append(rock_buf_t *b, const void *p, size_t n);
/* Append a C string. Returns 0 or -1. */
int rock_buf_puts(rock_buf_t *b, const char *s);
/* Append printf-style text. Returns 0 or -1. */
int rock_buf_printf(rock_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rock_buf_vprintf(rock_buf_t *b, const char *fmt, va_list ap);
/* Append v in decimal (no printf: on hot paths). Returns 0 or -1. */
int rock_buf_putu(rock_buf_t *b, unsigned long long v);
void rock_buf_free(rock_buf_t *b);

#endif
