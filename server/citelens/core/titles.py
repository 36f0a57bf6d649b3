"""Titles as compared and as cached: :func:`normalize_title` (what the matcher compares),
:func:`title_key` (the cache key of a title search), :func:`fold` / :func:`words` (a text's
words as the matcher reads them) and :data:`MARKUP_TAG` (a markup tag in a source's title)."""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

from citelens.core.accents import strip_accents
from citelens.core.latextext import plain_ascii, to_unicode

#: A markup tag as sources put them in titles: JATS (``<jats:italic>``), MathML
#: (``<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" display="inline">``, far
#: longer than a short tag), HTML (``<i>``, ``<sub>``). Only tag-shaped text: "a < b" stays.
MARKUP_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s+[^<>]*)?/?>")
_WORD_SPLIT = re.compile(r"[\W_]+")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b"), "-")
_SPELLING = {
    "colour": "color",
    "centre": "center",
    "centres": "centers",
    "fibre": "fiber",
    "fibres": "fibers",
    "metre": "meter",
    "litre": "liter",
    "theatre": "theater",
    "modelling": "modeling",
    "modelled": "modeled",
    "labelled": "labeled",
    "labelling": "labeling",
    "travelling": "traveling",
    "signalling": "signaling",
    "tunnelling": "tunneling",
    "channelling": "channeling",
    "cancelled": "canceled",
    "catalogue": "catalog",
    "analogue": "analog",
    "dialogue": "dialog",
    "defence": "defense",
    "licence": "license",
    "offence": "offense",
    "grey": "gray",
    "aluminium": "aluminum",
    "programme": "program",
    "programmes": "programs",
    "sulphur": "sulfur",
    "aeroplane": "airplane",
    "oestrogen": "estrogen",
    "haemoglobin": "hemoglobin",
    "anaemia": "anemia",
    "paediatric": "pediatric",
    "tumour": "tumor",
    "tumours": "tumors",
    "judgement": "judgment",
    "ageing": "aging",
    "artefact": "artifact",
    "artefacts": "artifacts",
}
_SUFFIXES = (
    ("isations", "izations"),
    ("isation", "ization"),
    ("ising", "izing"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("isers", "izers"),
    ("iser", "izer"),
    ("ise", "ize"),
    ("ysing", "yzing"),
    ("ysed", "yzed"),
    ("yser", "yzer"),
    ("yse", "yze"),
    ("ours", "ors"),
    ("oured", "ored"),
    ("ouring", "oring"),
    ("ourite", "orite"),
    ("our", "or"),
)


@lru_cache(maxsize=65536)
def _spelling(token: str) -> str:
    if token in _SPELLING:
        return _SPELLING[token]
    if len(token) >= 6:
        for brit, amer in _SUFFIXES:
            if token.endswith(brit):
                return token[: -len(brit)] + amer
    return token


def fold(text: str) -> str:
    """``text`` as the matcher compares words: Unicode, no accents, casefolded."""
    return strip_accents(to_unicode(unicodedata.normalize("NFKC", text))).casefold()


def words(text: str) -> list[str]:
    """The words of :func:`fold`\\ ed ``text`` (punctuation and underscores split)."""
    # plain ASCII: fold would change only case, spacing and punctuation (split away here)
    return [w for w in _WORD_SPLIT.split(text.lower() if plain_ascii(text) else fold(text)) if w]


@lru_cache(maxsize=65536)
def normalize_title(text: str) -> str:
    """A title reduced for comparison: no markup, accents, case, punctuation; US spelling.

    ``"{BERT}: Pre-training"`` and ``"BERT — pre‐training"`` give the same string.
    """
    if not text:
        return ""
    if "<" in text:
        text = MARKUP_TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)  # "&amp;" is "&", not the word "amp"
    text = text.translate(_DASHES)
    return " ".join(map(_spelling, words(text)))


_NON_WORD = re.compile(r"[^\w\s]")
_WS = re.compile(r"\s+")


@lru_cache(maxsize=4096)  # every title tier of an entry asks for the same title
def title_key(title: str) -> str:
    """Case, accents, braces, punctuation and spacing removed: the cache key of a title search."""
    text = strip_accents(title).casefold().replace("{", "").replace("}", "")
    return _WS.sub(" ", _NON_WORD.sub(" ", text)).strip()
