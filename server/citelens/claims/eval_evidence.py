"""Evidence recall@k for ``citelens eval claims``: the ranking the hover shows, measured
against the human rationale sentences of SciFact / SCITANCE, with no model.

recall@k = the share of claim–paper pairs with rationale sentences for which at least one
rationale sentence is among the k sentences ranked best. The abstract's sentences are the
dataset's own (the rationale indexes refer to them). The same figure for plain BM25 over
the same sentences (ties broken by position) is printed beside it as the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from citelens.claims.evidence import rank_sentences
from citelens.claims.ranking import bm25_scores

KS = (1, 2, 3)


@dataclass(frozen=True, slots=True)
class Rationale:
    """One claim–paper pair: the claim, the abstract's sentences, the rationale indexes."""

    claim: str
    sentences: Sequence[str]
    gold: frozenset[int]


def bm25_rank(claim: str, sentences: Sequence[str]) -> list[int]:
    """Plain BM25 (no stemming, no priors), ties in abstract order: the baseline."""
    scores = bm25_scores(claim, sentences)
    return sorted(range(len(sentences)), key=lambda i: (-scores[i], i))


def recall_at(pairs: Sequence[Rationale], ranked: Sequence[Sequence[int]], k: int) -> int:
    """How many pairs have a rationale sentence among their first ``k`` ranked sentences."""
    return sum(1 for p, r in zip(pairs, ranked, strict=True) if p.gold & set(r[:k]))


def evidence_report(pairs: Sequence[Rationale], out: TextIO) -> dict[int, float]:
    """Print recall@1/2/3 of the CiteLens ranking and of plain BM25; returns CiteLens's (0-1)."""
    usable = [p for p in pairs if p.gold and p.sentences and max(p.gold) < len(p.sentences)]
    ours = [rank_sentences(p.claim, p.sentences) for p in usable]
    base = [bm25_rank(p.claim, p.sentences) for p in usable]
    n = len(usable)
    print(
        f"evidence recall@k (rationale sentences, no model): {n} claim-paper pairs with rationales",
        file=out,
    )
    if not n:
        print("  no pair has rationale sentence indexes and a sentence-split abstract", file=out)
        return {}
    figures: dict[int, float] = {}
    print("                     " + "".join(f"{'@' + str(k):>16}" for k in KS), file=out)
    for label, ranked in (("CiteLens ranking", ours), ("BM25 alone", base)):
        cells = []
        for k in KS:
            hits = recall_at(usable, ranked, k)
            cells.append(f"{100 * hits / n:>6.1f} ({hits}/{n})")
            if ranked is ours:
                figures[k] = hits / n
        print(f"  {label:<19}" + "".join(f"{c:>16}" for c in cells), file=out)
    return figures
