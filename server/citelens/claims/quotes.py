"""Is the model's "quote" in the paper? A quote is shown as the paper's words only if it is.

A model asked for "a short exact quote" may paraphrase, merge two sentences or invent one.
:func:`verified_quote` looks for the quote in the texts the model was given (the abstract,
the passages) after normalising both sides the same way: LaTeX as Unicode text
(``$\\alpha$`` = α), Unicode compatibility forms (ligatures, full-width letters, non-breaking
spaces), accents, curly quotes and dashes, case and whitespace. An ellipsis in the quote
("… the first part … the last part") matches parts in order. Nothing else is forgiven: a
changed word, a number or a negation makes it not the paper's words.
"""

from __future__ import annotations

import re
import unicodedata

from citelens.core.accents import strip_accents
from citelens.core.latextext import latex_to_text

#: A piece of a quote shorter than this is not evidence of anything ("the", "we").
MIN_PIECE = 12
_ELLIPSIS = re.compile(r"\s*(?:\.\s?\.\s?\.|…|\[\s*(?:\.\.\.|…)\s*\])\s*")
_PUNCT = str.maketrans(
    {
        "“": '"',
        "”": '"',
        "„": '"',
        "«": '"',
        "»": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "′": "'",
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "−": "-",
        "\u00ad": None,  # soft hyphen
        "\u200b": None,
    }
)
_SPACES = re.compile(r"\s+")
_SPACE_AROUND = re.compile(r"\s*([^\w\s])\s*")


def normalise(text: str) -> str:
    """``text`` as compared: LaTeX as Unicode, NFKC, no accents, ASCII quotes and dashes,
    lower case, one space between words and none around punctuation."""
    if "\\" in text or "$" in text:
        text = latex_to_text(text)
    text = unicodedata.normalize("NFKC", text).translate(_PUNCT)
    text = strip_accents(text).casefold()
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_AROUND.sub(r"\1", text)


def _pieces(quote: str) -> list[str]:
    raw = [normalise(p) for p in _ELLIPSIS.split(quote)]
    return [p.strip(" \"'.,;:") for p in raw if p.strip(" \"'.,;:")]


def in_text(quote: str, text: str) -> bool:
    """Every part of ``quote`` (split at an ellipsis) occurs in ``text``, in order."""
    pieces = _pieces(quote)
    if not pieces or sum(len(p) for p in pieces) < MIN_PIECE:
        return False
    hay = normalise(text)
    at = 0
    for p in pieces:
        if len(pieces) > 1 and len(p) < MIN_PIECE:
            return False
        found = hay.find(p, at)
        if found < 0:
            return False
        at = found + len(p)
    return True


def verified_quote(quote: str, sources: list[str]) -> str | None:
    """``quote`` (tidied) when it occurs in one of ``sources``, else ``None``."""
    quote = " ".join(quote.split()).strip()
    if not quote:
        return None
    for text in sources:
        if text and in_text(quote, text):
            return quote
    return None
