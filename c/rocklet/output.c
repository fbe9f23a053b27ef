/* output.c: cleaning command output (see output.h), at memory speed:
 * runs of plain ASCII are skipped 16 bytes at a time (SSE2; 8 with a
 * word elsewhere) and copied once; only CR, ESC and bytes past 0x7F are
 * looked at one by one. The UTF-8 check is c/core/utf8.c's (RFC 3629
 * strictly: overlongs, surrogates and code points past U+10FFFF are
 * invalid); each bad byte becomes U+FFFD. tests/rocklet/test_scrub.c
 * holds it to the slower code it replaced, byte for byte. */
#include "output.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../core/utf8.h"

/* Length of the escape sequence starting with ESC at s (at least 1). */
static size_t ansi_len(const unsigned char *s, size_t n) {
  if (n < 2) return 1;
  size_t i = 2;
  if (s[1] == '[') { /* CSI: params, intermediates, one final byte */
    while (i < n && s[i] >= 0x20 && s[i] <= 0x3F) i++;
    if (i < n && s[i] >= 0x40 && s[i] <= 0x7E) i++;
    return i;
  }
  if (s[1] == ']' || s[1] == 'P' || s[1] == '_') { /* OSC/DCS: to BEL or ST */
    while (i < n) {
      if (s[i] == 0x07) return i + 1;
      if (s[i] == 0x1B && i + 1 < n && s[i + 1] == '\\') return i + 2;
      i++;
    }
    return n;
  }
  if (s[1] == '(' || s[1] == ')') return n < 3 ? n : 3; /* charset select */
  if (s[1] >= 0x40 && s[1] <= 0x7E) return 2;
  return 1;
}

/* The first index from i that is not plain: plain bytes (ASCII but CR and
 * ESC) stay as they are, so they are only skipped over, 16 (or 8) at a
 * time: this is what makes the scrub run at memory speed on usual output. */
static size_t plain_run(const unsigned char *s, size_t i, size_t n) {
  size_t near = n - i < 16 ? n : i + 16; /* short runs (between non-ASCII) first */
  while (i < near && s[i] < 0x80 && s[i] != 0x0D && s[i] != 0x1B) i++;
  if (i < near || i == n) return i;
#ifdef __SSE2__
  const __m128i cr = _mm_set1_epi8(0x0D), esc = _mm_set1_epi8(0x1B);
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
    __m128i hit = _mm_or_si128(v, _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, esc)));
    unsigned m = (unsigned)_mm_movemask_epi8(hit); /* high bit: >= 0x80, CR or ESC */
    if (m) return i + (size_t)__builtin_ctz(m);
  }
#else
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    uint64_t x = w ^ (ones * 0x0D), y = w ^ (ones * 0x1B);
    if ((w | ((x - ones) & ~x) | ((y - ones) & ~y)) & highs) break; /* then bytewise */
  }
#endif
  while (i < n && s[i] < 0x80 && s[i] != 0x0D && s[i] != 0x1B) i++;
  return i;
}

size_t rock_output_unchanged(const char *in, size_t len) {
  const unsigned char *s = (const unsigned char *)in;
  size_t i = 0;
  while ((i = plain_run(s, i, len)) < len) {
    unsigned char c = s[i];
    if (c == '\r') {
      if (i + 1 == len || s[i + 1] != '\n') {
        i++; /* a lone CR stays */
        continue;
      }
      return i;
    }
    if (c == 0x1B) return i;
    size_t u = rock_utf8_seq(s + i, len - i);
    if (!u) return i;
    i += u;
  }
  return len;
}

int rock_output_clean(rock_buf_t *out, const char *in, size_t len) {
  static const char repl[] = "\xEF\xBF\xBD";
  const unsigned char *s = (const unsigned char *)in;
  if (rock_buf_reserve(out, len)) return -1; /* usually all it needs */
  size_t i = 0, run = 0; /* run: start of bytes copied verbatim */
  while ((i = plain_run(s, i, len)) < len) {
    unsigned char c = s[i];
    size_t skip;
    if (c == '\r') {
      if (i + 1 == len || s[i + 1] != '\n') {
        i++; /* a lone CR stays */
        continue;
      }
      skip = 1; /* drop the CR, keep the LF */
    } else if (c == 0x1B) {
      skip = ansi_len(s + i, len - i);
    } else {
      /* a valid 2-byte sequence (U+0080..U+07FF) inline, the rest by utf8.c */
      size_t u = c >= 0xC2 && c <= 0xDF && i + 1 < len && (s[i + 1] & 0xC0) == 0x80
                     ? 2
                     : rock_utf8_seq(s + i, len - i);
      if (u) {
        i += u;
        continue;
      }
      skip = 1;
    }
    if (rock_buf_append(out, in + run, i - run)) return -1;
    if (c >= 0x80 && rock_buf_append(out, repl, 3)) return -1;
    i += skip;
    run = i;
  }
  return rock_buf_append(out, in + run, len - run);
}
