"""Wall time of ``citelens check`` when every scholarly source answers HTTP 429.

    .venv/bin/python -m benchmarks.bench_storm [--sizes 20,40] [--code DIR]

Runs the real CLI (a subprocess, default retry settings: 2 s backoff, 3 retries)
on the first N entries of ``benchmarks/data/bib300.bib`` (three quarters with a DOI
or arXiv id, the rest title-only) against the fake APIs in "429" mode, with an empty
cache. Prints per size: wall time, statuses (every entry must be UNVERIFIED) and the
circuit-breaker log lines. Target: 20 entries in <= 60 s. ``--code DIR`` runs the
CLI from another checkout's ``server/`` (to measure an older version).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.cli_check import check_against  # noqa: E402
from tests.fakes.scholarly import SOURCES, ScholarlyFake  # noqa: E402

from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.read import read_text  # noqa: E402

BIB = HERE / "data" / "bib300.bib"
WITH_IDS = 250  # bib300.bib: 250 entries with identifiers, then 50 title-only


def storm_bib(n: int) -> str:
    """The text of N real entries: 3/4 with identifiers, 1/4 title-only."""
    text = read_text(BIB)
    entries = parse_bib(text, str(BIB)).entries
    n_ids = (3 * n) // 4
    picked = entries[:n_ids] + entries[WITH_IDS : WITH_IDS + n - n_ids]
    return "\n\n".join(text[e.span.start : e.span.end] for e in picked) + "\n"


def run_storm(n: int, fake: ScholarlyFake, code: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bib = Path(tmp) / "refs.bib"
        bib.write_text(storm_bib(n), encoding="utf-8")
        fake.clear_log()
        proc, wall = check_against(fake, bib, Path(tmp), code, 3600)
    report = json.loads(proc.stdout)
    breaker = [line for line in proc.stderr.splitlines() if "in a row" in line]
    deadline = [line for line in proc.stderr.splitlines() if "deadline" in line]
    print(
        f"{n} entries under a total 429 storm: {wall:.1f} s; "
        f"statuses {report['summary']['by_status']}; requests {fake.count()}; "
        f"breaker lines {len(breaker)}; deadline lines {len(deadline)}"
    )
    for line in breaker + deadline:
        print(f"    {line}")
    if "--timeline" in sys.argv:
        reqs = fake.requests()
        t0 = reqs[0]["t"] if reqs else 0.0
        for r in reqs:
            print(f"    {r['t'] - t0:6.2f} {r['source']:9} {r['status']} {r['path']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,40")
    ap.add_argument("--code", help="run the CLI from DIR/server instead of this checkout")
    ap.add_argument("--timeline", action="store_true", help="print every request's time")
    args = ap.parse_args()
    with ScholarlyFake() as fake:
        for source in SOURCES:
            fake.set_mode(source, "429")
        for n in (int(s) for s in args.sizes.split(",")):
            run_storm(n, fake, args.code)


if __name__ == "__main__":
    main()
