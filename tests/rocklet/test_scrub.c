/* test_scrub.c: the scrub of command output (c/rocklet/output.c:
 * rock_output_clean) gives byte for byte what it gave before it was made
 * fast (issue 18). The reference is the old code, frozen below; the corpus
 * (tests/rocklet/data/scrub/NAME.in, its outputs by the old code in
 * NAME.out) holds invalid UTF-8, CR, ANSI, NUL and fuzz. Also random
 * inputs at every alignment, every prefix of the nasty ones, and the
 * speed of both (printed, not checked).
 *   test_scrub DATA_DIR            the checks
 *   test_scrub --write DATA_DIR    (re)write NAME.out with the reference */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rocklet/output.h"

#include "check.h"

/* ---- the reference: rock_output_clean and rock_utf8_seq as they were ---- */

static size_t old_utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (0x3F >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

static size_t old_ansi_len(const unsigned char *s, size_t n) {
  if (n < 2) return 1;
  size_t i = 2;
  if (s[1] == '[') {
    while (i < n && s[i] >= 0x20 && s[i] <= 0x3F) i++;
    if (i < n && s[i] >= 0x40 && s[i] <= 0x7E) i++;
    return i;
  }
  if (s[1] == ']' || s[1] == 'P' || s[1] == '_') {
    while (i < n) {
      if (s[i] == 0x07) return i + 1;
      if (s[i] == 0x1B && i + 1 < n && s[i + 1] == '\\') return i + 2;
      i++;
    }
    return n;
  }
  if (s[1] == '(' || s[1] == ')') return n < 3 ? n : 3;
  if (s[1] >= 0x40 && s[1] <= 0x7E) return 2;
  return 1;
}

static int old_clean(rock_buf_t *out, const char *in, size_t len) {
  static const char repl[] = "\xEF\xBF\xBD";
  const unsigned char *s = (const unsigned char *)in;
  size_t i = 0, run = 0;
  while (i < len) {
    unsigned char c = s[i];
    size_t skip = 0;
    const char *put = NULL;
    size_t putn = 0;
    if (c >= 0x20 && c < 0x80) {
      i++;
      continue;
    }
    if (c == '\r' && i + 1 < len && s[i + 1] == '\n') {
      skip = 1;
    } else if (c == 0x1B) {
      skip = old_ansi_len(s + i, len - i);
    } else if (c < 0x80) {
      i++;
      continue;
    } else {
      size_t u = old_utf8_seq(s + i, len - i);
      if (u) {
        i += u;
        continue;
      }
      skip = 1;
      put = repl;
      putn = 3;
    }
    if (rock_buf_append(out, in + run, i - run)) return -1;
    if (put && rock_buf_append(out, put, putn)) return -1;
    i += skip;
    run = i;
  }
  return rock_buf_append(out, in + run, len - run);
}

/* ---- helpers ---- */

static rock_buf_t run(int (*fn)(rock_buf_t *, const char *, size_t), const char *in, size_t n) {
  rock_buf_t b = {0};
  if (fn(&b, in, n)) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return b;
}

static int same(const rock_buf_t *a, const rock_buf_t *b) {
  return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rock_buf_t b = {0};
  char chunk[65536];
  size_t r;
  while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) rock_buf_append(&b, chunk, r);
  fclose(f);
  *n = b.len;
  return b.data ? b.data : calloc(1, 1);
}

/* A byte from an alphabet of the bytes the scrub looks at, or any byte. */
static uint64_t rng = 18;
static unsigned rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}
static unsigned char nasty_byte(void) {
  static const unsigned char a[] = {0x0d, 0x0a, 0x1b, '[', ']', 0x07, '\\', '(', ')', 'P',
                                    '_', 0x00, 0x80, 0xbf, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2,
                                    0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 'A', '0', ';', 'm'};
  unsigned r = rnd() % 100;
  if (r < 40) return a[rnd() % sizeof a];
  if (r < 80) return (unsigned char)(0x20 + rnd() % 0x5f); /* ASCII runs */
  return (unsigned char)rnd();
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the best of 5 runs into one buffer (its pages touched once: the scrub's
 * own speed, not the kernel's page faults) */
static double mbps(int (*fn)(rock_buf_t *, const char *, size_t), const char *in, size_t n) {
  double best = 1e9;
  rock_buf_t b = {0};
  for (int r = 0; r < 6; r++) {
    b.len = 0;
    double t = now();
    if (fn(&b, in, n)) exit(2);
    double d = now() - t;
    if (r && d < best) best = d;
  }
  rock_buf_free(&b);
  return n / best / 1e6;
}

/* ---- the checks ---- */

static int is_in(const char *name) {
  size_t l = strlen(name);
  return l > 3 && !strcmp(name + l - 3, ".in");
}

static void corpus(const char *dir, int write) {
  DIR *d = opendir(dir);
  REQUIRE(d != NULL);
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d))) {
    if (!is_in(e->d_name)) continue;
    char path[4096], out_path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(out_path, sizeof out_path, "%.*s.out", (int)strlen(path) - 3, path);
    size_t n, gn;
    char *in = slurp(path, &n);
    REQUIRE(in != NULL);
    rock_buf_t want = run(old_clean, in, n);
    if (write) {
      FILE *f = fopen(out_path, "wb");
      REQUIRE(f != NULL);
      if (want.len) fwrite(want.data, 1, want.len, f);
      fclose(f);
    } else {
      char *golden = slurp(out_path, &gn);
      rock_buf_t g = {.data = golden, .len = golden ? gn : 0};
      rock_buf_t got = run(rock_output_clean, in, n);
      if (!golden || !same(&got, &g) || !same(&want, &g))
        fprintf(stderr, "FAIL corpus %s\n", e->d_name);
      CHECK(golden && same(&want, &g)); /* the reference still gives the .out */
      CHECK(golden && same(&got, &g));  /* and so does the scrub */
      /* every prefix: what an input cut anywhere ends with */
      int prefixes_ok = 1;
      for (size_t k = 0; k <= n && k <= 600; k++) {
        rock_buf_t a = run(old_clean, in, k), b = run(rock_output_clean, in, k);
        prefixes_ok &= same(&a, &b);
        rock_buf_free(&a);
        rock_buf_free(&b);
      }
      CHECK(prefixes_ok);
      rock_buf_free(&got);
      free(golden);
    }
    rock_buf_free(&want);
    free(in);
    files++;
  }
  closedir(d);
  CHECK(files >= 20);
}

static void fuzz(void) {
  char *buf = malloc(4096 + 16);
  int bad = 0;
  for (int t = 0; t < 50000 && bad < 5; t++) {
    size_t off = rnd() % 16, n = rnd() % (t < 40000 ? 96 : 4096);
    char *in = buf + off; /* every alignment */
    for (size_t i = 0; i < n; i++) in[i] = (char)nasty_byte();
    rock_buf_t a = run(old_clean, in, n), b = run(rock_output_clean, in, n);
    if (!same(&a, &b)) {
      bad++;
      fprintf(stderr, "FAIL fuzz case %d (length %zu, offset %zu)\n", t, n, off);
    }
    rock_buf_free(&a);
    rock_buf_free(&b);
  }
  CHECK(bad == 0);
  free(buf);
}

static void speed(void) {
  size_t n = 64 << 20;
  char *ascii = malloc(n), *seq = malloc(n), *utf = malloc(n);
  size_t at = 0;
  for (unsigned i = 1; at + 12 < n; i++) at += (size_t)sprintf(seq + at, "%u\n", i);
  memset(seq + at, '\n', n - at);
  for (size_t i = 0; i < n; i++) ascii[i] = (char)(0x20 + i * 7 % 0x5f);
  for (size_t i = 0; i + 3 <= n; i += 3) memcpy(utf + i, "\xc3\xa9x", 3);
  memset(utf + n - n % 3, 'x', n % 3);
  printf("scrub MB/s (old, new): seq text %.0f %.0f, ASCII %.0f %.0f, UTF-8 %.0f %.0f\n",
         mbps(old_clean, seq, n), mbps(rock_output_clean, seq, n), mbps(old_clean, ascii, n),
         mbps(rock_output_clean, ascii, n), mbps(old_clean, utf, n),
         mbps(rock_output_clean, utf, n));
  free(ascii);
  free(seq);
  free(utf);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--write")) {
    corpus(argv[2], 1);
    return 0;
  }
  REQUIRE(argc == 2);
  corpus(argv[1], 0);
  fuzz();
  if (!getenv("ROCK_TEST_SANITIZED")) speed();
  return check_report();
}
