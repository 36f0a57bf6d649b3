"""Ranking passages against a claim: BM25, cosine similarity of embeddings; and the abstract's
best evidence sentences (ranked by :mod:`citelens.claims.evidence`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from citelens.claims.evidence import evidence_indices
from citelens.claims.sentences import split_sentences
from citelens.claims.words import STOP_WORDS, tokens

#: Default passage cutoff (``embeddingCosineMin``), calibrated for text-embedding-3-small.
COSINE_MIN = 0.50
TOP_K = 2


def _terms(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOP_WORDS]


def bm25_scores(query: str, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Okapi BM25 score of each document for ``query`` (0.0 for an empty corpus/query)."""
    tokenized = [_terms(d) for d in docs]
    q = _terms(query)
    if not tokenized or not q:
        return [0.0] * len(docs)
    n = len(tokenized)
    avgdl = sum(len(d) for d in tokenized) / n or 1.0
    df: Counter[str] = Counter()
    for d in tokenized:
        df.update(set(d))
    scores = []
    for d in tokenized:
        tf = Counter(d)
        s = 0.0
        for term in q:
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            s += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(d) / avgdl))
        scores.append(s)
    return scores


def top_bm25(query: str, docs: Sequence[str], k: int = TOP_K) -> list[int]:
    """Indices of the ``k`` best documents with a positive score, best first."""
    scores = bm25_scores(query, docs)
    order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))
    return [i for i in order[:k] if scores[i] > 0]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def top_cosine(
    query: Sequence[float],
    vectors: Sequence[Sequence[float]],
    k: int = TOP_K,
    minimum: float = COSINE_MIN,
) -> list[tuple[int, float]]:
    """``(index, cosine)`` of the ``k`` most similar vectors with cosine >= ``minimum``."""
    sims = [(i, cosine(query, v)) for i, v in enumerate(vectors)]
    kept = [s for s in sims if s[1] >= minimum]
    return sorted(kept, key=lambda s: (-s[1], s[0]))[:k]


def best_sentences(claim: str, text: str, k: int = 3) -> list[str]:
    """The ``k`` sentences of ``text`` that are the best evidence for ``claim``
    (:mod:`citelens.claims.evidence`), best first; only sentences sharing a content word
    with the claim (``[]`` when none does)."""
    sentences = [text[a:b].strip() for a, b in split_sentences(" ".join(text.split()))]
    sentences = [s for s in sentences if s]
    return [sentences[i] for i in evidence_indices(claim, sentences, k)]
