/* marker.c: printing and finding end-of-command markers (see marker.h). */
#include "marker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS 0x1E

void rock_marker_init(rock_marker_t *m, const char *nonce) {
  memset(m, 0, sizeof *m);
  snprintf(m->nonce, sizeof m->nonce, "%s", nonce);
}

static void parse(rock_marker_t *m, rock_marker_fn fn, void *data) {
  size_t nl = strlen(m->nonce);
  m->pend[m->plen] = 0;
  if (m->plen < 2 + nl + 4 || memcmp(m->pend, "RK", 2) ||
      memcmp(m->pend + 2, m->nonce, nl) || m->pend[2 + nl] != ':')
    return;
  char *end;
  const char *p = m->pend + 3 + nl;
  unsigned long seq = strtoul(p, &end, 10);
  if (end == p || *end != ':') return;
  p = end + 1;
  long st = strtol(p, &end, 10);
  if (end == p || *end) return;
  fn(data, seq, (int)st);
}

void rock_marker_feed(rock_marker_t *m, const char *p, size_t n,
                      rock_marker_fn fn, void *data) {
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (c == RS) {
      if (m->open && m->plen) {
        parse(m, fn, data);
        m->open = 0;
      } else {
        m->open = 1; /* an empty RS RS pair restarts: the second opens */
      }
      m->plen = 0;
      continue;
    }
    if (!m->open) {
      const char *rs = memchr(p + i, RS, n - i); /* skip noise fast */
      if (!rs) return;
      i = rs - p - 1;
      continue;
    }
    if (m->plen + 1 >= sizeof m->pend) {
      m->open = 0; /* too long to be ours */
      m->plen = 0;
      continue;
    }
    m->pend[m->plen++] = c;
  }
}

int rock_marker_command(const rock_marker_t *m, char *out, size_t cap,
                        unsigned long seq, const char *status_expr) {
  return snprintf(out, cap, "printf '\\036RK%s:%lu:%%d\\036\\n' \"%s\"",
                  m->nonce, seq, status_expr);
}
