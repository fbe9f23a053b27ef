import pytest


def test_ok():
    pass


def test_bad():
    assert 1 == 2, "one - two"


@pytest.mark.skip(reason="not now")
def test_skip():
    pass


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed")
def test_xpass():
    pass


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x == 1


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_error(broken):
    pass
