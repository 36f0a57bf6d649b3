"""Semantic Scholar requests and 429s per entry: ``citelens check`` of the astropy paper.

    .venv/bin/python -m benchmarks.bench_s2 [--known 0.5] [--code DIR]

Runs the real CLI (a subprocess, default settings, empty cache) on
``corpus/papers/astropy-v5.0`` against the fake APIs enforcing the real rate limits,
Semantic Scholar's with network jitter (``REAL_JITTER_S``). The fake knows the
fraction ``--known`` of the paper's entries (every other one by default, from the
entries' own metadata); the rest are not found anywhere, as fabricated or obscure
references are. Prints S2 requests per entry, 429s per entry and their share of S2
requests (target <= 2%), S2 requests per endpoint, statuses and the wall time.
``--code DIR`` runs the CLI from another checkout's ``server/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.cli_check import check_against  # noqa: E402
from benchmarks.make_bib300 import _paper  # noqa: E402
from tests.fakes.scholarly import ScholarlyFake  # noqa: E402
from tests.harness import CORPUS  # noqa: E402

from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.documents.read import read_text  # noqa: E402

PAPER = CORPUS / "papers" / "astropy-v5.0"


def known_papers(fraction: float) -> list[dict[str, object]]:
    """Papers for the fake: a deterministic ``fraction`` of the entries, by their metadata."""
    views = []
    for bib in sorted(PAPER.rglob("*.bib")):
        views += [entry_view(e) for e in parse_bib(read_text(bib), str(bib)).entries]
    seen: set[str] = set()
    out: list[dict[str, object]] = []
    step = 0.0
    for v in views:
        if not v.title.strip() or v.key in seen:
            continue
        seen.add(v.key)
        step += fraction
        if step >= 1.0:
            step -= 1.0
            out.append(_paper(v))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--known", type=float, default=0.5)
    ap.add_argument("--code", help="run the CLI from DIR/server instead of this checkout")
    args = ap.parse_args()
    with ScholarlyFake(known_papers(args.known)) as fake, tempfile.TemporaryDirectory() as tmp:
        fake.enforce_real_limits()
        proc, wall = check_against(fake, PAPER, Path(tmp), args.code, 7200)
        reqs = fake.requests("s2")
    report = json.loads(proc.stdout)
    statuses: dict[str, str] = {}
    for e in report["entries"]:
        statuses.setdefault(e["key"], e["status"])
    n = len(statuses)
    too_many = sum(1 for r in reqs if r["status"] == 429)
    by_path = Counter(r["path"] for r in reqs)
    not_found = sum(1 for s in statuses.values() if s == "NOT_FOUND")
    print(
        f"astropy-v5.0: {n} entries ({args.known:g} known to the fake) in {wall:.0f} s; "
        f"{dict(sorted(Counter(statuses.values()).items()))}"
    )
    print(
        f"S2 requests/entry {len(reqs) / n:.2f}, 429s/entry {too_many / n:.3f} "
        f"({len(reqs)} S2 requests, {too_many} answered 429 = "
        f"{100 * too_many / max(1, len(reqs)):.1f}%)"
    )
    title = by_path.get("/paper/search/match", 0) + by_path.get("/paper/search", 0)
    print(
        f"S2 requests per endpoint {dict(sorted(by_path.items()))}; title requests per "
        f"NOT_FOUND entry {title / max(1, not_found):.2f}"
    )


if __name__ == "__main__":
    main()
