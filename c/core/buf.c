/* buf.c: the growable byte buffer of buf.h. Capacity doubles from 256
 * bytes, so n appends cost O(n) copies in all. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rock_buf_reserve(rock_buf_t *b, size_t n) {
  if (n > (size_t)-1 / 2 - b->len) return -1; /* would overflow */
  size_t need = b->len + n + 1;
  if (need <= b->cap) return 0;
  size_t c = b->cap ? b->cap : 256;
  while (c < need) c *= 2;
  char *d = realloc(b->data, c);
  if (!d) return -1;
  b->data = d;
  b->cap = c;
  return 0;
}

int rock_buf_append(rock_buf_t *b, const void *p, size_t n) {
  if (rock_buf_reserve(b, n)) return -1;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
  return 0;
}

int rock_buf_puts(rock_buf_t *b, const char *s) {
  return rock_buf_append(b, s, strlen(s));
}

void rock_buf_free(rock_buf_t *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

int rock_buf_vprintf(rock_buf_t *b, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  /* one pass when the text fits the room left (the usual case) */
  size_t room = b->cap - b->len; /* with the NUL's byte; 0 for an empty buffer */
  int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
  if (n >= 0 && (size_t)n < room) {
    va_end(again);
    b->len += (size_t)n;
    return 0;
  }
  if (room) b->data[b->len] = 0; /* the cut text is not kept */
  if (n < 0 || rock_buf_reserve(b, (size_t)n)) {
    va_end(again);
    return -1;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
  va_end(again);
  b->len += (size_t)n;
  return 0;
}

int rock_buf_putu(rock_buf_t *b, unsigned long long v) {
  char d[24], *p = d + sizeof d;
  do *--p = (char)('0' + v % 10); while (v /= 10);
  return rock_buf_append(b, p, (size_t)(d + sizeof d - p));
}

int rock_buf_printf(rock_buf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = rock_buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}
