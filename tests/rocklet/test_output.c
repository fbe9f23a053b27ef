/* test_output.c: unit tests for the rocklet's output cleaning and capping
 * (c/rocklet/output.c) and its end-of-command markers (c/rocklet/marker.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rocklet/marker.h"
#include "rocklet/capture.h"
#include "rocklet/output.h"

#include "check.h"

static char *clean(const char *in, size_t n) {
  rock_buf_t b = {0};
  rock_output_clean(&b, in, n);
  if (!b.data) rock_buf_append(&b, "", 0);
  return b.data;
}

static void test_clean(void) {
  char *s;
  s = clean("a\r\nb\r\n", 6);
  CHECK(!strcmp(s, "a\nb\n"));
  free(s);
  s = clean("lone\rcr", 7); /* progress bars keep their CR */
  CHECK(!strcmp(s, "lone\rcr"));
  free(s);
  s = clean("\x1b[31mred\x1b[0m \x1b]0;title\x07ok", 25);
  CHECK(!strcmp(s, "red ok"));
  free(s);
  s = clean("x\x1b[?25ly", 8);
  CHECK(!strcmp(s, "xy"));
  free(s);
  s = clean("caf\xc3\xa9 \xe2\x9c\x93", 10); /* valid UTF-8 untouched */
  CHECK(!strcmp(s, "caf\xc3\xa9 \xe2\x9c\x93"));
  free(s);
  s = clean("a\xff" "b", 3);
  CHECK(!strcmp(s, "a\xef\xbf\xbd" "b"));
  free(s);
  s = clean("\xc0\xaf", 2); /* overlong '/' */
  CHECK(!strcmp(s, "\xef\xbf\xbd\xef\xbf\xbd"));
  free(s);
  s = clean("\xed\xa0\x80", 3); /* a surrogate */
  CHECK(strstr(s, "\xef\xbf\xbd") && !strstr(s, "\xed"));
  free(s);
  s = clean("end\xe2\x9c", 5); /* cut sequence at the end */
  CHECK(!strcmp(s, "end\xef\xbf\xbd\xef\xbf\xbd"));
  free(s);
  s = clean("nul\0in", 6);
  CHECK(!memcmp(s, "nul\0in", 6));
  free(s);
}

static void add_lines(rock_capture_t *c, int n, int chunk) {
  rock_buf_t all = {0};
  for (int i = 0; i < n; i++) {
    char line[16];
    int len = snprintf(line, sizeof line, "line %05d\n", i);
    rock_buf_append(&all, line, len);
  }
  for (size_t off = 0; off < all.len; off += chunk)
    rock_capture_add(c, all.data + off, all.len - off < (size_t)chunk ? all.len - off : (size_t)chunk);
  rock_buf_free(&all);
}

static void test_capture(void) {
  char dir[] = "/tmp/rock-test-capture-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/out.1", dir);
  rock_buf_t b = {0}, b2 = {0};
  uint64_t dropped;
  /* under the cap: whole, no file */
  rock_capture_t c;
  rock_capture_init(&c, 1 << 20, path);
  add_lines(&c, 10000, 4096); /* 110000 B */
  CHECK(rock_capture_render(&c, &b, &dropped) == 0);
  CHECK(dropped == 0 && b.len == 110000 && !rock_capture_spilled(&c));
  CHECK(access(path, F_OK) != 0);
  rock_capture_free(&c);
  rock_buf_free(&b);
  /* past the cap: head and tail kept, everything in the spill file */
  rock_capture_init(&c, 1000, path);
  add_lines(&c, 10000, 4096);
  CHECK(rock_capture_render(&c, &b, &dropped) == 0);
  CHECK(c.total == 110000);
  CHECK(dropped == 110000 - 1000);
  CHECK(!strncmp(b.data, "line 00000\n", 11));
  CHECK(strstr(b.data, "bytes dropped; full output: "));
  CHECK(strstr(b.data, path));
  CHECK(strstr(b.data, "line 09999\n"));
  CHECK(b.len < 1000 + 300);
  CHECK(rock_capture_spilled(&c));
  rock_capture_free(&c);
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size == 110000);
  /* the same bytes a byte at a time: the same result */
  rock_capture_init(&c, 1000, path);
  add_lines(&c, 10000, 1);
  CHECK(rock_capture_render(&c, &b2, &dropped) == 0);
  CHECK(b.len == b2.len && !memcmp(b.data, b2.data, b.len));
  rock_capture_free(&c);
  rock_buf_free(&b);
  rock_buf_free(&b2);
  /* no spill path: the note says only what was dropped */
  rock_capture_init(&c, 100, NULL);
  add_lines(&c, 100, 7);
  CHECK(rock_capture_render(&c, &b, &dropped) == 0);
  CHECK(dropped == 1100 - 100 && strstr(b.data, "bytes dropped ...]") && !strstr(b.data, "full output"));
  rock_capture_free(&c);
  rock_buf_free(&b);
  /* the seam never splits a character into U+FFFD */
  rock_capture_init(&c, 101, NULL);
  for (int i = 0; i < 1000; i++) rock_capture_add(&c, "\xe2\x9c\x93", 3);
  CHECK(rock_capture_render(&c, &b, &dropped) == 0);
  CHECK(!strstr(b.data, "\xef\xbf\xbd"));
  rock_capture_free(&c);
  rock_buf_free(&b);
  unlink(path);
  rmdir(dir);
}

static unsigned long got_seq;
static int got_status, got_count;
static rock_buf_t got_data;
static void on_mark(void *d, unsigned long seq, int status) {
  (void)d;
  got_seq = seq;
  got_status = status;
  got_count++;
}
static void on_out(void *d, const char *p, size_t n) {
  (void)d;
  rock_buf_append(&got_data, p, n);
}
static void feed(rock_marker_t *m, const char *p, size_t n) {
  rock_marker_feed(m, p, n, on_out, on_mark, NULL);
}
static void reset(void) {
  got_count = 0;
  got_data.len = 0;
}

/* issue 7, hostile round: a spill that hits a full disk (here the file
 * size limit) left a partial file nobody was told of, holding the disk
 * full until the session closed; it is removed, and the note says the full
 * output could not be kept. */
static void test_spill_full_disk(void) {
  char dir[] = "/tmp/rock-test-capture-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/out.1", dir);
  struct rlimit old, small = {8192, 8192};
  getrlimit(RLIMIT_FSIZE, &old);
  small.rlim_max = old.rlim_max;
  signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
  CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
  rock_capture_t c;
  rock_capture_init(&c, 1000, path);
  add_lines(&c, 20000, 4096);
  CHECK(!rock_capture_spilled(&c));
  CHECK(access(path, F_OK) != 0); /* no partial file left */
  rock_buf_t b = {0};
  uint64_t dropped;
  CHECK(rock_capture_render(&c, &b, &dropped) == 0);
  CHECK(b.data && strstr(b.data, "could not be kept") != NULL);
  rock_buf_free(&b);
  rock_capture_free(&c);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, SIG_DFL);
  CHECK(rmdir(dir) == 0);
}

static char *slurp_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rock_buf_t b = {0};
  char chunk[8192];
  size_t r;
  while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) rock_buf_append(&b, chunk, r);
  fclose(f);
  *n = b.len;
  return b.data ? b.data : calloc(1, 1);
}

/* Bytes read straight into a capture (room + commit, as /execute reads
 * its pipes) end as rock_capture_add leaves them: the same head, tail,
 * total, render, raw bytes and spill file, across the cap and not. */
static void test_capture_direct(void) {
  char dir[] = "/tmp/rock-test-capture-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char pa[PATH_MAX], pb[PATH_MAX];
  snprintf(pa, sizeof pa, "%s/a", dir);
  snprintf(pb, sizeof pb, "%s/b", dir);
  unsigned seed = 7;
  int bad = 0;
  for (int t = 0; t < 300; t++) {
    size_t cap = 64 + (size_t)(t * 37 % 5000), total = (size_t)(t * 101 % 20000);
    char *data = malloc(total + 1);
    for (size_t i = 0; i < total; i++) data[i] = (char)(seed = seed * 1103515245 + 12345) ;
    rock_capture_t a, b;
    rock_capture_init(&a, cap, t % 2 ? pa : NULL);
    rock_capture_init(&b, cap, t % 2 ? pb : NULL);
    for (size_t off = 0; off < total;) {
      size_t n = 1 + (seed = seed * 1103515245 + 12345) % 3000;
      if (n > total - off) n = total - off;
      rock_capture_add(&a, data + off, n);
      char *room = rock_capture_room(&b, 4096);
      if (room) {
        memcpy(room, data + off, n); /* as read(2) would put them */
        rock_capture_commit(&b, n);
      } else {
        rock_capture_add(&b, data + off, n);
      }
      off += n;
    }
    rock_buf_t ra = {0}, rb = {0}, xa = {0}, xb = {0};
    uint64_t da, db, ya, yb;
    rock_capture_render(&a, &ra, &da);
    rock_capture_render(&b, &rb, &db);
    /* the renders differ only in the spill file's name in the note */
    int ok = a.total == b.total && da == db && ra.len == rb.len &&
             (t % 2 || !memcmp(ra.data ? ra.data : "", rb.data ? rb.data : "", ra.len));
    ok &= rock_capture_spilled(&a) == rock_capture_spilled(&b);
    rock_capture_take_raw(&a, &xa, &ya);
    rock_capture_take_raw(&b, &xb, &yb);
    ok &= ya == yb && xa.len == xb.len && !memcmp(xa.data ? xa.data : "", xb.data ? xb.data : "", xa.len);
    if (t % 2 && a.ring_cap) { /* both spilled every byte */
      size_t na = 0, nb = 0;
      char *fa = slurp_file(pa, &na), *fb = slurp_file(pb, &nb);
      ok &= fa && fb && na == total && nb == total && !memcmp(fa, data, total) &&
            !memcmp(fb, data, total);
      free(fa);
      free(fb);
    }
    if (!ok && bad++ < 3) fprintf(stderr, "FAIL direct capture case %d (cap %zu, %zu bytes)\n", t, cap, total);
    rock_buf_free(&ra);
    rock_buf_free(&rb);
    rock_buf_free(&xa);
    rock_buf_free(&xb);
    rock_capture_free(&a);
    rock_capture_free(&b);
    free(data);
  }
  CHECK(bad == 0);
  unlink(pa);
  unlink(pb);
  CHECK(rmdir(dir) == 0);
}

static void test_marker(void) {
  rock_marker_t m;
  rock_marker_init(&m, "0123456789abcdef01234567");
  const char *good = "noise\x1eRK0123456789abcdef01234567:42:3\x1e";
  reset();
  feed(&m, good, strlen(good));
  CHECK(got_count == 1 && got_seq == 42 && got_status == 3);
  CHECK(got_data.len == 5 && !memcmp(got_data.data, "noise", 5)); /* the output, not the marker */
  /* split across reads, byte by byte */
  reset();
  for (const char *p = good; *p; p++) feed(&m, p, 1);
  CHECK(got_count == 1 && got_seq == 42 && got_data.len == 5);
  /* wrong nonce, garbage: no marker, and every byte is output */
  const char *bad = "\x1eRKffffffffffffffffffffffff:1:0\x1e\x1e\x1eRK0123456789abcdef01234567:x:0\x1e";
  reset();
  feed(&m, bad, strlen(bad));
  feed(&m, "z", 1); /* the last RS may open a marker until this */
  CHECK(got_count == 0);
  CHECK(got_data.len == strlen(bad) + 1 && !memcmp(got_data.data, bad, strlen(bad)));
  /* a stray RS right before a marker, and an overlong candidate */
  reset();
  const char *stray = "a\x1e\x1eRK0123456789abcdef01234567:5:0\x1e" "b";
  feed(&m, stray, strlen(stray));
  CHECK(got_count == 1 && got_seq == 5);
  CHECK(got_data.len == 3 && !memcmp(got_data.data, "a\x1e" "b", 3));
  char big[300];
  memset(big, '1', sizeof big);
  big[0] = 0x1e;
  memcpy(big + 1, "RK0123456789abcdef01234567:", 27);
  reset();
  feed(&m, big, sizeof big);
  feed(&m, good + 5, strlen(good) - 5);
  CHECK(got_count == 1 && got_data.len == sizeof big);
  /* negative status and the command text */
  const char *neg = "\x1eRK0123456789abcdef01234567:7:-1\x1e";
  feed(&m, neg, strlen(neg));
  CHECK(got_seq == 7 && got_status == -1);
  char cmd[256];
  rock_marker_command(&m, cmd, sizeof cmd, 9, "$?", 253);
  CHECK(strstr(cmd, "\\036RK0123456789abcdef01234567:9:%d\\036"));
  CHECK(strstr(cmd, ">&253"));
  CHECK(!strchr(cmd, 0x1e)); /* the sent line never holds the raw byte */
  rock_buf_free(&got_data);
}

int main(void) {
  test_clean();
  test_capture();
  test_spill_full_disk();
  test_capture_direct();
  test_marker();
  return check_report();
}
