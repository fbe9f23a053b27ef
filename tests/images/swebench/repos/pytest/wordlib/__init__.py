"""wordlib: counting words (a pytest-style repo for rock's tests)."""


def count(text):
    return len(text.split(" "))
