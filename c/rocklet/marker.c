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

/* Could c, appended to pend, still be part of our marker? */
static int may_be_marker(const rock_marker_t *m, char c) {
  size_t nl = strlen(m->nonce), at = m->plen;
  if (at < 2) return c == "RK"[at];
  if (at < 2 + nl) return c == m->nonce[at - 2];
  if (at == 2 + nl) return c == ':';
  return (c >= '0' && c <= '9') || c == ':' || c == '-';
}

/* pend holds a whole candidate: is it "RK<nonce>:<seq>:<status>"? */
static int parse(rock_marker_t *m, unsigned long *seq, int *status) {
  size_t nl = strlen(m->nonce);
  m->pend[m->plen] = 0;
  if (m->plen < 2 + nl + 4) return 0;
  char *end;
  const char *p = m->pend + 3 + nl;
  *seq = strtoul(p, &end, 10);
  if (end == p || *end != ':') return 0;
  p = end + 1;
  long st = strtol(p, &end, 10);
  if (end == p || *end) return 0;
  *status = (int)st;
  return 1;
}

/* The candidate was not a marker: it is output after all. */
static void give_back(rock_marker_t *m, rock_marker_data_fn on_data, void *data) {
  static const char rs = RS;
  on_data(data, &rs, 1);
  if (m->plen) on_data(data, m->pend, m->plen);
  m->open = 0;
  m->plen = 0;
}

void rock_marker_feed(rock_marker_t *m, const char *p, size_t n,
                      rock_marker_data_fn on_data, rock_marker_fn on_mark,
                      void *data) {
  size_t run = 0; /* start of the output bytes not yet passed on */
  for (size_t i = 0; i < n; i++) {
    if (!m->open) {
      const char *rs = memchr(p + i, RS, n - i); /* skip output fast */
      if (!rs) break;
      i = rs - p;
      if (i > run) on_data(data, p + run, i - run);
      m->open = 1;
      m->plen = 0;
      run = i + 1;
      continue;
    }
    char c = p[i];
    if (c == RS) { /* the candidate ends here */
      unsigned long seq;
      int status;
      if (parse(m, &seq, &status)) {
        m->open = 0;
        m->plen = 0;
        on_mark(data, seq, status);
      } else {
        give_back(m, on_data, data);
        m->open = 1; /* and this RS may open the real one */
      }
      run = i + 1;
      continue;
    }
    if (m->plen + 1 >= sizeof m->pend || !may_be_marker(m, c)) {
      give_back(m, on_data, data);
      run = i; /* c is output too */
      continue;
    }
    m->pend[m->plen++] = c;
    run = i + 1;
  }
  if (!m->open && run < n) on_data(data, p + run, n - run);
}

int rock_marker_command(const rock_marker_t *m, char *out, size_t cap,
                        unsigned long seq, const char *status_expr, int fd) {
  return snprintf(out, cap, "\\builtin printf '\\036RK%s:%lu:%%d\\036' \"%s\" >&%d",
                  m->nonce, seq, status_expr, fd);
}
