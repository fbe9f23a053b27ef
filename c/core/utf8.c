/* utf8.c: strict UTF-8 and its cleaning (utf8.h). Linear: each byte is
 * looked at once, ASCII runs at a time. */
#include "utf8.h"

#include <stdint.h>
#include <string.h>

size_t rock_utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (0x3F >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

size_t rock_utf8_valid_prefix(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      i++;
      while (i + 16 <= n) { /* ASCII runs, 16 bytes at a time */
        uint64_t a, b;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        if ((a | b) & 0x8080808080808080ull) break;
        i += 16;
      }
      continue;
    }
    size_t l = rock_utf8_seq(p + i, n - i);
    if (!l) break;
    i += l;
  }
  return i;
}

int rock_utf8_clean(rock_buf_t *out, const char *s, size_t n) {
  size_t i = 0;
  if (rock_buf_reserve(out, n)) return -1;
  while (i < n) {
    size_t ok = rock_utf8_valid_prefix(s + i, n - i);
    if (rock_buf_append(out, s + i, ok)) return -1;
    i += ok;
    if (i < n) {
      if (rock_buf_append(out, "\xEF\xBF\xBD", 3)) return -1;
      i++;
    }
  }
  return 0;
}
