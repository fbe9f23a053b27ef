import wordlib


def test_one_word():
    assert wordlib.count("hello") == 1
