#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
TEST_CASE("udt <conversions> & more") {
  int x = 1;
  SUBCASE("adds") { CHECK(x + 1 == 2); }
  SUBCASE("subtracts") { CHECK(x - 1 == 1); CHECK(x == 1); }
  SUBCASE("outer") {
    SUBCASE("inner") { CHECK(x == 1); }
  }
}
TEST_CASE("no subcases") { CHECK(true); }
