from ratlib import mean


def test_mean_ints():
    assert mean([2, 4]) == 3
