/* base64.h: RFC 4648 base64 (standard alphabet, padded), for bytes that
 * JSON strings cannot carry (NUL, invalid UTF-8): write_file and
 * read_file contents and commands with encoding "base64", on both sides
 * of the rocklet's API. */
#ifndef ROCK_CORE_BASE64_H
#define ROCK_CORE_BASE64_H

#include "buf.h"

/* Append the encoding of in[0..n) to out. Returns 0 or -1 (no memory). */
int rock_base64_encode(rock_buf_t *out, const void *in, size_t n);
/* Append the decoding of in[0..n) to out. ASCII whitespace is skipped;
 * padding is optional. Returns 0, -1 (no memory) or -2 (not base64: out
 * keeps what was decoded before the bad byte). */
int rock_base64_decode(rock_buf_t *out, const char *in, size_t n);

#endif
