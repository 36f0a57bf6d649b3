"""How long the inputs that once took seconds take now (tests hold what the result is; the
time is a figure, printed here, not a timed test):

- a claim extracted from a 2.5 MB document (the window around the citation, not the whole
  text; was asserted under 50 ms a call);
- a .tex with one unclosed ``\\cite{`` before 2,000 lines of citations, and one with 2,000
  unclosed ``\\cite{a,a,...`` lines (about 6 s before fa4de63; was asserted under 1 s);
- ``find_duplicates`` on 3,000 generated titles of a small vocabulary (was asserted under
  5 s);
- the local check (no verification) of the 50 MB ``ml_conferences.bib`` of the corpus (was
  asserted under 20 s; ``--skip-big`` leaves it out);
- the parse bounds of issue 32, each in a child process (CPU seconds and its own peak RSS):
  ``\\cite{`` and ``\\cite[`` unclosed 80,000 times on one line (the attack: 76 s), and a
  ``.bib`` of 1,000,000 lone ``@`` lines (the attack: 53 s, 777 MB); ``--scale`` shrinks
  them, ``--bounds-only`` prints only these.

    python -m benchmarks.bench_pathological [--repeat 5] [--skip-big] [--scale 1] [--bounds-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from benchmarks.bigbib import ML_CONFERENCES
from tests.test_claims_sentences import large_document
from tests.test_duplicates import many_views
from tests.test_parser_properties import many_unclosed_citations, one_unclosed_citation

from citelens.checks.duplicates import find_duplicates
from citelens.claims.sentences import extract_claim
from citelens.core.settings import Settings
from citelens.documents.latex import parse_latex
from citelens.workspace.check import run_check

BIG_BIB = ML_CONFERENCES


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


#: issue 32's pathological inputs: (kind, repeated unit, times, the figures on the code
#: before the fix, at full size: CPU s, peak RSS MB, findings; 27 November 2026, 2 cores)
BOUNDS = {
    "unclosed \\cite{ on one line": ("latex", "\\cite{", 80_000, "30.45 s, 63 MB"),
    "unclosed \\cite[ on one line": ("latex", "\\cite[", 80_000, "31.71 s, 63 MB"),
    "lone '@' lines in a .bib": ("bib", "@\n", 1_000_000, "5.51 s, 431 MB, 1,000,000 findings"),
}


def _bound_child(kind: str, unit: str, n: int) -> None:
    """One case, in this (child) process: its CPU time, peak RSS and result as JSON."""
    text = ("\\documentclass{article}\n" if kind == "latex" else "") + unit * n
    t0 = time.process_time()
    last = ""
    if kind == "latex":
        found, problems = len(parse_latex(text, "x.tex").citations), 0
    else:
        from citelens.documents.bibtex.parse import parse_bib
        from citelens.workspace.check import _field_problems

        bib = parse_bib(text, "x.bib")
        findings = _field_problems([bib], Settings(), set(), None)
        found, problems = len(bib.entries), len(findings)
        last = findings[-1].message if findings else ""
    cpu = time.process_time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mb": len(text) / 1e6, "cpu": cpu, "rss": rss, "found": found,
                      "problems": problems, "last": last[:70]}))


def bounds(scale: float) -> None:
    print(f"{'issue 32 bounds':32s} {'N':>10s} {'MB':>6s} {'CPU s':>8s} {'peak RSS MB':>12s}  result"
          "  [before the fix, full size]")
    for name, (kind, unit, n, before) in BOUNDS.items():
        n = max(1, int(n * scale))
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_pathological", "--child", kind,
             unit.encode("unicode_escape").decode(), str(n)],
            capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"{name:32s} {n:>10,d} failed: {proc.stderr.strip()[-200:]}")
            continue
        r = json.loads(proc.stdout)
        what = (f"{r['found']:,} citations" if kind == "latex"
                else f"{r['problems']:,} BIB_SYNTAX findings; last: {r['last']}")
        print(f"{name:32s} {n:>10,d} {r['mb']:6.2f} {r['cpu']:8.2f} {r['rss']:12.0f}  {what}  [{before}]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--bounds-only", action="store_true")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, unit, n = args.child
        _bound_child(kind, unit.encode().decode("unicode_escape"), int(n))
        return
    bounds(args.scale)
    if args.bounds_only:
        return
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
