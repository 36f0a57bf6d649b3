"""A labelled venue as a programme committee runs it: wall time, requests, references answered
without a request, peak memory and detection on its labels, for the code of this checkout or
of another (``--server DIR``: its ``server/`` folder, to measure "before").

    .venv/bin/python benchmarks/bench_venue_chair.py --papers 200 --refs 50      # 10,000 references
    .venv/bin/python benchmarks/bench_venue_chair.py --papers 2000 --refs 50     # 100,000 references
    .venv/bin/python benchmarks/bench_venue_chair.py --papers 200 --server /tmp/before/server
    .venv/bin/python benchmarks/bench_venue_chair.py --papers 2000 --world free-key

The venue's shape (printed): papers of ``--refs`` references drawn from a pool of works with a
popularity skew (the same classics in many papers: duplicates across papers), 3% fabricated
(a real-looking title nobody wrote), 3% with a wrong DOI (half a DOI that resolves nowhere,
half another pool paper's DOI), 5% of the pool newer than the snapshot (year 2026, only the
fake APIs hold them). The snapshot (OpenAlex dump, data of 2025-10-01) holds the rest; the fake
APIs on loopback hold every real work, at the sources' 2026 limits for a chair who set a
contact address and keys (``LIMITS``: Semantic Scholar keyed at 10 requests/s, Crossref's
polite pool at 10/s and 3 at once, OpenAlex 10/s and 3 at once, doi.org, arXiv, PubMed at
their rates; a faster client is answered 429). ``--world free-key`` meters OpenAlex's daily
budget as in 2026 ($1 a day with the chair's free key: about 1,000 searches); the default,
``unmetered``, is the world before 2026. The fake's title searches look at the titles that
share a word with the query other than the most common (a search engine's index: ``--scan``
scores every title, 0.2 s of the fake's CPU a search at 40,000 works).

Printed per run: wall time; requests per host and their rate over the run; OpenAlex's dollars
spent; references answered locally; UNVERIFIED; peak memory; detection on the labels; the
machine's load (``uptime``) before and after, since 2 cores are shared.

Detection: a fabricated reference is detected when the venue report lists it as a finding
(``summary.jsonl``, any class); a wrong DOI likewise; a false alarm is a real reference with a
right or no DOI listed as a finding.
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
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from benchmarks.bench_snapshot import build_pool_snapshot, paper, vocabulary  # noqa: E402
from tests.fakes.scholarly import ScholarlyFake, _complete  # noqa: E402

#: The sources' limits the fake enforces (requests per second, at once): a chair with a
#: contact address (Crossref's polite pool) and a Semantic Scholar key.
LIMITS: dict[str, tuple[float, int]] = {
    "s2": (10.0, 3),
    "crossref": (10.0, 3),
    "openalex": (10.0, 3),
    "doi": (5.0, 2),
    "arxiv": (1 / 3, 1),
    "ncbi": (3.0, 1),
}
#: The fake's limiters are token buckets with room for this many requests, as real gateways
#: count: a strict spacing is broken by a loaded machine's thread scheduling alone.
BURST = 2
S2_KEY = "bench-chair-s2-key"
OPENALEX_KEY = "bench-chair-openalex-key"


def _bib(entries: list[tuple[dict[str, Any], str | None]]) -> str:
    out = []
    for i, (p, doi) in enumerate(entries):
        authors = " and ".join(f"{a.split()[-1]}, {' '.join(a.split()[:-1])}" for a in p["authors"])
        d = f",\n  doi = {{{doi}}}" if doi else ""
        out.append(
            f"@article{{ref{i},\n  title = {{{p['title']}}},\n  author = {{{authors}}},\n"
            f"  journal = {{{p['venue']}}},\n  year = {{{p['year']}}}{d}\n}}\n"
        )
    return "\n".join(out)


def make_venue(
    root: Path, papers: int, refs: int, pool_size: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, str]]]:
    """(pool in the snapshot, newer works only the APIs hold, labels: paper -> key -> label)."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    pool = [paper(i, rng, vocab) for i in range(pool_size)]
    newer = set(rng.sample(range(pool_size), pool_size * 5 // 100))
    for i, p in enumerate(pool):
        p["year"] = 2026 if i in newer else min(int(p["year"]), 2024)
    labels: dict[str, dict[str, str]] = {}
    for n in range(papers):
        picks: dict[int, None] = {}
        while len(picks) < refs:
            i = (
                int(rng.paretovariate(1.2) * pool_size / 20) % pool_size
                if rng.random() < 0.5
                else rng.randrange(pool_size)
            )
            picks[i] = None
        entries: list[tuple[dict[str, Any], str | None]] = []
        mine: dict[str, str] = {}
        for k, i in enumerate(picks):
            p = pool[i]
            r = rng.random()
            key = f"ref{k}"
            if r < 0.03:
                fake = paper(10_000_000 + n * 1000 + k, rng, vocab)
                fake["year"] = min(int(fake["year"]), 2024)
                entries.append((fake, None))
                mine[key] = "fabricated"
            elif r < 0.045:
                entries.append((p, f"10.9999/nowhere.{n}.{k}"))
                mine[key] = "wrong-doi-dead"
            elif r < 0.06:
                other = pool[(i + 1 + rng.randrange(pool_size - 1)) % pool_size]
                entries.append((p, str(other["doi"])))
                mine[key] = "wrong-doi-swap"
            else:
                entries.append((p, str(p["doi"]) if rng.random() < 0.6 else None))
                mine[key] = "newer" if i in newer else "real"
        d = root / f"paper-{n:05d}"
        d.mkdir(parents=True)
        keys = ",".join(f"ref{i}" for i in range(len(entries)))
        d.joinpath("main.tex").write_text(
            f"\\documentclass{{article}}\\title{{Paper {n}}}\\begin{{document}}\\cite{{{keys}}}"
            "\\bibliography{refs}\\end{document}\n"
        )
        d.joinpath("refs.bib").write_text(_bib(entries), encoding="utf-8")
        labels[d.name] = mine
    return [p for i, p in enumerate(pool) if i not in newer], [pool[i] for i in sorted(newer)], labels


def detection(out: Path, labels: dict[str, dict[str, str]]) -> dict[str, Any]:
    flagged: dict[str, set[str]] = {}
    for line in (out / "summary.jsonl").read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        flagged[row["paper"]] = {str(f.get("key")) for f in row.get("findings") or []}
    local = unverified = 0
    local_by: dict[str, int] = {}  # label -> references answered by the snapshot alone
    for f in (out / "papers").glob("*.json"):
        for e in json.loads(f.read_text())["entries"]:
            here = str(e.get("method", "")).startswith("snapshot_")
            local += here
            unverified += e.get("status") == "UNVERIFIED"
            if here:
                label = labels.get(f.stem, {}).get(str(e.get("key")), "?")
                local_by[label] = local_by.get(label, 0) + 1
    counts: dict[str, list[int]] = {}
    for name, mine in labels.items():
        for key, label in mine.items():
            c = counts.setdefault(label, [0, 0])
            c[0] += 1
            c[1] += key in flagged.get(name, set())
    return {"labels": counts, "local": local, "local_by": local_by, "unverified": unverified}


def _kind(r: dict[str, Any]) -> str:
    """``crossref /works filter=doi`` etc.: what one logged request was."""
    query = r.get("query") if isinstance(r.get("query"), dict) else {}
    flt = str(query.get("filter", ""))
    tag = " filter=" + flt.split(":", 1)[0] if flt else (" search" if any("query" in k or "search" in k
                                                                         for k in query) else "")
    path = str(r["path"])
    path = "/works/{doi}" if path.startswith("/works/") else path
    path = "/{doi}" if r["source"] == "doi" else path
    if path.startswith("/paper/") and "search" not in path and "batch" not in path:
        path = "/paper/{id}"
    return f"{r['source']} {path}{tag}"


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(venue: Path, out: Path, env: dict[str, str], fake: ScholarlyFake, label: str, labels: Any) -> None:
    fake.clear_log()
    print(f"  {label}: started at {_load()}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(venue), "--venue", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=14400,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    fake_cpu = sum(getattr(resource.getrusage(resource.RUSAGE_SELF), f) - getattr(mine, f)
                   for f in ("ru_utime", "ru_stime"))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = after.ru_maxrss
    counts = {k: v for k, v in fake.counts().items() if v}
    total = sum(counts.values())
    too_many = {k: n for k in counts if (n := sum(1 for r in fake.requests(k) if r["status"] == 429))}
    rates = ", ".join(f"{k} {v / wall:.1f}/s" for k, v in counts.items())
    kinds: dict[str, int] = {}
    for r in fake.requests():
        kinds[_kind(r)] = kinds.get(_kind(r), 0) + 1
    det = detection(out, labels)
    refs = sum(c[0] for c in det["labels"].values())
    lab = det["labels"]
    fab, dead, swap = (
        lab.get("fabricated", [0, 0]),
        lab.get("wrong-doi-dead", [0, 0]),
        lab.get("wrong-doi-swap", [0, 0]),
    )
    real, newer = lab.get("real", [0, 0]), lab.get("newer", [0, 0])
    print(
        f"{label}: exit {proc.returncode}; {refs:,} references in {wall:.0f} s ({refs / wall:.0f}/s); "
        f"{total:,} requests {counts}; answered locally {det['local']:,} "
        f"({100 * det['local'] / max(1, refs):.1f}%); "
        f"UNVERIFIED {det['unverified']}; peak memory {peak / 1024:.0f} MB\n"
        f"    CPU: the check {cpu:.0f} s, the fake APIs {fake_cpu:.0f} s\n"
        f"    by request: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}\n"
        f"    rates over the run: {rates}; answered 429: {too_many or 'none'}; "
        f"OpenAlex spent ${fake.spent_usd():.3f}\n"
        f"    detected: fabricated {fab[1]}/{fab[0]}, wrong DOI resolving nowhere {dead[1]}/{dead[0]}, "
        f"wrong DOI of another paper {swap[1]}/{swap[0]}; false alarms: real {real[1]}/{real[0]}, "
        f"newer than the snapshot {newer[1]}/{newer[0]}\n"
        # what the snapshot holds as cited: the real references it has (a wrong DOI needs
        # the DOI's own answer, a newer work is not in it)
        f"    answered locally: {det['local_by'].get('real', 0):,} of the {real[0]:,} real references "
        f"the snapshot holds ({100 * det['local_by'].get('real', 0) / max(1, real[0]):.1f}%); "
        f"by label {dict(sorted(det['local_by'].items()))}"
    )
    steps = [x for x in proc.stderr.splitlines() if " papers, " in x]
    for line in steps[:: max(1, len(steps) // 6)][:6] + steps[-1:]:
        print(f"    progress: {line[:260]}")
    for line in [x for x in proc.stderr.splitlines() if "budget" in x][:3]:
        print(f"    said: {line[:200]}")
    print(f"    finished at {_load()}", flush=True)
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=200)
    ap.add_argument("--refs", type=int, default=50)
    ap.add_argument("--pool", type=int, default=0, help="distinct works (default: 2/5 of the references)")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--server", action="append", default=[], help="a server/ folder to measure (repeatable)")
    ap.add_argument("--world", action="append", choices=("unmetered", "free-key"), default=[],
                    help="OpenAlex unmetered (before 2026) or behind its budget with a free key (repeatable)")
    ap.add_argument("--scan", action="store_true", help="the fake scores every title for a search")
    args = ap.parse_args()
    total = args.papers * args.refs
    pool_size = args.pool or max(1000, total * 2 // 5)
    tmp = Path(tempfile.mkdtemp(prefix="bench-chair-"))
    pool, newer, labels = make_venue(tmp / "venue", args.papers, args.refs, pool_size, args.seed)
    shape: dict[str, int] = {}
    for mine in labels.values():
        for lab in mine.values():
            shape[lab] = shape.get(lab, 0) + 1
    print(
        f"venue: {args.papers} papers x {args.refs} = {total:,} references from a pool of "
        f"{pool_size:,} works (popular ones in many papers); labels {dict(sorted(shape.items()))}; "
        f"{len(newer)} works newer than the snapshot (only the APIs hold them)"
    )
    snap = build_pool_snapshot(tmp, pool)
    with ScholarlyFake([_complete(p) for p in [*pool, *newer]], indexed_search=not args.scan) as fake:
        for source, (rps, at_once) in LIMITS.items():
            fake.set_rate_limit(source, rps, at_once, burst=BURST)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("CITELENS_", "S2_API_KEY"))}
        base.update(
            fake.env(), CITELENS_SNAPSHOT=str(snap), CITELENS_S2_RPS="10", CITELENS_VERIFY_DEADLINE="0",
            S2_API_KEY=S2_KEY, CITELENS_OPENALEX_API_KEY=OPENALEX_KEY, CITELENS_MAILTO="chair@example.org",
        )
        n = 0
        for world in args.world or ["unmetered"]:
            for server in args.server or [""]:
                # a whole day's budget for each run
                fake.set_openalex_budget(None if world == "unmetered" else 0.10, 1.0, keys={OPENALEX_KEY})
                env = {**base, "CITELENS_CACHE_DIR": str(tmp / f"cache-{n}")}
                if server:
                    env["PYTHONPATH"] = server
                label = f"{server or 'this checkout'} ({world})"
                run(tmp / "venue", tmp / f"out-{n}", env, fake, label, labels)
                n += 1


if __name__ == "__main__":
    main()
