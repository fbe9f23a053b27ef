/* utf8.h: strict UTF-8 (RFC 3629, as Python's codec reads it: no
 * overlongs, no surrogates, nothing past U+10FFFF) and its cleaning, each
 * bad byte becoming U+FFFD. The rocklet cleans command output with it
 * (output.c); rock.core.utf8_clean gives it to Lua, which cleans model text
 * and every JSON line it writes for other programs to read. */
#ifndef ROCK_CORE_UTF8_H
#define ROCK_CORE_UTF8_H

#include <stddef.h>

#include "buf.h"

/* The length (1..4) of the valid sequence at s[0..n), n >= 1; 0 if the
 * byte at s starts no valid sequence. */
size_t rock_utf8_seq(const unsigned char *s, size_t n);
/* The length of the longest valid prefix of s[0..n) (n when all of it is). */
size_t rock_utf8_valid_prefix(const char *s, size_t n);
/* Append s[0..n) to out with each byte of an invalid sequence replaced by
 * U+FFFD. Returns 0 or -1 (no memory). */
int rock_utf8_clean(rock_buf_t *out, const char *s, size_t n);

#endif
