/* editor_text.c: the editor's text helpers (editor_text.h): strict UTF-8,
 * latin-1 and universal newlines as Python reads a file, the encoding back,
 * expandtabs and the numbered, clipped view SWE-agent prints. Characters
 * are code points throughout, as in Python's str. */
#include "editor_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "editor.h"

static const char NOTE[] =
    ROCK_EDITOR_CLIPPED "<NOTE>To save on context only part of this file has been "
    "shown to you. You should retry this tool after you have searched inside the "
    "file with `grep -n` in order to find the line numbers of what you are "
    "looking for.</NOTE>";

/* The length of the valid UTF-8 sequence at p (before e), its code point
 * in *cp; 0 when it is not valid. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *e, unsigned *cp) {
  unsigned c = *p, min;
  size_t len;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) len = 2, c &= 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) len = 3, c &= 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, c &= 0x07, min = 0x10000;
  else return 0;
  if ((size_t)(e - p) < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = c << 6 | (p[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

size_t rock__utf8_seq(const char *s, size_t n, unsigned *cp) {
  return n ? utf8_seq((const unsigned char *)s, (const unsigned char *)s + n, cp) : 0;
}

int rock__utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *e = p + n;
  unsigned cp;
  while (p < e) {
    if (*p < 0x80) {
      p++;
      continue;
    }
    size_t l = utf8_seq(p, e, &cp);
    if (!l) return 0;
    p += l;
  }
  return 1;
}

size_t rock__utf8_prefix(const char *s, size_t n, size_t chars) {
  size_t at = 0;
  for (size_t k = 0; at < n; at++)
    if (((unsigned char)s[at] & 0xC0) != 0x80 && k++ == chars) break;
  return at;
}

size_t rock__utf8_count(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

int rock__utf8_clean(rock_buf_t *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *e = p + n;
  unsigned cp;
  if (rock_buf_reserve(out, n)) return -1;
  while (p < e) {
    size_t l = utf8_seq(p, e, &cp);
    if (l ? rock_buf_append(out, p, l) : rock_buf_append(out, "\xEF\xBF\xBD", 3)) return -1;
    p += l ? l : 1;
  }
  return 0;
}

int rock__decode(rock_buf_t *out, const char *raw, size_t n, rock__enc_t *enc) {
  enc->latin1 = !rock__utf8_valid(raw, n);
  if (!enc->latin1 && !memchr(raw, '\r', n)) { /* the text is the bytes */
    enc->crlf = 0;
    return rock_buf_append(out, raw, n);
  }
  size_t lf = 0, crlf = 0, lone_cr = 0;
  if (rock_buf_reserve(out, enc->latin1 ? 2 * n : n)) return -1;
  char *o = out->data + out->len;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = raw[i];
    if (c == '\r') {
      if (i + 1 < n && raw[i + 1] == '\n') {
        crlf++, lf++, i++;
      } else {
        lone_cr++;
      }
      *o++ = '\n';
    } else if (c >= 0x80 && enc->latin1) {
      *o++ = (char)(0xC0 | c >> 6);
      *o++ = (char)(0x80 | (c & 0x3F));
    } else {
      lf += c == '\n';
      *o++ = c;
    }
  }
  out->len = o - out->data;
  out->data[out->len] = 0;
  enc->crlf = crlf > 0 && crlf == lf && !lone_cr;
  return 0;
}

int rock__encode(rock_buf_t *out, const char *text, size_t n, const rock__enc_t *enc,
                 rock_buf_t *msg) {
  const unsigned char *p = (const unsigned char *)text, *e = p + n;
  size_t pos = 0;
  if (rock_buf_reserve(out, n)) return -1;
  while (p < e) {
    unsigned cp = *p;
    size_t l = 1;
    if (cp >= 0x80 && !(l = utf8_seq(p, e, &cp))) l = 1, cp = 0xFFFD; /* not reached */
    int rc;
    if (cp == '\n' && enc->crlf) rc = rock_buf_append(out, "\r\n", 2);
    else if (!enc->latin1 || cp < 0x80) rc = rock_buf_append(out, p, l);
    else if (cp <= 0xFF) {
      char b = (char)cp;
      rc = rock_buf_append(out, &b, 1);
    } else { /* Python's UnicodeEncodeError text: one character, or a run */
      size_t end = pos + 1;
      unsigned c2;
      for (const unsigned char *q = p + l; q < e; end++) {
        size_t l2 = utf8_seq(q, e, &c2);
        if (!l2 || c2 <= 0xFF) break;
        q += l2;
      }
      if (end - pos > 1)
        rc = rock_buf_printf(msg, "'latin-1' codec can't encode characters in position %zu-%zu: "
                          "ordinal not in range(256)", pos, end - 1);
      else
        rc = rock_buf_printf(msg, "'latin-1' codec can't encode character '\\%s%0*x' in position "
                          "%zu: ordinal not in range(256)",
                          cp > 0xFFFF ? "U" : "u", cp > 0xFFFF ? 8 : 4, cp, pos);
      return rc ? -1 : 1;
    }
    if (rc) return -1;
    p += l, pos++;
  }
  return 0;
}

int rock__expandtabs(rock_buf_t *out, const char *s, size_t n) {
  if (!n || !memchr(s, '\t', n)) return rock_buf_append(out, s, n);
  size_t col = 0;
  for (const char *e = s + n; s < e;) {
    const char *tab = memchr(s, '\t', e - s), *end = tab ? tab : e;
    for (const char *c = s; c < end; c++) /* the column at the span's end */
      if (*c == '\n' || *c == '\r') col = 0;
      else if ((*c & 0xC0) != 0x80) col++;
    if (rock_buf_append(out, s, end - s)) return -1;
    if (!tab) break;
    size_t k = 8 - col % 8;
    if (rock_buf_append(out, "        ", k)) return -1;
    col += k;
    s = tab + 1;
  }
  return 0;
}

int rock__view(rock_buf_t *out, const char *content, size_t n, const char *desc,
               long long init_line) {
  rock_buf_t cut = {0}, text = {0};
  int rc = 0;
  if (!content) content = "", n = 0;
  size_t off = rock__utf8_prefix(content, n, ROCK_EDITOR_CLIP);
  if (off < n) {
    rc = rock_buf_append(&cut, content, off) || rock_buf_puts(&cut, NOTE);
    content = cut.data, n = cut.len;
  }
  if (!rc) rc = rock__expandtabs(&text, content, n);
  if (!rc) rc = rock_buf_printf(out, "Here's the result of running `cat -n` on %s:\n", desc);
  const char *s = text.data ? text.data : "", *e = s + text.len;
  for (long long line = init_line; !rc; line++) {
    const char *nl = memchr(s, '\n', e - s);
    const char *end = nl ? nl : e;
    rc = rock_buf_printf(out, "%6lld\t", line) || rock_buf_append(out, s, end - s) ||
         rock_buf_append(out, "\n", 1);
    if (!nl) break;
    s = nl + 1;
  }
  rock_buf_free(&cut);
  rock_buf_free(&text);
  return rc ? -1 : 0;
}
