/* jsonstr.h: a JSON string literal of text that is already valid UTF-8
 * (cleaned output, base64), written once into a buffer sized exactly: the
 * encoding jansson's json_dumps gives (", \ and control bytes escaped,
 * \b \f \n \r \t by name, others as \u00XX in capitals; nothing else), without its
 * copies and per-character UTF-8 walk. Runs that need no escape are
 * skipped 16 bytes at a time. The rocklet's big answers use it (reply.c). */
#ifndef ROCK_CORE_JSONSTR_H
#define ROCK_CORE_JSONSTR_H

#include <stddef.h>

/* The bytes rock_json_quote writes for s[0..n): quotes included. */
size_t rock_json_quote_len(const char *s, size_t n);
/* Write "s" escaped at o (room: rock_json_quote_len); returns the end. */
char *rock_json_quote(char *o, const char *s, size_t n);

#endif
