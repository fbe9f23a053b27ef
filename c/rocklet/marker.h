/* marker.h: how a bash session says "command N ended with status S".
 * After each command the rocklet has bash print
 *   RS "RK" nonce ":" seq ":" status RS          (RS = byte 0x1E)
 * into the session's output pipe, right after the command's own output.
 * The nonce is secret per session, so a command cannot forge an end; the
 * line bash is sent spells RS as \036, so even an echo of it would not
 * match. The scanner splits the stream into output and markers, copes with
 * a marker split across reads, and passes every other byte through as
 * output (a stray RS included). */
#ifndef ROCK_ROCKLET_MARKER_H
#define ROCK_ROCKLET_MARKER_H

#include <stddef.h>

#define ROCK_NONCE_LEN 24

typedef struct {
  char nonce[ROCK_NONCE_LEN + 1];
  char pend[96]; /* bytes after an opening RS, while they may be a marker */
  size_t plen;
  int open;
} rock_marker_t;

typedef void (*rock_marker_fn)(void *data, unsigned long seq, int status);
typedef void (*rock_marker_data_fn)(void *data, const char *p, size_t n);

void rock_marker_init(rock_marker_t *m, const char *nonce);
/* Feed bytes of the stream: output bytes go to on_data, in order; on_mark
 * is called once per complete, matching marker, between them. */
void rock_marker_feed(rock_marker_t *m, const char *p, size_t n,
                      rock_marker_data_fn on_data, rock_marker_fn on_mark,
                      void *data);
/* Write the shell code that prints the marker for seq to fd, with status
 * taken from the shell expression status_expr (e.g. "$?"); it calls the
 * printf builtin whatever aliases or functions the session defined.
 * Returns length. */
int rock_marker_command(const rock_marker_t *m, char *out, size_t cap,
                        unsigned long seq, const char *status_expr, int fd);

#endif
