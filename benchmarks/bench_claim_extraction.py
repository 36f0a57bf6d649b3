"""Claim extraction: exact match and token F1 against hand-written claims.

    .venv/bin/python benchmarks/bench_claim_extraction.py [-v]

``benchmarks/data/claim_sentences.jsonl`` holds 231 citations of the corpus papers (``tests/corpus/papers``)
(LaTeX and Markdown) with the claim a reader sees, written by hand (how they were chosen
and the conventions: ``benchmarks/data/README.md``). Each citation is extracted the way the
hover does (:func:`citelens.claims.background.claim_at`: the paragraph, then
:func:`citelens.claims.sentences.extract_claim`). Prints exact match (after collapsing
whitespace) and token F1 (lower-cased word tokens, as multisets), overall and by language.
To measure another version of the code: ``PYTHONPATH=OTHER_CHECKOUT/server`` in front.
``-v`` lists the citations that do not match.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from citelens.claims.background import claim_at
from citelens.core.model import Citation, Span

DATA = Path(__file__).with_name("data") / "claim_sentences.jsonl"
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> Counter[str]:
    return Counter(t.lower() for t in _TOKEN.findall(text))


def token_f1(got: str, want: str) -> float:
    g, w = tokens(got), tokens(want)
    if not g and not w:
        return 1.0
    common = sum((g & w).values())
    if not common:
        return 0.0
    p, r = common / sum(g.values()), common / sum(w.values())
    return 2 * p * r / (p + r)


def norm(text: str) -> str:
    return " ".join(text.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list the mismatches")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts: dict[str, str] = {}
    by: dict[str, list[tuple[bool, float]]] = {"all": [], "latex": [], "markdown": []}
    for row in rows:
        path = CORPUS / "papers" / row["file"]
        text = texts.setdefault(row["file"], path.read_text(encoding="utf-8", errors="replace"))
        if text[row["start"] : row["end"]] != row["key"]:
            print(f"#{row['id']}: {row['file']} changed (no {row['key']} at {row['start']})", file=sys.stderr)
            return 1
        cite = Citation(row["key"], Span(row["start"], row["end"]), "", Span(row["start"], row["end"]))
        got = claim_at(text, cite, row["language"], memo={}) or ""
        exact, f1 = norm(got) == norm(row["claim"]), token_f1(got, row["claim"])
        for k in ("all", row["language"]):
            by[k].append((exact, f1))
        if args.verbose and not exact:
            print(f"#{row['id']} {row['file']} F1 {f1:.2f}\n  want: {row['claim']}\n  got:  {got}\n")
    print(f"claim extraction on {len(rows)} hand-labelled citations ({DATA.name})")
    print(f"{'':10}{'n':>5}{'exact match':>14}{'token F1':>11}")
    for k, vals in by.items():
        n = len(vals)
        em = 100 * sum(e for e, _ in vals) / n if n else 0.0
        f1 = 100 * sum(f for _, f in vals) / n if n else 0.0
        print(f"{k:10}{n:>5}{em:>13.1f}%{f1:>10.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
