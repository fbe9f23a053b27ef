"""Evaluate arithmetic expressions: + - * /, unary minus, parentheses."""
from .tokens import tokenize


class ParseError(ValueError):
    """Raised for a malformed expression."""


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        if tok is None:
            raise ParseError("unexpected end of expression")
        self.pos += 1
        return tok

    def expr(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            if self.take() == "+":
                value += self.term()
            else:
                value -= self.term()
        return value

    def term(self):
        value = self.factor()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value *= self.factor()
            else:
                value /= self.factor()
        return value

    def factor(self):
        tok = self.take()
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise ParseError("expected )")
            return value
        if tok == "-":
            return -self.factor()
        return self.number(tok)

    def number(self, tok):
        if not tok.isdigit():
            raise ParseError(f"expected a number, got {tok!r}")
        return int(tok)


def evaluate(text):
    """Return the value of the arithmetic expression text."""
    parser = _Parser(tokenize(text))
    value = parser.expr()
    if parser.peek() is not None:
        raise ParseError(f"unexpected {parser.peek()!r}")
    return value
