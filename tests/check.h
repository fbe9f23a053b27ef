/* check.h: the C tests' assertions. CHECK counts a passed or failed
 * condition and goes on; REQUIRE stops the test at a failure (when what
 * follows cannot run without it). check_report() prints the closing line
 * ctest and CI read ("N passed, N failed") and gives the exit status. */
#ifndef ROCK_TESTS_CHECK_H
#define ROCK_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int passed, failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) passed++;                                                        \
    else {                                                                     \
      failed++;                                                                \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
    }                                                                          \
  } while (0)

#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (cond) passed++;                                                        \
    else {                                                                     \
      failed++;                                                                \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
      printf("%d passed, %d failed\n", passed, failed);                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static inline int check_report(void) {
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

#endif
