import iolib


def test_join_two():
    assert iolib.join("a", "b") == "a-b"
