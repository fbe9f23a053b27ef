/* output.c: cleaning command output (see output.h).
 * The UTF-8 check is c/core/utf8.c's (RFC 3629 strictly: overlongs,
 * surrogates and code points past U+10FFFF are invalid); each bad byte
 * becomes U+FFFD. */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int rock_output_clean(rock_buf_t *out, const char *in, size_t len) {
  static const char repl[] = "\xEF\xBF\xBD";
  const unsigned char *s = (const unsigned char *)in;
  size_t i = 0, run = 0; /* run: start of bytes copied verbatim */
  while (i < len) {
    unsigned char c = s[i];
    size_t skip = 0;
    const char *put = NULL;
    size_t putn = 0;
    if (c >= 0x20 && c < 0x80) {
      i++;
      continue;
    }
    if (c == '\r' && i + 1 < len && s[i + 1] == '\n') {
      skip = 1; /* drop the CR, keep the LF */
    } else if (c == 0x1B) {
      skip = ansi_len(s + i, len - i);
    } else if (c < 0x80) {
      i++; /* other controls pass through: JSON escapes them */
      continue;
    } else {
      size_t u = rock_utf8_seq(s + i, len - i);
      if (u) {
        i += u;
        continue;
      }
      skip = 1;
      put = repl;
      putn = 3;
    }
    if (rock_buf_append(out, in + run, i - run)) return -1;
    if (put && rock_buf_append(out, put, putn)) return -1;
    i += skip;
    run = i;
  }
  return rock_buf_append(out, in + run, len - run);
}
