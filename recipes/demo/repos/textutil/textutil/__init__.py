"""textutil: small text helpers."""
from .shorten import shorten
from .slug import slugify

__all__ = ["shorten", "slugify"]
