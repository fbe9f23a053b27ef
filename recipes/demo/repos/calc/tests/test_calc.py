import pytest

from calc import ParseError, TokenError, evaluate


def test_integers():
    assert evaluate("1 + 2") == 3


def test_precedence():
    assert evaluate("2 + 3 * 4") == 14


def test_parentheses():
    assert evaluate("(2 + 3) * 4") == 20


def test_unary_minus():
    assert evaluate("-3 + 5") == 2


def test_bad_character():
    with pytest.raises(TokenError):
        evaluate("2 $ 3")


def test_unbalanced():
    with pytest.raises(ParseError):
        evaluate("(1 + 2")
