require "test/unit"

class TestUnitCalc < Test::Unit::TestCase
  def test_adds; assert_equal 2, 1 + 1; end
  def test_subtracts; assert_equal 1, 1 - 1; end
  def test_errors; raise "boom"; end
  def test_omits; omit "not here"; end
  test "password with special chars" do
    assert true
  end
end
