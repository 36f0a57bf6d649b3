"""Which sentences of an abstract are the evidence for a claim: the ranking the hover shows.

The score of sentence s (the i-th of n) of an abstract for claim c (see docs/claims.md,
*Evidence*):

    score(s) = BM25(c, s) + phrase(c, s) + numbers(c, s)         (then scaled to [0, 1])
             + position prior + section prior + cue prior

* BM25 over the abstract's own sentences (k1 = 1.2, b = 0.75), on stemmed content words
  (Snowball English stemmer: "reduces", "reduced", "reducing" are one term), so a word the
  claim shares with every sentence (the topic) weighs little and a word it shares with one
  sentence (the finding) weighs much;
* phrase: each pair of adjacent claim terms that is also adjacent in s adds half of its
  mean IDF ("blood pressure", "vitamin D");
* numbers: each number the claim shares with s adds its IDF once more (a claim quoting
  "12 percent" is about the sentence with 12);
* priors, for where an abstract states its findings: a sentence gains 0.3 * i / (n - 1)
  (findings and conclusions come last, background first); a structured abstract's label
  gains 0.4 (RESULTS, CONCLUSIONS, FINDINGS, INTERPRETATION) or loses 0.2 (BACKGROUND,
  OBJECTIVE, METHODS, INTERVENTIONS, ...); a sentence that states a question rather than
  an answer ("is unknown", "we examined whether", "to determine whether") loses 0.3, and
  so does the first sentence (the field's background).

The weights (:class:`Weights`) were tuned on SciFact's training claims with
cross-validation (benchmarks/bench_evidence.py); the ranking only orders sentences, it
never says whether they support the claim. A sentence that shares no content word with
the claim is never shown as evidence.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import snowballstemmer

from citelens.claims.words import STOP_WORDS, tokens


@dataclass(frozen=True, slots=True)
class Weights:
    """The ranking's constants (module docstring); :data:`WEIGHTS` is the one shipped, the
    benchmark tries others."""

    k1: float = 1.2
    b: float = 0.75
    phrase: float = 0.5
    number: float = 1.0
    position: float = 0.3
    later_label: float = 0.4
    earlier_label: float = 0.2
    question: float = 0.3
    first: float = 0.3


WEIGHTS = Weights()

_LATER = re.compile(r"^\W*(?:results?|conclusions?|findings|interpretation|significance)\b", re.IGNORECASE)
_EARLIER = re.compile(
    r"^\W*(?:background|introduction|context|objectives?|aims?|purpose|importance|rationale|methods?"
    r"|design|setting|participants|patients|subjects|population|materials|study design|study selection"
    r"|data sources|data extraction|interventions?|exposures?|main outcome measures?|measurements?)\b",
    re.IGNORECASE,
)
#: A sentence that asks rather than answers: what is not known, what the study set out to do.
_QUESTION = re.compile(
    r"\b(?:is|are|remains?|remained) (?:still )?(?:unknown|unclear|elusive|poorly understood"
    r"|not (?:well |fully )?(?:understood|known|clear))|\bpoorly understood"
    r"|\bwe (?:review(?:ed)?|examined|investigated|assessed|evaluated|sought|aimed|hypothesi[sz]ed"
    r"|asked|studied|tested|analy[sz]ed|performed|conducted|used)\b"
    r"|\bto (?:determine|investigate|assess|evaluate|examine|test|explore|identify|compare)"
    r" (?:whether|the|if|how)\b"
    r"|\bin this (?:study|paper|review|work)\b|\bthe (?:aim|purpose|objective)s? of\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter2) English stem of a lower-case word; numbers as they are."""
    if any(c.isdigit() for c in word):
        return word
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")


def terms(text: str) -> list[str]:
    """Stemmed content words of ``text``, in order (stop words and 1-letter words dropped);
    a number is one term ("500,000", "0.86")."""
    text = _DECIMAL.sub("p", _THOUSANDS.sub("", text))
    return [stem(t) for t in tokens(text) if t not in STOP_WORDS and (len(t) > 1 or t.isdigit())]


def _is_number(term: str) -> bool:
    return any(c.isdigit() for c in term)


def _bigrams(words: Sequence[str]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in pairwise(words) if a != b}


def _prior(sentence: str, index: int, count: int, w: Weights) -> float:
    prior = w.position * index / (count - 1) if count > 1 else 0.0
    if _LATER.match(sentence):
        prior += w.later_label
    elif _EARLIER.match(sentence):
        prior -= w.earlier_label
    if _QUESTION.search(sentence):
        prior -= w.question
    if index == 0 and count > 1:
        prior -= w.first
    return prior


def sentence_scores(claim: str, sentences: Sequence[str], w: Weights = WEIGHTS) -> list[float | None]:
    """The score of each sentence for ``claim`` (higher is better), ``None`` for a sentence
    sharing no content word with the claim."""
    docs = [terms(s) for s in sentences]
    query = terms(claim)
    n = len(docs)
    if not n or not query:
        return [None] * n
    avgdl = sum(len(d) for d in docs) / n or 1.0
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))

    def idf(term: str) -> float:
        return math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))

    wanted = Counter(query)
    pairs = _bigrams(query)
    raw: list[float | None] = []
    for d in docs:
        tf = Counter(d)
        shared = [t for t in wanted if t in tf]
        if not shared:
            raw.append(None)
            continue
        norm = w.k1 * (1 - w.b + w.b * len(d) / avgdl)
        score = sum(idf(t) * tf[t] * (w.k1 + 1) / (tf[t] + norm) for t in shared)
        score += w.phrase * sum((idf(a) + idf(b)) / 2 for a, b in pairs & _bigrams(d))
        score += w.number * sum(idf(t) for t in shared if _is_number(t))
        raw.append(score)
    top = max((s for s in raw if s is not None), default=0.0) or 1.0
    return [None if s is None else s / top + _prior(sentences[i], i, n, w) for i, s in enumerate(raw)]


def _order(scores: Sequence[float | None]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (scores[i] is None, -(scores[i] or 0.0), i))


def rank_sentences(claim: str, sentences: Sequence[str], w: Weights = WEIGHTS) -> list[int]:
    """Indices of ``sentences``, best evidence for ``claim`` first; those sharing no content
    word with the claim come last, in their order."""
    return _order(sentence_scores(claim, sentences, w))


def evidence_indices(claim: str, sentences: Sequence[str], k: int = 3) -> list[int]:
    """The ``k`` best evidence sentences that share a content word with the claim."""
    scores = sentence_scores(claim, sentences)
    return [i for i in _order(scores)[:k] if scores[i] is not None]
