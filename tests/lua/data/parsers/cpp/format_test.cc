#include <gtest/gtest.h>
#include <stdexcept>
TEST(FormatTest, Adds) { EXPECT_EQ(2, 1 + 1); }
TEST(FormatTest, Subtracts) { EXPECT_EQ(1, 1 - 1); }
TEST(FormatTest, Skips) { GTEST_SKIP() << "not here"; }
TEST(FormatTest, Throws) { throw std::runtime_error("boom"); }
class Sized : public ::testing::TestWithParam<int> {};
TEST_P(Sized, IsSmall) { EXPECT_LT(GetParam(), 2); }
INSTANTIATE_TEST_SUITE_P(Range, Sized, ::testing::Values(1, 3));
