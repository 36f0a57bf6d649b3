"""Is the text at a citation a claim a paper can support? A clause with a verb and content words.

A citation after a full stop, in a table cell, after a list of software names, in a
heading, a caption or math leaves text no paper can support or contradict (".", "DDPM",
"PyTorch, JAX and NumPy", "Related work"); a verdict on it would look more certain than it
is. :func:`no_claim_reason` says why there is nothing to check, or ``None`` for a claim.
No part-of-speech tagger: a verb is an auxiliary or modal, a verb of a closed list of
the verbs scientific writing uses, or a lower-case word with a verb ending (-ed, -es,
-izes/-ises, -ates, -ifies); names and acronyms are written with capitals.
"""

from __future__ import annotations

import re

from citelens.claims.structure import CAPTION, HEADING, MATH, TABLE_CELL, place_of
from citelens.claims.words import STOP_WORDS
from citelens.core.dockind import DocKind
from citelens.core.model import Span

NO_CLAIM = "No claim to check here"

_AUX = frozenset(
    """is are was were be been being am has have had do does did can could may might must
    shall should will would isn't aren't wasn't weren't hasn't haven't doesn't don't didn't
    can't cannot won't""".split()
)
#: Verbs of scientific prose (base forms; -s, -ed and -ing forms are derived).
_VERBS = frozenset(
    """show prove find propose present introduce describe report demonstrate suggest
    indicate reveal observe use apply employ adopt achieve obtain reach improve outperform
    increase decrease reduce lower raise cause affect lead result require allow enable make
    provide offer give yield produce generate learn train fit estimate predict model compute
    measure detect identify classify compare evaluate assess test validate confirm support
    contradict extend generalize generalise build design develop implement solve address
    tackle study analyze analyse investigate explore examine consider discuss argue claim
    note state define denote represent correspond depend relate associate correlate bound
    converge diverge minimize minimise maximize maximise optimize optimise approximate sample
    rely focus remain become seem appear work perform behave operate run scale fail succeed
    exceed surpass match beat mitigate prevent avoid limit restrict constrain contain include
    involve comprise consist hold keep take get set put let see know think believe expect
    follow precede replace combine integrate incorporate leverage exploit capture encode
    decode map transform convert infer deduce derive inherit share differ vary change grow
    shrink emerge arise occur exist live die survive express bind inhibit activate regulate
    promote suppress induce mediate target trigger enhance boost help hinder harm protect
    treat cure diagnose recommend suggest write call name term refer cite publish release
    adapt tune select choose pick rank sort filter search retrieve store cache fetch read""".split()
)
#: Irregular past forms and participles.
_IRREGULAR = frozenset(
    """shown proven proved found made gave given took taken led brought built held kept
    known thought wrote written began begun became grew grown drew drawn chose chosen
    fell fallen rose risen saw seen went gone came done did had said told felt left lost
    met paid sent set spent stood understood won""".split()
)
_VERB_ENDING = re.compile(r"[a-z]{2,}(?:ed|izes|ises|ates|ifies|yses|yzes)$")
_RELATIVE = re.compile(r"\b(?:which|that|who|whose|whom|where)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'’\-]*")
_CAPTION_START = re.compile(
    r"^\s*(?:\(?[a-z]\)\s*)?(?:fig(?:ure)?|tab(?:le)?|algorithm|listing)\.?\s*\d+\s*[:.]", re.IGNORECASE
)


def _is_verb(word: str, first: bool) -> bool:
    low = word.lower().replace("’", "'")
    if low in _AUX or low in _IRREGULAR:
        return True
    if word != low and not first:
        return False  # a name or an acronym ("Kubernetes", "BERT")
    forms = {low}
    if low.endswith("ies"):
        forms.add(low[:-3] + "y")
    if low.endswith("s"):
        forms |= {low[:-1], low[:-2]}
    if low.endswith("ed"):
        forms |= {low[:-1], low[:-2], low[:-3]}  # "used", "showed", "mapped"
        if low.endswith("ied"):
            forms.add(low[:-3] + "y")
    if low.endswith("ing"):
        forms |= {low[:-3], low[:-3] + "e", low[:-4]}
    return bool(forms & _VERBS) or bool(_VERB_ENDING.match(low))


def _looks_like_list_or_name(text: str, words: list[str]) -> bool:
    """Names (most content words capitalised), a list of short items, or a heading."""
    content = [w for w in words if w.lower() not in STOP_WORDS]
    capitalised = sum(1 for w in content if w[:1].isupper() or any(c.isupper() for c in w[1:]))
    if content and capitalised * 2 >= len(content):
        return True
    items = [i for i in re.split(r",|;|\band\b|\bor\b|&", text.rstrip(" .")) if i.strip()]
    if len(items) >= 3 and all(len(_WORD.findall(i)) <= 3 for i in items) and not _RELATIVE.search(text):
        return True  # "numpy, scipy, pandas and matplotlib"; a relative clause makes it a sentence
    return not re.search(r"[.!?:;)\]]\s*$", text)  # a heading: no closing punctuation


def text_reason(claim: str) -> str | None:
    """Why ``claim`` (the extracted text) is not a claim, or ``None``."""
    text = " ".join(claim.split())
    words = [w for w in _WORD.findall(re.sub(r"\bet al\b\.?", " ", text)) if w]
    if not _WORD.search(text):
        return "no words, only punctuation or symbols"
    if _CAPTION_START.match(text):
        return "a figure or table caption"
    content = [w for w in words if w.lower() not in STOP_WORDS and len(w) > 1]
    if len(content) < 2 or len(words) < 3:
        return "too short to be a claim (a name or a label)"
    letters = sum(len(w) for w in words)
    if letters < 0.5 * len(re.sub(r"\s", "", text)):
        return "mostly math or symbols"
    if not any(_is_verb(w, i == 0) for i, w in enumerate(words)) and _looks_like_list_or_name(text, words):
        return "no verb: a list, a name or a heading"
    return None


_PLACES = {
    TABLE_CELL: "the citation is in a table cell",
    CAPTION: "the citation is in a figure or table caption",
    HEADING: "the citation is in a heading",
    MATH: "the citation is in math",
}


def no_claim_reason(text: str, span: Span, language: DocKind, claim: str) -> str | None:
    """One line saying why the citation at ``span`` of ``text`` has no claim to check
    (its place in the document, or its extracted ``claim`` is not a clause), or ``None``."""
    place = place_of(text, span.start, language)
    if place is not None:
        return f"{NO_CLAIM}: {_PLACES[place]}."
    why = text_reason(claim)
    if why is not None:
        return f"{NO_CLAIM}: the text at the citation is {why}."
    return None
