"""A synthetic venue, checked in one command: on one machine with a snapshot, and on a local
Ray cluster with two workers sharing PostgreSQL (and the snapshot).

    .venv/bin/python benchmarks/bench_venue.py                        # 2,000 papers, 60,000 references
    .venv/bin/python benchmarks/bench_venue.py --papers 200 --refs 30  # quick

The venue: each paper a folder with main.tex and refs.bib; references are drawn from a pool
of works with a popularity skew (the same classics in many papers, as in real venues), 1%
of them newer than the snapshot (the fake APIs on loopback hold those) and 2% fabricated
(nowhere). Prints papers/s, references/s, requests per reference and peak memory (the
driver's, and for Ray the largest worker's).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from benchmarks.bench_snapshot import bib_of, build_pool_snapshot, paper, vocabulary  # noqa: E402
from tests.fakes.scholarly import ScholarlyFake, _complete  # noqa: E402
from tests.postgres import throwaway_postgres  # noqa: E402


def make_venue(
    root: Path, papers: int, refs: int, pool_size: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(pool in the snapshot, newer works only the APIs hold, references written)."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    pool = [paper(i, rng, vocab) for i in range(pool_size)]
    newer = set(rng.sample(range(pool_size), pool_size // 100))
    fabricated = 0
    total = 0
    for n in range(papers):
        picks: dict[int, None] = {}
        while len(picks) < refs:
            # popularity: a tenth of the pool gets half of the citations
            i = (
                int(rng.paretovariate(1.2) * pool_size / 20) % pool_size
                if rng.random() < 0.5
                else rng.randrange(pool_size)
            )
            picks[i] = None
        chosen = [pool[i] for i in picks]
        for k in range(len(chosen)):
            if rng.random() < 0.02:  # fabricated: a real-looking title nobody wrote
                fake = paper(10_000_000 + n * 1000 + k, rng, vocab)
                fake.pop("doi")
                chosen[k] = fake
                fabricated += 1
        d = root / f"paper-{n:05d}"
        d.mkdir(parents=True)
        keys = ",".join(f"ref{i}" for i in range(len(chosen)))
        d.joinpath("main.tex").write_text(
            f"\\documentclass{{article}}\\begin{{document}}\\cite{{{keys}}}\\bibliography{{refs}}\\end{{document}}\n"
        )
        d.joinpath("refs.bib").write_text(bib_of(chosen, 0.6, rng), encoding="utf-8")
        total += len(chosen)
    in_snapshot = [p for i, p in enumerate(pool) if i not in newer]
    return in_snapshot, [pool[i] for i in sorted(newer)], total


class PeakRss:
    """The largest resident size seen of processes whose command line has ``marker``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if self.marker.encode() not in cmd:
                        continue
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                except OSError:
                    continue

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kb


def run_venue(
    venue: Path, out: Path, env: dict[str, str], extra: list[str], fake: ScholarlyFake, refs: int, label: str
) -> None:
    fake.clear_log()
    workers = PeakRss("ray::batch_task")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(venue), "--venue", str(out), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    wall = time.perf_counter() - t0
    worker_peak = workers.stop()
    driver_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
    rows = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    n = len(rows)
    counted = sum(r["entries"] for r in rows)
    flagged = sum(r["likely_fabricated"] for r in rows)
    statuses: dict[str, int] = {}
    for r in rows:
        for s, c in r["statuses"].items():
            statuses[s] = statuses.get(s, 0) + c
    local = 0  # references the snapshot answered (their verdict's method is snapshot_*)
    for f in (out / "papers").glob("*.json"):
        entries = json.loads(f.read_text())["entries"]
        local += sum(str(e.get("method", "")).startswith("snapshot_") for e in entries)
    counts = {k: v for k, v in fake.counts().items() if v}
    total = sum(counts.values())
    last = [ln for ln in proc.stderr.splitlines() if "venue:" in ln]
    print(
        f"{label}: {n} papers, {counted:,} references in {wall:.0f} s: {n / wall:.1f} papers/s, "
        f"{counted / wall:,.0f} references/s; {total} requests {counts} = {total / max(1, counted):.4f} per "
        f"reference; peak memory: driver {driver_peak / 1024:.0f} MB"
        + (f", largest worker {worker_peak / 1024:.0f} MB" if worker_peak else "")
        + f"; answered by the snapshot without a request: {local:,} ({100 * local / max(1, counted):.1f}%)"
        + f"; likely fabricated {flagged}; {statuses}"
    )
    if last:
        print("   ", last[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=2000)
    ap.add_argument("--refs", type=int, default=30, help="references per paper")
    ap.add_argument("--pool", type=int, default=40_000, help="distinct real works cited")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--no-local", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-venue-"))
    t0 = time.perf_counter()
    pool, newer, total = make_venue(tmp / "venue", args.papers, args.refs, args.pool, args.seed)
    print(
        f"venue: {args.papers} papers, {total:,} references from {args.pool:,} works "
        f"({len(newer)} newer than the snapshot), made in {time.perf_counter() - t0:.0f} s"
    )
    snap = build_pool_snapshot(tmp, pool)
    with ScholarlyFake([_complete(p) for p in newer]) as fake:
        base = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
        base.update(
            fake.env(), CITELENS_SNAPSHOT=str(snap), CITELENS_S2_RPS="20", CITELENS_VERIFY_DEADLINE="0"
        )
        if not args.no_local:
            env = {**base, "CITELENS_CACHE_DIR": str(tmp / "cache-local")}
            run_venue(tmp / "venue", tmp / "out-local", env, [], fake, total, "one machine, snapshot")
        if not args.no_ray:
            with throwaway_postgres() as url:
                env = {**base, "CITELENS_CACHE": url, "CITELENS_CACHE_DIR": str(tmp / "cache-ray")}
                run_venue(
                    tmp / "venue",
                    tmp / "out-ray",
                    env,
                    ["--ray", "--workers", "2", "--batch", "50"],
                    fake,
                    total,
                    "local Ray, 2 workers, PostgreSQL cache, snapshot",
                )


if __name__ == "__main__":
    main()
