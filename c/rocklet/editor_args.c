/* editor_args.c: Python's int() of a str and Python's repr() of a str and
 * of a float (editor_args.h), for the editor's integer arguments as
 * SWE-agent's argparse takes them. */
#include "editor_args.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editor_text.h"

/* Python's str.isspace() as int() strips it: ASCII \t..\r and space, and
 * Unicode's separators (U+001C..U+001F are not stripped by int()). */
static int py_space(unsigned cp) {
  return cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* The end of the run of Python whitespace at s[i..n). */
static size_t skip_space(const char *s, size_t n, size_t i) {
  unsigned cp;
  for (size_t l; i < n && (l = rock__utf8_seq(s + i, n - i, &cp)) && py_space(cp);) i += l;
  return i;
}

static int digit(char c) { return c >= '0' && c <= '9'; }

int rock__py_int(const char *s, size_t n, long long *v, rock_buf_t *big) {
  size_t i = skip_space(s, n, 0);
  int neg = i < n && s[i] == '-';
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  size_t from = i;
  unsigned long long acc = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
  int over = 0;
  for (; i < n; i++) {
    if (s[i] == '_' && i > from && digit(s[i - 1]) && i + 1 < n && digit(s[i + 1])) continue;
    if (!digit(s[i])) break;
    unsigned d = (unsigned)(s[i] - '0');
    if (acc > (lim - d) / 10) over = 1;
    else acc = acc * 10 + d;
  }
  size_t to = i;
  if (to == from || skip_space(s, n, to) != n) return 0;
  if (over) {
    *v = neg ? LLONG_MIN : LLONG_MAX;
    if (big) {
      int rc = neg ? rock_buf_append(big, "-", 1) : 0;
      int lead = 1;
      for (size_t k = from; k < to && !rc; k++) {
        if (s[k] == '_' || (lead && s[k] == '0')) continue;
        lead = 0;
        rc = rock_buf_append(big, s + k, 1);
      }
      if (rc) return -1;
    }
  } else {
    *v = neg ? (long long)(0 - acc) : (long long)acc;
  }
  return 1;
}

/* Code points Python's str.isprintable() refuses, past ASCII: controls,
 * separators but the space, format characters, surrogates, private use
 * and the non-characters U+FFFE, U+FFFF (Unicode 15). */
static const unsigned nonprint[][2] = {
    {0x80, 0xA0},       {0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},
    {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},     {0x8E2, 0x8E2},
    {0x1680, 0x1680},   {0x180E, 0x180E},   {0x2000, 0x200F},   {0x2028, 0x202F},
    {0x205F, 0x2064},   {0x2066, 0x206F},   {0x3000, 0x3000},   {0xD800, 0xF8FF},
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0xFFFE, 0xFFFF},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF},
};

static int printable(unsigned cp) {
  for (size_t i = 0; i < sizeof nonprint / sizeof nonprint[0]; i++)
    if (cp >= nonprint[i][0] && cp <= nonprint[i][1]) return 0;
  return 1;
}

int rock__py_repr(rock_buf_t *out, const char *s, size_t n) {
  char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
  int rc = rock_buf_reserve(out, n + 2) || rock_buf_append(out, &q, 1);
  for (size_t i = 0; i < n && !rc;) {
    unsigned cp;
    size_t l = rock__utf8_seq(s + i, n - i, &cp);
    if (!l) cp = (unsigned char)s[i], l = 1; /* not UTF-8: the byte, escaped */
    char esc[16];
    const char *e = NULL;
    if (cp == (unsigned char)q || cp == '\\') esc[0] = '\\', esc[1] = (char)cp, esc[2] = 0, e = esc;
    else if (cp == '\t') e = "\\t";
    else if (cp == '\n') e = "\\n";
    else if (cp == '\r') e = "\\r";
    else if (cp < 0x20 || cp == 0x7F || (l == 1 && cp >= 0x80) || (cp >= 0x80 && !printable(cp))) {
      snprintf(esc, sizeof esc, cp <= 0xFF ? "\\x%02x" : cp <= 0xFFFF ? "\\u%04x" : "\\U%08x", cp);
      e = esc;
    }
    rc = e ? rock_buf_puts(out, e) : rock_buf_append(out, s + i, l);
    i += l;
  }
  return rc || rock_buf_append(out, &q, 1) ? -1 : 0;
}

int rock__py_float(rock_buf_t *out, double x) {
  if (isnan(x)) return rock_buf_puts(out, "nan");
  if (isinf(x)) return rock_buf_puts(out, x < 0 ? "-inf" : "inf");
  char b[64];
  for (int p = 1; p <= 17; p++) { /* the shortest digits that read back as x */
    snprintf(b, sizeof b, "%.*e", p - 1, x);
    if (strtod(b, NULL) == x) break;
  }
  /* b: [-]d[.ddd]e(+|-)XX */
  char digits[32], *m = b + (b[0] == '-'), *ex = strchr(m, 'e');
  size_t nd = 0;
  for (char *c = m; c < ex; c++)
    if (*c != '.') digits[nd++] = *c;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  int exp = atoi(ex + 1), rc = b[0] == '-' ? rock_buf_append(out, "-", 1) : 0;
  if (exp >= -4 && exp < 16) { /* fixed, with at least one digit after the point */
    if (exp < 0) {
      rc = rc || rock_buf_append(out, "0.0000", (size_t)(1 - exp)) ||
           rock_buf_append(out, digits, nd);
    } else {
      size_t whole = (size_t)exp + 1;
      for (size_t k = 0; k < whole && !rc; k++)
        rc = rock_buf_append(out, k < nd ? digits + k : "0", 1);
      rc = rc || rock_buf_append(out, ".", 1) ||
           (nd > whole ? rock_buf_append(out, digits + whole, nd - whole)
                       : rock_buf_append(out, "0", 1));
    }
  } else {
    rc = rc || rock_buf_append(out, digits, 1) ||
         (nd > 1 && (rock_buf_append(out, ".", 1) || rock_buf_append(out, digits + 1, nd - 1))) ||
         rock_buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
  }
  return rc ? -1 : 0;
}
