/* capture.c: capped output capture with a spill file (see capture.h). */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rock_capture_init(rock_capture_t *c, size_t cap, const char *spill_path) {
  memset(c, 0, sizeof *c);
  c->cap = cap < 2 ? 2 : cap;
  c->spill_fd = -1;
  if (spill_path) snprintf(c->spill_path, sizeof c->spill_path, "%s", spill_path);
}

static void ring_push(rock_capture_t *c, const char *p, size_t n) {
  if (n >= c->ring_cap) { /* only the last ring_cap bytes matter */
    memcpy(c->ring, p + n - c->ring_cap, c->ring_cap);
    c->ring_pos = 0;
    c->ring_len = c->ring_cap;
    return;
  }
  size_t first = c->ring_cap - c->ring_pos;
  if (first > n) first = n;
  memcpy(c->ring + c->ring_pos, p, first);
  memcpy(c->ring, p + first, n - first);
  c->ring_pos = (c->ring_pos + n) % c->ring_cap;
  c->ring_len = c->ring_len + n > c->ring_cap ? c->ring_cap : c->ring_len + n;
}

/* A spill that failed (a full disk) is not the full output: its part is
 * removed rather than left holding the disk with nobody told of it. Only
 * a regular file is removed (the path is ours, but check). */
static void spill_failed(rock_capture_t *c, int err) {
  struct stat st;
  c->spill_err = err;
  if (fstat(c->spill_fd, &st) == 0 && S_ISREG(st.st_mode)) unlink(c->spill_path);
  close(c->spill_fd);
  c->spill_fd = -1;
}

static void spill(rock_capture_t *c, const char *p, size_t n) {
  while (c->spill_fd >= 0 && n && !c->spill_err) {
    ssize_t w = write(c->spill_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) spill_failed(c, errno);
    else p += w, n -= w;
  }
}

/* Past the cap for the first time: the file gets everything so far, the
 * head keeps cap/2 bytes, the ring what came after them. */
static void go_past_cap(rock_capture_t *c) {
  if (c->spill_path[0]) {
    c->spill_fd = open(c->spill_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (c->spill_fd < 0) c->spill_err = errno;
    spill(c, c->head.data, c->head.len);
  }
  c->ring_cap = c->cap - c->cap / 2;
  c->ring = malloc(c->ring_cap);
  size_t keep = c->cap / 2;
  if (c->head.len > keep) {
    if (c->ring) ring_push(c, c->head.data + keep, c->head.len - keep);
    c->head.len = keep;
  }
}

void rock_capture_add(rock_capture_t *c, const char *p, size_t n) {
  if (!n) return;
  int past = c->ring_cap != 0;
  if (!past && c->head.len + n > c->cap) {
    go_past_cap(c);
    past = 1;
  }
  c->total += n;
  if (!past) {
    rock_buf_append(&c->head, p, n);
    return;
  }
  spill(c, p, n);
  size_t keep = c->cap / 2;
  if (c->head.len < keep) {
    size_t take = keep - c->head.len < n ? keep - c->head.len : n;
    rock_buf_append(&c->head, p, take);
    p += take;
    n -= take;
  }
  if (c->ring && n) ring_push(c, p, n);
}

char *rock_capture_room(rock_capture_t *c, size_t n) {
  if (c->ring_cap || rock_buf_reserve(&c->head, n)) return NULL;
  return c->head.data + c->head.len;
}

/* The bytes are in the head already: past the cap, go_past_cap spills
 * them all and cuts the head as rock_capture_add would have. */
void rock_capture_commit(rock_capture_t *c, size_t k) {
  if (!k) return;
  c->head.len += k;
  c->head.data[c->head.len] = 0;
  c->total += k;
  if (c->head.len > c->cap) go_past_cap(c);
}

int rock_capture_spilled(const rock_capture_t *c) {
  return c->spill_fd >= 0 && !c->spill_err;
}

int rock_capture_render_parts(rock_buf_t *out, const char *head, size_t h, const char *tail,
                              size_t t, uint64_t total, const char *path, int spill_err,
                              uint64_t *dropped) {
  /* cut both at character boundaries so no U+FFFD is made up at the seam */
  size_t t0 = 0;
  while (h > 0 && ((unsigned char)head[h - 1] & 0xC0) == 0x80) h--;
  if (h > 0 && (unsigned char)head[h - 1] >= 0xC0) h--;
  while (t > 0 && ((unsigned char)tail[t0] & 0xC0) == 0x80) t0++, t--;
  *dropped = total - h - t;
  char note[PATH_MAX + 128];
  int nl = path && *path
               ? snprintf(note, sizeof note, "\n[... %" PRIu64 " bytes dropped; full output: %s ...]\n",
                          *dropped, path)
           : spill_err
               ? snprintf(note, sizeof note,
                          "\n[... %" PRIu64 " bytes dropped; the full output could not be kept: %s ...]\n",
                          *dropped, strerror(spill_err))
               : snprintf(note, sizeof note, "\n[... %" PRIu64 " bytes dropped ...]\n", *dropped);
  int rc = rock_output_clean(out, head, h) || rock_buf_append(out, note, nl) ||
           rock_output_clean(out, tail + t0, t);
  return rc ? -ENOMEM : 0;
}

int rock_capture_render(rock_capture_t *c, rock_buf_t *out, uint64_t *dropped) {
  *dropped = 0;
  const char *head = c->head.data ? c->head.data : "";
  if (!c->ring_cap) return rock_output_clean(out, head, c->head.len) ? -ENOMEM : 0;
  /* the tail, in order */
  size_t t = c->ring_len, start = c->ring_len < c->ring_cap ? 0 : c->ring_pos;
  char *tail = malloc(t + 1);
  if (!tail) return -ENOMEM;
  memcpy(tail, c->ring + start, t - start);
  memcpy(tail + (t - start), c->ring, start);
  int rc = rock_capture_render_parts(out, head, c->head.len, tail, t, c->total,
                                     rock_capture_spilled(c) ? c->spill_path : NULL,
                                     c->spill_err, dropped);
  free(tail);
  return rc;
}

int rock_capture_take_raw(rock_capture_t *c, rock_buf_t *out, uint64_t *dropped) {
  *out = c->head;
  c->head = (rock_buf_t){0};
  *dropped = 0;
  if (!c->ring_cap) return 0;
  size_t t = c->ring_len, start = c->ring_len < c->ring_cap ? 0 : c->ring_pos;
  *dropped = c->total - out->len - t;
  if (rock_buf_reserve(out, t)) return -ENOMEM;
  memcpy(out->data + out->len, c->ring + start, t - start);
  memcpy(out->data + out->len + (t - start), c->ring, start);
  out->len += t;
  out->data[out->len] = 0;
  return 0;
}

void rock_capture_free(rock_capture_t *c) {
  rock_buf_free(&c->head);
  free(c->ring);
  c->ring = NULL;
  if (c->spill_fd >= 0) close(c->spill_fd);
  c->spill_fd = -1;
}
