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

int rock_base64_decode(rock_buf_t *out, const char *in, size_t n) {
  if (rock_buf_reserve(out, n / 4 * 3 + 3)) return -1;
  char *o = out->data + out->len;
  unsigned acc = 0;
  int bits = 0, rc = 0, ended = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ended = 1;
      continue;
    }
    int v = value(c);
    if (v < 0 || ended) {
      rc = -2;
      break;
    }
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      *o++ = (char)((acc >> bits) & 0xFF);
    }
  }
  out->len = (size_t)(o - out->data);
  out->data[out->len] = 0;
  return rc;
}
