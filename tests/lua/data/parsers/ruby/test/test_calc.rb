require "minitest/autorun"

class TestCalc < Minitest::Test
  def test_adds; assert_equal 2, 1 + 1; end
  def test_subtracts; assert_equal 1, 1 - 1; end
  def test_errors; raise "boom"; end
  def test_skips; skip "not here"; end
  define_method("test_: static files should be read. ") { assert true }
end
