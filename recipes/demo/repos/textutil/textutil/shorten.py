"""Shorten text to a width, on a word boundary."""


def shorten(text, width, ellipsis="\u2026"):
    """text if it fits in width characters, else its first words and ellipsis."""
    if len(text) <= width:
        return text
    cut = text[: width - len(ellipsis) + 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    else:
        cut = cut[:-1]
    return cut.rstrip() + ellipsis
