/* jsonstr.c: JSON string literals of valid UTF-8 (see jsonstr.h). */
#include "jsonstr.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The first index from i of a byte that needs an escape: ", \ or < 0x20. */
static size_t plain_run(const unsigned char *s, size_t i, size_t n) {
#ifdef __SSE2__
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), lim = _mm_set1_epi8(0x1F);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
    /* v <= 0x1F unsigned: min(v, 0x1F) == v */
    __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, lim), v);
    __m128i hit = _mm_or_si128(ctl, _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)));
    unsigned m = (unsigned)_mm_movemask_epi8(hit);
    if (m) return i + (size_t)__builtin_ctz(m);
  }
#endif
  while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\') i++;
  return i;
}

static size_t esc_len(unsigned char c) {
  return c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f'
             ? 2
             : 6;
}

size_t rock_json_quote_len(const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t len = n + 2, i = 0;
  while ((i = plain_run(s, i, n)) < n) len += esc_len(s[i++]) - 1;
  return len;
}

char *rock_json_quote(char *o, const char *str, size_t n) {
  static const char hex[] = "0123456789ABCDEF"; /* as jansson writes them */
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, run = 0;
  *o++ = '"';
  while ((i = plain_run(s, i, n)) < n) {
    memcpy(o, s + run, i - run);
    o += i - run;
    unsigned char c = s[i++];
    run = i;
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\n': *o++ = 'n'; break;
    case '\t': *o++ = 't'; break;
    case '\r': *o++ = 'r'; break;
    case '\b': *o++ = 'b'; break;
    case '\f': *o++ = 'f'; break;
    default:
      memcpy(o, "u00", 3);
      o[3] = hex[c >> 4];
      o[4] = hex[c & 15];
      o += 5;
    }
  }
  memcpy(o, s + run, n - run);
  o += n - run;
  *o++ = '"';
  return o;
}
