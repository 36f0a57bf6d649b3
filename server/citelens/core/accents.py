"""Accents: :func:`strip_accents`, the one accent folding (letters without combining marks,
``ø``/``ł``/``ß``-like letters spelled out in ASCII)."""

from __future__ import annotations

import unicodedata


def strip_accents(s: str) -> str:
    """``s`` without combining marks, with ``ø``/``ł``/``ß``-like letters spelled out in ASCII."""
    if s.isascii():  # nothing to decompose or spell out (most titles): skip the walk
        return s
    try:
        decomposed = unicodedata.normalize("NFKD", s.translate(_LETTERS))
        return "".join(c for c in decomposed if not unicodedata.combining(c))
    except Exception:  # pragma: no cover - defensive
        return s


_LETTERS = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ı": "i",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "Ð": "D",
        "ħ": "h",
        "Ħ": "H",
    }
)
