"""The retrieval side of ``citelens eval claims``: coverage, latency per phase, passage scores.

Pure functions over finished :class:`~citelens.claims.result.ClaimResult` objects, so
the numbers the harness prints are the ones the pipeline recorded (``timings_ms``,
``abstract_source``, ``fulltext_source``, ``passage_scores``), as in the retrieval
tables of the paper behind the method.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from citelens.claims.result import ClaimResult

#: The phases whose latency is reported, in pipeline order, with their labels.
PHASES = (
    ("abstract", "abstract retrieval"),
    ("phase1", "phase 1 (abstract)"),
    ("fulltext", "full-text retrieval"),
    ("passages", "passage selection"),
    ("phase2", "phase 2 (passages)"),
)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _share(n: int, total: int) -> str:
    return f"{n}/{total} ({100 * n / total:.1f}%)" if total else "0/0"


def _sources(counts: Counter[str]) -> str:
    return ", ".join(f"{s} {n}" for s, n in counts.most_common()) or "-"


def coverage_report(results: Sequence[ClaimResult], out: TextIO) -> None:
    """How many claims got an abstract, a full text, neither, and from which source."""
    n = len(results)
    abstracts = Counter(r.abstract_source for r in results if r.abstract)
    tried = [r for r in results if "fulltext" in r.timings_ms]
    texts = Counter(r.fulltext_source for r in tried if r.fulltext_source)
    neither = sum(1 for r in results if not r.abstract and not r.fulltext_source)
    print("coverage", file=out)
    print(
        f"  abstract found           {_share(sum(abstracts.values()), n):<16} sources: {_sources(abstracts)}",
        file=out,
    )
    print(
        f"  full text found          {_share(sum(texts.values()), len(tried)):<16} "
        f"of the claims that needed one; sources: {_sources(texts)}",
        file=out,
    )
    print(f"  neither                  {_share(neither, n)}", file=out)


def latency_report(results: Sequence[ClaimResult], out: TextIO) -> None:
    """p50 and p95 of each phase, in milliseconds, over the claims that ran it."""
    print("latency (ms)                 n      p50      p95", file=out)
    for key, label in PHASES:
        values = [r.timings_ms[key] for r in results if key in r.timings_ms]
        if not values:
            print(f"  {label:<24}{0:>5}        -        -", file=out)
            continue
        print(
            f"  {label:<24}{len(values):>5}{percentile(values, 50):>9.0f}{percentile(values, 95):>9.0f}",
            file=out,
        )


def passage_score_report(results: Sequence[ClaimResult], cutoff: float, out: TextIO) -> None:
    """The cosine distribution of the kept passages, and the claims the cutoff left empty."""
    embedded = [r for r in results if r.retrieval == "embeddings"]
    if not embedded:
        print(
            "passage scores: no passages were ranked with embeddings "
            "(no embedding model, or no claim reached phase 2)",
            file=out,
        )
        return
    kept = [s for r in embedded for s in r.passage_scores]
    print(f"passage scores (embeddings, cutoff {cutoff:.2f})", file=out)
    if kept:
        qs = "  ".join(f"p{q} {percentile(kept, q):.2f}" for q in (10, 25, 50, 75, 90))
        print(
            f"  kept {len(kept)} passages of {sum(1 for r in embedded if r.passage_scores)} "
            f"claims: min {min(kept):.2f}  {qs}  max {max(kept):.2f}",
            file=out,
        )
    else:
        print("  kept no passage", file=out)
    empty = [r.best_chunk_score for r in embedded if not r.passage_scores and r.best_chunk_score is not None]
    if empty:
        best = ", ".join(f"{s:.2f}" for s in sorted(empty, reverse=True)[:10])
        print(
            f"  claims with no chunk at or above the cutoff: {len(empty)} (their best chunk: {best})",
            file=out,
        )
