/* test_buf.c: unit tests for c/core's growable buffer (buf.c) and base64
 * codec (base64.c): binary bytes (NUL, invalid UTF-8) round-trip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/buf.h"

#include "check.h"

static void test_buf(void) {
  rock_buf_t b = {0};
  CHECK(rock_buf_append(&b, "", 0) == 0 && b.data && b.data[0] == 0);
  for (int i = 0; i < 10000; i++) rock_buf_puts(&b, "abc");
  CHECK(b.len == 30000 && b.data[b.len] == 0 && b.cap > b.len);
  CHECK(rock_buf_reserve(&b, (size_t)-1 / 2) == -1); /* refused, kept */
  CHECK(b.len == 30000 && !memcmp(b.data + 29997, "abc", 3));
  rock_buf_free(&b);
  CHECK(!b.data && !b.len && !b.cap);
  rock_buf_free(&b); /* twice is fine */
}

/* printf and putu: text that fits the room left, text that does not (the
 * cut first pass must not stay), an empty buffer, numbers at the edges */
static void test_buf_printf(void) {
  rock_buf_t b = {0};
  CHECK(rock_buf_printf(&b, "%s-%d", "a", 1) == 0 && !strcmp(b.data, "a-1") && b.len == 3);
  size_t cap = b.cap;
  char big[1000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  CHECK(rock_buf_printf(&b, "<%s>", big) == 0 && b.cap > cap); /* did not fit */
  CHECK(b.len == 3 + 1001 && !memcmp(b.data, "a-1<x", 5) && !strcmp(b.data + b.len - 2, "x>"));
  CHECK(strlen(b.data) == b.len);
  rock_buf_free(&b);
  CHECK(rock_buf_printf(&b, "%s", "") == 0 && b.data && b.len == 0 && b.data[0] == 0);
  rock_buf_free(&b);
  CHECK(rock_buf_putu(&b, 0) == 0 && rock_buf_puts(&b, " ") == 0 && rock_buf_putu(&b, 18446744073709551615ULL) == 0);
  CHECK(!strcmp(b.data, "0 18446744073709551615"));
  rock_buf_free(&b);
}

static void roundtrip(const char *in, size_t n, const char *want) {
  rock_buf_t e = {0}, d = {0};
  CHECK(rock_base64_encode(&e, in, n) == 0);
  if (!e.data) rock_buf_append(&e, "", 0);
  if (want) CHECK(!strcmp(e.data, want));
  CHECK(rock_base64_decode(&d, e.data, e.len) == 0);
  CHECK(d.len == n && (n == 0 || !memcmp(d.data, in, n)));
  rock_buf_free(&e);
  rock_buf_free(&d);
}

static void test_base64(void) {
  /* RFC 4648 section 10 vectors */
  roundtrip("", 0, "");
  roundtrip("f", 1, "Zg==");
  roundtrip("fo", 2, "Zm8=");
  roundtrip("foo", 3, "Zm9v");
  roundtrip("foob", 4, "Zm9vYg==");
  roundtrip("fooba", 5, "Zm9vYmE=");
  roundtrip("foobar", 6, "Zm9vYmFy");
  char bin[256];
  for (int i = 0; i < 256; i++) bin[i] = (char)i; /* NUL, 0xff, ... */
  roundtrip(bin, sizeof bin, NULL);
  rock_buf_t d = {0};
  CHECK(rock_base64_decode(&d, "Zm9v\nYmFy", 9) == 0 && !strcmp(d.data, "foobar"));
  rock_buf_free(&d);
  CHECK(rock_base64_decode(&d, "Zm9v!", 5) == -2);
  rock_buf_free(&d);
  CHECK(rock_base64_decode(&d, "Zg==Zg", 6) == -2); /* data after padding */
  rock_buf_free(&d);
  /* strict: nothing that is not the encoding of some bytes */
  const char *bad[] = {"Y", "a===", "====", "Zg=", "Zh==", "Zm9=", "Zm9vY", "Zg==="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(rock_base64_decode(&d, bad[i], strlen(bad[i])) == -2);
    rock_buf_free(&d);
  }
  CHECK(rock_base64_decode(&d, "Zg", 2) == 0 && d.len == 1); /* padding is optional */
  rock_buf_free(&d);
}

int main(void) {
  test_buf();
  test_buf_printf();
  test_base64();
  return check_report();
}
