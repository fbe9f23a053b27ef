/* test_jsonstr.c: c/core/jsonstr.c writes the JSON string literal jansson
 * writes (json_dumps of json_stringn, compact), byte for byte, for every
 * byte that needs an escape, at every alignment, and for random valid
 * UTF-8; the length it tells is the length it writes. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonstr.h"

#include "check.h"

static uint64_t rng = 18;
static unsigned rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

/* 1 if ours equals jansson's for s[0..n) */
static int same_as_jansson(const char *s, size_t n) {
  json_t *a = json_array();
  json_array_append_new(a, json_stringn(s, n));
  char *j = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY); /* ["..."] */
  json_decref(a);
  if (!j) return 0;
  size_t want = strlen(j) - 2, len = rock_json_quote_len(s, n);
  char *o = malloc(len + 1), *end = rock_json_quote(o, s, n);
  int ok = (size_t)(end - o) == len && len == want && !memcmp(o, j + 1, len);
  free(o);
  free(j);
  return ok;
}

int main(void) {
  CHECK(same_as_jansson("", 0));
  CHECK(same_as_jansson("plain", 5));
  char all[128];
  for (int i = 0; i < 128; i++) all[i] = (char)i; /* every ASCII byte, NUL first */
  CHECK(same_as_jansson(all, 128));
  CHECK(same_as_jansson("h\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x8e\x89 \"q\" \\ /", 19));
  /* one special byte at every place in runs longer than 16 */
  char buf[80];
  int ok = 1;
  for (int c = 0; c < 0x20 + 2; c++) {
    char sp = c < 0x20 ? (char)c : c == 0x20 ? '"' : '\\';
    for (int at = 0; at < 70; at++) {
      memset(buf, 'x', sizeof buf);
      buf[at] = sp;
      ok &= same_as_jansson(buf + (at % 7), 70);
    }
  }
  CHECK(ok);
  /* random text of ASCII, escapes and valid multi-byte sequences */
  static const char *pieces[] = {"a", "Z", " ", "\"", "\\", "\n", "\t", "\r", "\x01", "\x1f",
                                 "\x7f", "\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9f\x8e\x89", "/",
                                 "0123456789abcdef"};
  ok = 1;
  char *s = malloc(4096 * 4);
  for (int t = 0; t < 5000; t++) {
    size_t n = 0, k = rnd() % 300;
    for (size_t i = 0; i < k; i++) {
      const char *p = pieces[rnd() % (sizeof pieces / sizeof *pieces)];
      size_t pl = strlen(p);
      memcpy(s + n, p, pl);
      n += pl;
    }
    ok &= same_as_jansson(s, n);
  }
  free(s);
  CHECK(ok);
  return check_report();
}
