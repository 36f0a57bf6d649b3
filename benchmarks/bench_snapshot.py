"""The snapshot tier: build a snapshot of N works from OpenAlex-format files, look papers up
in it, and check a bibliography with and without it against the fake APIs on loopback.

    .venv/bin/python benchmarks/bench_snapshot.py                    # 1,000,000 works, 10,000 refs
    .venv/bin/python benchmarks/bench_snapshot.py --works 50000 --refs 2000   # quick

Prints: build time, disk per million works, exact (DOI) and fuzzy (title with a typo)
lookups per second, and ``citelens check`` wall time and requests for the references with
and without ``CITELENS_SNAPSHOT``. The works are generated in the OpenAlex snapshot's
layout (``data/works/updated_date=*/part_*.gz``, Work objects as the fake API serves them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from tests.fakes.scholarly import ScholarlyFake, _complete, openalex_work  # noqa: E402

DATE = "2025-10-01"
_SYL = ["ka", "lo", "mi", "ne", "ro", "ta", "vi", "su", "pe", "do", "gra", "phi", "zen", "tor", "lin", "qua"]


def vocabulary(rng: random.Random, n: int = 20000) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYL) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def paper(i: int, rng: random.Random, vocab: list[str]) -> dict[str, Any]:
    # Zipf-like word choice: titles share common words, as real ones do
    title = " ".join(
        vocab[min(len(vocab) - 1, int(rng.paretovariate(0.9)) - 1 + rng.randint(0, 50))]
        if rng.random() < 0.4
        else rng.choice(vocab)
        for _ in range(rng.randint(5, 11))
    )
    title = title[:1].upper() + title[1:]
    authors = [f"{rng.choice(vocab).title()} {rng.choice(vocab).title()}" for _ in range(rng.randint(1, 5))]
    return {
        "title": title,
        "authors": authors,
        "year": rng.randint(1990, 2025),
        "venue": f"Journal of {rng.choice(vocab).title()}",
        "doi": f"10.9999/bench.{i}",
        "s2_paper_id": f"{i:040x}",
        "corpus_id": 10_000_000 + i,
        "volume": str(rng.randint(1, 60)),
        "pages": f"{rng.randint(1, 500)}-{rng.randint(501, 900)}",
    }


def write_openalex(folder: Path, n: int, seed: int, parts: int = 8) -> None:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    out = folder / "data" / "works" / f"updated_date={DATE}"
    out.mkdir(parents=True, exist_ok=True)
    per = (n + parts - 1) // parts
    for p in range(parts):
        with gzip.open(out / f"part_{p:03d}.gz", "wt", encoding="utf-8", compresslevel=1) as fh:
            for i in range(p * per, min(n, (p + 1) * per)):
                fh.write(json.dumps(openalex_work(_complete(paper(i, rng, vocab)))) + "\n")


def build_pool_snapshot(tmp: Path, pool: list[dict[str, Any]]) -> Path:
    """``tmp/snap.db``: a snapshot built by ``citelens snapshot build`` from an OpenAlex
    dump (one part under ``tmp/oa``) of the generated papers ``pool``."""
    part = tmp / "oa" / "data" / "works" / f"updated_date={DATE}" / "part_000.gz"
    part.parent.mkdir(parents=True)
    with gzip.open(part, "wt", encoding="utf-8", compresslevel=1) as fh:
        for p in pool:
            fh.write(json.dumps(openalex_work(_complete(p))) + "\n")
    snap = tmp / "snap.db"
    subprocess.run(
        [sys.executable, "-m", "citelens", "snapshot", "build", str(snap), "--openalex", str(tmp / "oa")],
        check=True,
        capture_output=True,
    )
    return snap


def papers_for(indexes: list[int], n: int, seed: int) -> dict[int, dict[str, Any]]:
    """The generated papers with these indexes (the generator is replayed to reach them)."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    want = set(indexes)
    out = {}
    for i in range(n):
        p = paper(i, rng, vocab)
        if i in want:
            out[i] = p
    return out


def typo(title: str, rng: random.Random) -> str:
    words = title.split()
    k = rng.randrange(len(words))
    w = words[k]
    words[k] = w[:-1] + ("x" if w[-1] != "x" else "y") if len(w) > 3 else w
    return " ".join(words)


def bib_of(papers: list[dict[str, Any]], with_doi: float, rng: random.Random) -> str:
    out = []
    for i, p in enumerate(papers):
        authors = " and ".join(f"{a.split()[-1]}, {' '.join(a.split()[:-1])}" for a in p["authors"])
        doi = f",\n  doi = {{{p['doi']}}}" if p.get("doi") and rng.random() < with_doi else ""
        out.append(
            f"@article{{ref{i},\n  title = {{{p['title']}}},\n  author = {{{authors}}},\n"
            f"  journal = {{{p['venue']}}},\n  year = {{{p['year']}}}{doi}\n}}\n"
        )
    return "\n".join(out)


def run_check(bib: Path, env: dict[str, str]) -> tuple[float, dict[str, Any], str, int]:
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(bib), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    wall = time.perf_counter() - t0
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return wall, json.loads(proc.stdout), proc.stderr, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--works", type=int, default=1_000_000)
    ap.add_argument("--refs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", metavar="DIR", help="keep the files here (and reuse a snapshot found there)")
    ap.add_argument("--no-api-run", action="store_true", help="skip the check without the snapshot")
    args = ap.parse_args()
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="bench-snapshot-"))
    tmp.mkdir(parents=True, exist_ok=True)
    snap = tmp / "snap.db"
    if not snap.exists():
        t0 = time.perf_counter()
        write_openalex(tmp / "openalex", args.works, args.seed)
        gen = time.perf_counter() - t0
        dump = sum(f.stat().st_size for f in (tmp / "openalex").rglob("*.gz"))
        print(f"generated {args.works:,} OpenAlex works ({dump / 1e6:.0f} MB gzipped) in {gen:.0f} s")
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "citelens",
                "snapshot",
                "build",
                str(snap),
                "--openalex",
                str(tmp / "openalex"),
            ],
            capture_output=True,
            text=True,
        )
        build_s = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(proc.stderr.strip().splitlines()[-1])
        size = snap.stat().st_size
        print(
            f"build: {build_s:.0f} s ({args.works / build_s:,.0f} works/s), peak memory {peak:.0f} MB; "
            f"disk {size / 1e6:.0f} MB = {size / args.works * 1e6 / 1e9:.2f} GB per million works"
        )

    from citelens.snapshot.store import Snapshot
    from citelens.verify.match.titles import title_similarity

    rng = random.Random(args.seed + 1)
    sample = sorted(rng.sample(range(args.works), args.refs))
    papers = papers_for(sample, args.works, args.seed)
    s = Snapshot(str(snap))
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 3:
        for i in sample[:5000]:
            assert s.by_id("doi", f"10.9999/bench.{i}")
            n += 1
    dt = time.perf_counter() - t0
    print(f"exact lookups (DOI): {n / dt:,.0f}/s")
    t0 = time.perf_counter()
    n = hits = 0
    for i in sample[:1000]:
        got = s.by_title(typo(papers[i]["title"], rng), title_similarity)
        hits += bool(got and got[0][1].doi == f"10.9999/bench.{i}")
        n += 1
        if time.perf_counter() - t0 > 20:
            break
    dt = time.perf_counter() - t0
    print(f"fuzzy lookups (title with a typo): {n / dt:,.0f}/s, right paper first in {hits}/{n}")
    t0 = time.perf_counter()
    for i in sample[:1000]:
        s.by_title(papers[i]["title"], title_similarity)
    print(f"title lookups (exact title): {1000 / (time.perf_counter() - t0):,.0f}/s")
    s.close()

    refs = [papers[i] for i in sample]
    bib = tmp / "refs.bib"
    bib.write_text(bib_of(refs, 0.7, random.Random(args.seed + 2)), encoding="utf-8")
    with ScholarlyFake([_complete(p) for p in refs]) as fake:
        base = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
        base.update(fake.env(), CITELENS_VERIFY_DEADLINE="0")
        runs = [("with the snapshot", {"CITELENS_SNAPSHOT": str(snap)})]
        if not args.no_api_run:
            runs.append(("through the APIs", {"CITELENS_S2_RPS": "100"}))
        for label, extra in runs:
            fake.clear_log()
            env = {**base, **extra, "CITELENS_CACHE_DIR": str(tmp / f"cache-{len(extra)}-{time.time()}")}
            wall, report, err, peak = run_check(bib, env)
            statuses: dict[str, int] = {}
            for e in report["entries"]:
                statuses[e["status"]] = statuses.get(e["status"], 0) + 1
            counts = {k: v for k, v in fake.counts().items() if v}
            total = sum(counts.values())
            print(
                f"check {len(refs):,} references {label}: {wall:.1f} s, {total} requests {counts}, "
                f"{total / len(refs):.3f} per reference, peak {peak / 1024:.0f} MB; {statuses}"
            )
            line = [ln for ln in err.splitlines() if "verified" in ln]
            if line:
                print("   ", line[-1])


if __name__ == "__main__":
    main()
