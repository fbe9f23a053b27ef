/* base64.c: the codec of base64.h, table-driven, one pass each way. */
#include "base64.h"

static const char ALPHABET[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int rock_base64_encode(rock_buf_t *out, const void *in, size_t n) {
  const unsigned char *p = in;
  if (rock_buf_reserve(out, (n + 2) / 3 * 4)) return -1;
  char *o = out->data + out->len;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
    *o++ = ALPHABET[v >> 18];
    *o++ = ALPHABET[(v >> 12) & 63];
    *o++ = ALPHABET[(v >> 6) & 63];
    *o++ = ALPHABET[v & 63];
  }
  if (i < n) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
    *o++ = ALPHABET[v >> 18];
    *o++ = ALPHABET[(v >> 12) & 63];
    *o++ = i + 1 < n ? ALPHABET[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  out->len = (size_t)(o - out->data);
  out->data[out->len] = 0;
  return 0;
}

static int value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Strict, as RFC 4648 section 3.5 allows a decoder to be: a last group of
 * one character, bits left over that are not zero, or padding that does
 * not end a four-character group are refused, so no two texts decode to
 * the same bytes and a truncated text never passes for a shorter one. */
int rock_base64_decode(rock_buf_t *out, const char *in, size_t n) {
  if (rock_buf_reserve(out, n / 4 * 3 + 3)) return -1;
  char *o = out->data + out->len;
  unsigned acc = 0;
  int bits = 0, rc = 0;
  size_t chars = 0, pad = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      pad++;
      continue;
    }
    int v = value(c);
    if (v < 0 || pad) { /* not base64, or data after padding */
      rc = -2;
      break;
    }
    chars++;
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      *o++ = (char)((acc >> bits) & 0xFF);
    }
  }
  if (!rc && (chars % 4 == 1 || (acc & ((1u << bits) - 1)) ||
              (pad && ((chars + pad) % 4 || pad > 2))))
    rc = -2;
  out->len = (size_t)(o - out->data);
  out->data[out->len] = 0;
  return rc;
}
