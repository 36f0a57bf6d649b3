"""Word tokens and the title-overlap gate of the abstract cascade.

W(t) = lower-cased alphanumeric tokens of t minus English stop words;
σ(a, b) = |W(a) ∩ W(b)| / max(|W(a)|, |W(b)|).
"""

from __future__ import annotations

import re

from citelens.core.accents import strip_accents

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves via using use used towards toward upon within without""".split()
)
TITLE_OVERLAP_MIN = 0.30

_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens (accents folded), stop words kept."""
    folded = strip_accents(text)
    return _TOKEN.findall(folded.lower())


def content_words(text: str) -> set[str]:
    """W(text): tokens minus stop words."""
    return {t for t in tokens(text) if t not in STOP_WORDS}


def title_overlap(a: str, b: str) -> float:
    """σ(a, b) in [0, 1]; 0 when either title has no content words."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / max(len(wa), len(wb))
