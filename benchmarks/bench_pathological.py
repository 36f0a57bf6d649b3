"""How long the inputs that once took seconds take now (tests hold what the result is; the
time is a figure, printed here, not a timed test):

- a claim extracted from a 2.5 MB document (the window around the citation, not the whole
  text; was asserted under 50 ms a call);
- a .tex with one unclosed ``\\cite{`` before 2,000 lines of citations, and one with 2,000
  unclosed ``\\cite{a,a,...`` lines (about 6 s before fa4de63; was asserted under 1 s);
- ``find_duplicates`` on 3,000 generated titles of a small vocabulary (was asserted under
  5 s);
- the local check (no verification) of the 50 MB ``ml_conferences.bib`` of the corpus (was
  asserted under 20 s; ``--skip-big`` leaves it out).

    python -m benchmarks.bench_pathological [--repeat 5] [--skip-big]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable

from tests.harness import CORPUS
from tests.test_claims_sentences import large_document
from tests.test_duplicates import many_views
from tests.test_parser_properties import many_unclosed_citations, one_unclosed_citation

from citelens.checks.duplicates import find_duplicates
from citelens.claims.sentences import extract_claim
from citelens.core.settings import Settings
from citelens.documents.latex import parse_latex
from citelens.workspace.check import run_check

BIG_BIB = CORPUS / "bigbib" / "ml_conferences.bib"


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()
    text, span = large_document()
    rows = [
        (f"extract_claim, {len(text) / 1e6:.1f} MB document", "50 ms",
         _median_ms(lambda: extract_claim(text, span, "latex"), args.repeat)),
    ]
    one = one_unclosed_citation()
    rows.append(("parse_latex, one unclosed \\cite{ + 2,000 lines", "1,000 ms",
                 _median_ms(lambda: parse_latex(one, "x.tex"), args.repeat)))
    many = many_unclosed_citations()
    rows.append(("parse_latex, 2,000 unclosed \\cite{ lines", "1,000 ms",
                 _median_ms(lambda: parse_latex(many, "x.tex"), args.repeat)))
    views = many_views()
    rows.append((f"find_duplicates, {len(views):,} generated titles", "5,000 ms",
                 _median_ms(lambda: find_duplicates(views), args.repeat)))
    if not args.skip_big and BIG_BIB.exists():
        rows.append((f"run_check --no-verify, {BIG_BIB.name} "
                     f"({BIG_BIB.stat().st_size / 1e6:.0f} MB)", "20,000 ms",
                     _median_ms(lambda: asyncio.run(run_check([str(BIG_BIB)], Settings(),
                                                              verify=False)), 1)))
    print(f"{'input':58s} {'median':>10s}  (the bound a test once asserted)")
    for name, bound, ms in rows:
        print(f"{name:58s} {ms:8.1f} ms  ({bound})")


if __name__ == "__main__":
    main()
