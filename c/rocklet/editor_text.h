/* editor_text.h: the text side of the editor (editor.c): decoding a file
 * as Python's read_text does (UTF-8, else latin-1; universal newlines),
 * encoding it back, str.expandtabs(8), and the numbered `cat -n` view with
 * its 16000-character clip. Pure functions on buffers; no I/O. */
#ifndef ROCK_ROCKLET_EDITOR_TEXT_H
#define ROCK_ROCKLET_EDITOR_TEXT_H

#include <stddef.h>

#include "../core/buf.h"

/* How a file's bytes became text, so an edit is written back the same way. */
typedef struct {
  int latin1; /* not UTF-8: read as latin-1 (each byte one character) */
  int crlf;   /* every line ended with \r\n (at least one did) */
} rock__enc_t;

/* Is s[0..n) valid UTF-8 as Python's strict codec sees it (no overlong
 * forms, no surrogates, nothing past U+10FFFF)? */
int rock__utf8_valid(const char *s, size_t n);
/* The length of the valid UTF-8 sequence that starts s[0..n), its code
 * point in *cp; 0 when it is not valid (or n is 0). */
size_t rock__utf8_seq(const char *s, size_t n, unsigned *cp);
/* Code points in the valid UTF-8 s[0..n). */
size_t rock__utf8_count(const char *s, size_t n);
/* The bytes of the first `chars` code points of the UTF-8 s[0..n) (n when
 * it holds no more); stops there. */
size_t rock__utf8_prefix(const char *s, size_t n, size_t chars);
/* Append s[0..n) to out as valid UTF-8: each byte of a bad sequence
 * becomes U+FFFD (for file names). 0 or -1. */
int rock__utf8_clean(rock_buf_t *out, const char *s, size_t n);

/* Append the text of the file bytes raw[0..n) to out (UTF-8, else
 * latin-1; \r\n and lone \r become \n) and say how in *enc. 0 or -1. */
int rock__decode(rock_buf_t *out, const char *raw, size_t n, rock__enc_t *enc);
/* Append the bytes that store text[0..n) as enc says to out. Returns 0,
 * -1 (no memory), or 1 when a character does not fit latin-1: msg then
 * gets Python's error text. */
int rock__encode(rock_buf_t *out, const char *text, size_t n, const rock__enc_t *enc,
                 rock_buf_t *msg);

/* Append Python's s.expandtabs(8) of s[0..n) to out. 0 or -1. */
int rock__expandtabs(rock_buf_t *out, const char *s, size_t n);

/* Append SWE-agent's view of content[0..n) to out: "Here's the result of
 * running `cat -n` on {desc}:\n", each line "%6d\t%s" numbered from
 * init_line, then "\n"; content past ROCK_EDITOR_CLIP characters is cut
 * and followed by the clip NOTE; tabs are expanded. 0 or -1. */
int rock__view(rock_buf_t *out, const char *content, size_t n, const char *desc,
               long long init_line);


#endif
