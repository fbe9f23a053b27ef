/* capture.h: a command's output as it streams in, kept within a cap.
 * Up to cap bytes are kept whole. Past it the first cap/2 bytes and a ring
 * of the last cap - cap/2 stay in memory, and, when a spill path is given,
 * every byte also goes to that file, so nothing is lost: the agent reads
 * head and tail, the full output stays in the sandbox. The session's
 * output pipe and /execute's stdout and stderr are captures. */
#ifndef ROCK_ROCKLET_CAPTURE_H
#define ROCK_ROCKLET_CAPTURE_H

#include <limits.h>
#include <stdint.h>

#include "output.h"

typedef struct {
  size_t cap;
  rock_buf_t head;          /* all bytes while total <= cap, then cap/2 */
  char *ring;               /* the last ring_cap bytes, once past the cap */
  size_t ring_cap, ring_len, ring_pos;
  uint64_t total;
  char spill_path[PATH_MAX]; /* "" = no spill file */
  int spill_fd;              /* open once past the cap */
  int spill_err;             /* errno of a failed spill (the file is then
                              * removed: it is not the full output), or 0 */
} rock_capture_t;

/* Start an empty capture; spill_path may be NULL (no file). */
void rock_capture_init(rock_capture_t *c, size_t cap, const char *spill_path);
void rock_capture_add(rock_capture_t *c, const char *p, size_t n);
/* The same without a copy, for bytes read straight into the capture:
 * rock_capture_room gives where up to n bytes may be read (NULL past the
 * cap, or with no memory: then read elsewhere and rock_capture_add), and
 * rock_capture_commit takes the k <= n that were. Nothing may touch the
 * capture in between. */
char *rock_capture_room(rock_capture_t *c, size_t n);
void rock_capture_commit(rock_capture_t *c, size_t k);
/* Append what an agent reads to out: the whole output cleaned (output.h),
 * or head, a note ("[... N bytes dropped; full output: FILE ...]", or why
 * the full output could not be kept) and tail, cut at character boundaries. *dropped gets the bytes left out.
 * Returns 0 or -ENOMEM. */
int rock_capture_render(rock_capture_t *c, rock_buf_t *out, uint64_t *dropped);
/* The same for an output known by its head (h bytes), its tail (t bytes)
 * and its total size, the bytes between them dropped: path (or NULL) names
 * where the full output is, spill_err (or 0) why it could not be kept.
 * The background jobs' output files are read this way (jobs.c). */
int rock_capture_render_parts(rock_buf_t *out, const char *head, size_t h, const char *tail,
                              size_t t, uint64_t total, const char *path, int spill_err,
                              uint64_t *dropped);
/* The raw bytes instead, for the byte routes: out (empty) takes the whole
 * output as it came (the buffer itself: no copy), or past the cap its head
 * and tail joined, with *dropped the bytes between them. The capture's
 * head is then empty. Returns 0 or -ENOMEM. */
int rock_capture_take_raw(rock_capture_t *c, rock_buf_t *out, uint64_t *dropped);
/* Is the full output in the spill file? */
int rock_capture_spilled(const rock_capture_t *c);
/* Free memory and close the spill file (the file stays). */
void rock_capture_free(rock_capture_t *c);

#endif
