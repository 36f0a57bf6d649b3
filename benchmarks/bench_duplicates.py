"""Duplicate-entry detection on a big library: median time of ``find_duplicates``.

    python -m benchmarks.bench_duplicates [--runs 3] [FILE.bib ...]

Views are built once (as ``citelens check`` does, with the same collector setting: no
full collections), then ``find_duplicates`` runs ``--runs`` times on all of them; the
median wall and CPU time and the number of pairs found are printed. Without arguments it
measures the 68,732-entry Physical Review E library (``CITELENS_BIGBIB``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

from benchmarks.bigbib import PHYSREV_E
from tests.harness import bib_views

from citelens.checks.duplicates import find_duplicates


def bench(path: Path, runs: int) -> None:
    views = bib_views(path, once_per_key=True)
    walls, cpus, found = [], [], 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        found = len(find_duplicates(views))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    print(
        f"{path.name}: {len(views)} entries, {found} pairs, find_duplicates median "
        f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU ({runs} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, 1 << 30)  # as citelens check does
    for path in args.files or [PHYSREV_E]:
        bench(path, args.runs)


if __name__ == "__main__":
    main()
