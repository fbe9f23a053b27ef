"""Turn titles into URL slugs."""
import re
import unicodedata


def slugify(text, sep="-"):
    """The lowercase ASCII words of text joined by sep ("Hello, World!" -> "hello-world")."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]", sep, text.lower())
    return text.strip(sep)
