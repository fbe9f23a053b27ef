/* output.h: turning a command's raw bytes into what an agent reads.
 * Cleaning: CRLF -> LF, ANSI escape sequences removed, invalid UTF-8
 * replaced by U+FFFD, so the result is always valid JSON string content.
 * capture.h keeps an output within a cap; marker.h finds where a command
 * ends. */
#ifndef ROCK_ROCKLET_OUTPUT_H
#define ROCK_ROCKLET_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/buf.h"


/* Append the cleaned form of in[0..len) to out. Returns 0 or -1 (no memory). */
int rock_output_clean(rock_buf_t *out, const char *in, size_t len);
/* The length of in's prefix that rock_output_clean leaves as it is (len:
 * nothing changes); cleaning the rest from there gives the same bytes as
 * cleaning the whole. */
size_t rock_output_unchanged(const char *in, size_t len);

#endif
