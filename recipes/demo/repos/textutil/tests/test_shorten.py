from textutil import shorten


def test_fits():
    assert shorten("short", 10) == "short"


def test_word_boundary():
    assert shorten("a long sentence", 8) == "a long\u2026"


def test_one_long_word():
    assert shorten("abcdefghij", 5) == "abcd\u2026"
