"""Split an arithmetic expression into tokens."""

OPERATORS = "+-*/()"


class TokenError(ValueError):
    """Raised for a character that starts no token."""


def tokenize(text):
    """Return the tokens of text: numbers (as strings) and operators."""
    tokens = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            tokens.append(text[i:j])
            i = j
        elif ch in OPERATORS:
            tokens.append(ch)
            i += 1
        else:
            raise TokenError(f"unexpected character {ch!r} at {i}")
    return tokens
