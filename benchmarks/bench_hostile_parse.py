"""How long the .bib parser takes on hostile lines (issue 22): a 1.2 MB line of stray '@',
of entries on one line, of '%@' and of unclosed comments. Linear parsing keeps each in
tens of milliseconds.

    python benchmarks/bench_hostile_parse.py [--size 1200000]
"""

from __future__ import annotations

import argparse
import time

from citelens.documents.bibtex.parse import parse_bib

PATTERNS = {
    "stray '@'": "@",
    "'@ @'": "@ ",
    "entries on one line '@a{k,t={x}}'": "@a{k,t={x}}",
    "'%@a{k,}'": "%@a{k,}",
    "unclosed '@comment{'": "@comment{",
    "'@aaaa'": "@aaaa",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1_200_000)
    args = ap.parse_args()
    for name, unit in PATTERNS.items():
        text = "@article{ok, title = {Fine}}\n" + unit * (args.size // len(unit)) + "\n"
        t0 = time.perf_counter()
        bib = parse_bib(text)
        dt = time.perf_counter() - t0
        print(f"{name:36s} {len(text) / 1e6:.1f} MB  {dt * 1000:9.1f} ms  "
              f"{len(bib.entries)} entries, {len(bib.problems)} problems")


if __name__ == "__main__":
    main()
