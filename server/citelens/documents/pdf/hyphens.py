"""Hyphens printed at line ends, which the layout cannot judge: ``gen-``/``eralised`` (a word
split) or ``edge-``/``exchangeable`` (a compound)? ``layout.join_lines`` marks the place
with :data:`SOFT_BREAK`; the fields keep the mark in the title; what is shown and searched
reads it one way (:func:`one_reading`); the verdict reads it against the candidates' titles
(``verify/match/printed.title_reading``), never a dictionary.
"""

from __future__ import annotations

import re

#: Where a hyphen ended a printed line between two letters: ``gen-``/``eralised`` (a word
#: split) or ``edge-``/``exchangeable`` (a compound)? The layout cannot tell; the text keeps
#: the place (U+00AD) and the verifier reads it against the candidates' titles.
SOFT_BREAK = "\u00ad"


def hyphen_readings(text: str) -> tuple[str, str]:
    """The two readings of a text with :data:`SOFT_BREAK` marks: each word joined
    (``generalised``), and each hyphen kept (``edge-exchangeable``)."""
    return text.replace(SOFT_BREAK, ""), text.replace(SOFT_BREAK, "-")


def one_reading(text: str) -> str:
    """``text`` with each :data:`SOFT_BREAK` read one way, before the candidates are known:
    dropped before a lower-case letter ("gen-eralised"), kept before anything else; what a
    reader shows and searches. The verdict reads both against the candidates' titles
    (``verify/match/printed.title_reading``)."""
    if SOFT_BREAK not in text:
        return text
    return _SOFT.sub(lambda m: m.group(1) if m.group(1).islower() else "-" + m.group(1), text)


_SOFT = re.compile(SOFT_BREAK + "(.?)")


def marked(reading: str, text: str) -> str:
    """``reading`` (a part of ``one_reading(text)``) as ``text`` prints it, its line-end
    hyphens marked again; ``reading`` itself when it cannot be found."""
    if SOFT_BREAK not in text or not reading:
        return reading
    pattern = f"{SOFT_BREAK}?".join(f"[-{SOFT_BREAK}]" if c == "-" else re.escape(c) for c in reading)
    m = re.search(pattern, text)
    return m.group(0) if m else reading
