"""Evidence recall@1/2/3 of the no-model ranking (claims/evidence.py) on SciFact's training
claims, whole and in cross-validation folds, beside plain BM25.

The claims and the abstracts they cite are not in the repository (CC BY-NC; for measuring
only): the folder ``CITELENS_SCIFACT`` names, by default ``../shared/claims/scifact``
beside the clone (the team's machines), holding ``claims_train.jsonl`` and ``corpus.jsonl``.
The dev and test claims are kept by the team for measuring: tune only here.

* the shipped weights (:data:`citelens.claims.evidence.WEIGHTS`) on all training pairs and
  on each of ``--folds`` folds (claims shuffled with ``--seed``; the pairs of one claim
  stay in one fold);
* ``--cv``: the tuning procedure measured honestly: for each fold, the weights are fitted
  by coordinate ascent (objective recall@1 + recall@3 / 2) on the other folds, starting
  from ``--start`` (``shipped`` or ``before``: the weights of commit f06a2b6), and scored
  on the fold they never saw. ``-v`` prints the weights each fold chose.

``.venv/bin/python -m benchmarks.bench_evidence [--folds 5] [--seed 0] [--cv] [-v]``
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from citelens.claims.eval_evidence import KS, Rationale, bm25_rank, recall_at
from citelens.claims.evidence import WEIGHTS, Weights, rank_sentences
from citelens.cli.eval import read_corpus, read_items

ROOT = Path(__file__).resolve().parent.parent
SCIFACT_VARIABLE = "CITELENS_SCIFACT"
SCIFACT = Path(os.environ.get(SCIFACT_VARIABLE) or ROOT.parent / "shared" / "claims" / "scifact")
#: The weights before they were tuned (commit f06a2b6): no question or first-sentence prior.
BEFORE = Weights(k1=1.2, b=0.75, phrase=0.5, number=1.0, position=0.1, later_label=0.1,
                 earlier_label=0.1, question=0.0, first=0.0)
STEPS = (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2)
TUNED = ("phrase", "number", "position", "later_label", "earlier_label", "question", "first")

Pair = tuple[int, Rationale]  # (claim's line, pair)


def load(folder: Path) -> list[Pair]:
    """The training claim–paper pairs with rationale sentences, as ``citelens eval claims``
    reads them."""
    claims, corpus_file = folder / "claims_train.jsonl", folder / "corpus.jsonl"
    for path in (claims, corpus_file):
        if not path.is_file():
            sys.exit(f"{path} not found: set {SCIFACT_VARIABLE} to the folder holding "
                     "claims_train.jsonl and corpus.jsonl (SciFact; see benchmarks/README.md)")
    corpus, _ = read_corpus(corpus_file.read_text(encoding="utf-8").splitlines())
    items, _ = read_items(claims.read_text(encoding="utf-8").splitlines(), corpus)
    return [(i.line, Rationale(i.claim, i.sentences, i.rationale)) for i in items
            if i.rationale and i.sentences and max(i.rationale) < len(i.sentences)]


def recall(pairs: Sequence[Rationale], w: Weights | None) -> dict[int, float]:
    """recall@k in percent for weights ``w`` (None: plain BM25)."""
    if not pairs:
        return dict.fromkeys(KS, 0.0)
    ranked = [bm25_rank(p.claim, p.sentences) if w is None else rank_sentences(p.claim, p.sentences, w)
              for p in pairs]
    return {k: 100 * recall_at(pairs, ranked, k) / len(pairs) for k in KS}


def objective(pairs: Sequence[Rationale], w: Weights) -> float:
    r = recall(pairs, w)
    return r[1] + r[3] / 2


def fit(pairs: Sequence[Rationale], start: Weights, rounds: int = 4) -> Weights:
    """Coordinate ascent over :data:`TUNED` by :data:`STEPS`, at most ``rounds`` sweeps."""
    w, best = start, objective(pairs, start)
    for _ in range(rounds):
        improved = False
        for name in TUNED:
            for step in STEPS:
                value = round(getattr(w, name) + step, 3)
                if value < 0:  # each weight has its sign in the formula
                    continue
                candidate = replace(w, **{name: value})
                score = objective(pairs, candidate)
                if score > best + 1e-9:
                    w, best, improved = candidate, score, True
        if not improved:
            break
    return w


def folds(pairs: Sequence[Pair], k: int, seed: int) -> list[list[Rationale]]:
    lines = sorted({line for line, _ in pairs})
    random.Random(seed).shuffle(lines)
    fold_of = {line: i % k for i, line in enumerate(lines)}
    out: list[list[Rationale]] = [[] for _ in range(k)]
    for line, p in pairs:
        out[fold_of[line]].append(p)
    return out


def cells(r: dict[int, float]) -> str:
    return " ".join(f"@{k} {r[k]:5.1f}" for k in KS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cv", action="store_true", help="fit the weights inside each fold's training part")
    ap.add_argument("--start", choices=("shipped", "before"), default="before")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    pairs = load(SCIFACT)
    every = [p for _, p in pairs]
    print(f"SciFact training claims ({SCIFACT}): {len({line for line, _ in pairs})} claims, "
          f"{len(every)} claim-paper pairs with rationale sentences")
    for label, w in (("shipped ranking", WEIGHTS), ("before tuning", BEFORE), ("BM25 alone", None)):
        print(f"  {label:<16} all      {cells(recall(every, w))}")
    parts = folds(pairs, args.folds, args.seed)
    for i, part in enumerate(parts):
        print(f"  shipped ranking  fold {i} ({len(part):3d} pairs) {cells(recall(part, WEIGHTS))}")
    if args.cv:
        start = WEIGHTS if args.start == "shipped" else BEFORE
        hits = dict.fromkeys(KS, 0.0)
        for i, part in enumerate(parts):
            train = [p for j, other in enumerate(parts) if j != i for p in other]
            w = fit(train, start)
            r = recall(part, w)
            for k in KS:
                hits[k] += r[k] * len(part) / 100
            print(f"  fitted on the other folds, fold {i} {cells(r)}")
            if args.verbose:
                print(f"    {asdict(w)}")
        overall = {k: 100 * h / len(every) for k, h in hits.items()}
        print(f"  cross-validated (fit inside, score outside) {cells(overall)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
