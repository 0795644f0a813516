"""Free text read off a document or typed by a reviewer (names, numbers): what of it is kept.

Whitespace is collapsed to single spaces (the corpus has tabs and trailing blanks in names), and
characters that print as nothing are removed at the edges: format characters (Unicode Cf: zero-width
space, word joiner, BOM, direction marks), controls (Cc), separators (Z*) and the letters that
are blank by design (Hangul fillers). A name made only of them is no name (`None`), so it is
missing, never an invisible vendor. Inside a name they stay: a zero-width joiner or non-joiner
is part of how some scripts and emoji are written. Pure.
"""

from __future__ import annotations

import unicodedata

_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
# Letters (Lo) and a symbol (So) with no glyph, used to make names look empty.
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def clean(text: str | None) -> str | None:
    """`text` collapsed and without invisible characters at its edges; nothing left → None."""
    if text is None:
        return None
    collapsed = " ".join(text.split())
    if collapsed and (_invisible(collapsed[0]) or _invisible(collapsed[-1])):
        collapsed = _strip_invisible(collapsed)
    return collapsed or None


def _invisible(ch: str) -> bool:
    # isprintable() is False for every C* and Z* character: the category lookup runs only then.
    if ch.isprintable():
        return ch in _BLANK_GLYPHS
    return unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def _strip_invisible(text: str) -> str:
    # The spaces an invisible edge hid ("\u200b Acme") are an edge now too.
    start, end = 0, len(text)
    while start < end and (text[start] == " " or _invisible(text[start])):
        start += 1
    while end > start and (text[end - 1] == " " or _invisible(text[end - 1])):
        end -= 1
    return text[start:end]
