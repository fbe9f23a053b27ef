/* multipart.h: a streaming parser of multipart/form-data bodies (RFC 7578,
 * the framing of RFC 2046). Bytes are pushed in as they come (from a file
 * or memory, in any pieces); each part's content goes to a callback-free
 * sink: a part with a filename, or one past max_value bytes, is written
 * to a new temp file in tmpdir, any other to memory. Nothing holds more
 * than a part's headers and one delimiter's worth of bytes besides the
 * memory values. Used by lua_serve.c (core.multipart_parse). */
#ifndef ROCK_HTTP_MULTIPART_H
#define ROCK_HTTP_MULTIPART_H

#include <stddef.h>

#include "../core/buf.h"

/* One part, owned by the parser until rock_multipart_free. */
typedef struct {
  char *name;         /* the form field's name (required) */
  char *filename;     /* NULL when the part has none */
  char *content_type; /* NULL when not sent */
  char *file;         /* the temp file holding the content, or NULL */
  rock_buf_t value;   /* the content when file is NULL */
} rock_multipart_part_t;

typedef struct rock_multipart rock_multipart_t;

/* A parser for the body of this boundary (without the leading "--"). Temp
 * files are made in tmpdir (mkstemp "rock-part-<pid>-XXXXXX"); values larger
 * than max_value go to a file too; more than max_parts parts is an error.
 * NULL when out of memory or the boundary is not 1-70 characters. */
rock_multipart_t *rock_multipart_new(const char *boundary, const char *tmpdir,
                                     size_t max_value, size_t max_parts);
/* Push body bytes. 0, or -1 with the reason in rock_multipart_error (a
 * malformed body, or a temp file that could not be written). */
int rock_multipart_feed(rock_multipart_t *m, const char *p, size_t n);
/* The body ended: 0 when it was whole (its closing delimiter seen). */
int rock_multipart_finish(rock_multipart_t *m);
const char *rock_multipart_error(rock_multipart_t *m);
/* Did the error come from the body (1) or from the system (0)? */
int rock_multipart_bad_input(rock_multipart_t *m);
/* The parts so far, in order. */
size_t rock_multipart_count(rock_multipart_t *m);
rock_multipart_part_t *rock_multipart_part(rock_multipart_t *m, size_t i);
/* Free the parser and its parts; with remove_files, the parts' temp files
 * are deleted too (a failed parse; else they are the caller's). */
void rock_multipart_free(rock_multipart_t *m, int remove_files);

#endif
