"""calc: evaluate arithmetic expressions."""
from .evaluate import ParseError, evaluate
from .tokens import TokenError, tokenize

__all__ = ["evaluate", "tokenize", "ParseError", "TokenError"]
