"""Verify 300 real entries against the fake APIs enforcing the real rate limits.

    .venv/bin/python -m benchmarks.bench_verify [--world agree|preprints] [--timeline]
    .venv/bin/python -m benchmarks.bench_verify --world preprints --runs 3 --code . --code /tmp/before

Prints the cold run (empty cache): wall time, requests per API, statuses; the
warm run (same cache): wall time and requests; and the lower bound the rate
limits allow for this request plan, with our ratio to it. Targets: cold <= 20 s,
warm <= 1 s. Regenerate the input with ``python -m benchmarks.make_bib300``.

``--world`` is what the fake APIs hold: ``agree`` (default), every source the paper as the
entry cites it; ``preprints``, the shape of a real bibliography the sources know as preprints
(issue 45): each paper with an arXiv id cited at its venue is held by Semantic Scholar,
OpenAlex and arXiv as the preprint (venue arXiv, a year earlier), by Crossref and doi.org as
published, so the verdicts that depend on the paper's other versions ask for them.

``--code DIR`` (repeatable; ``.`` is this checkout) runs the cold and warm runs with
``DIR/server`` on the path (e.g. ``git archive cea4807 | tar -x -C /tmp/before``), ``--runs N``
times in turn (A B A B ...: pairs on the same machine), and prints each one's median cold
wall time and whether its verdicts (status per entry) are the same as the first one's.

``--openalex-budget USD`` runs behind OpenAlex's 2026 daily budget (USD a day without a key,
0.10 in 2026: the fake meters it as OpenAlex's gateway does); every run prints what its
OpenAlex calls cost at those prices and the lines it said about a source that refused.
``--mailto`` runs as a user who set a contact address (``mailto``): Crossref's polite pool,
10 requests/s and 3 at once, where the default is its public pool (5/s, one at a time).
``--refuse SOURCE`` makes that source refuse two seconds into the cold run: HTTP 429 with
``Retry-After: 3600`` to every request (a source that asks for an hour: a check must not wait).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import hashlib
import json
import math
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from citelens.core.model import EntryView  # noqa: E402
from citelens.core.settings import from_sources  # noqa: E402
from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.documents.read import read_text  # noqa: E402
from citelens.sources.transport import DEFAULT_RATES, Sources  # noqa: E402
from citelens.verify.cache import VerificationCache  # noqa: E402
from citelens.verify.identity import identifiers  # noqa: E402
from citelens.verify.scheduler import verify_entries  # noqa: E402
from citelens.verify.status import Verification  # noqa: E402

BIB = HERE / "data" / "bib300.bib"
PAPERS = HERE / "data" / "bib300_papers.json"


def lower_bound(n_batch_ids: int, n_title: int) -> tuple[float, str]:
    """Seconds the real rate limits need at least for this plan: the S2 batch requests
    (1/s) and one successful title lookup per title-only entry, spread over the hosts
    that answer title searches (S2 1/s + Crossref 5/s + OpenAlex 10/s)."""
    from tests.fakes.scholarly import REAL_LIMITS

    batches = math.ceil(n_batch_ids / 500)
    title_rate = sum(REAL_LIMITS[h][0] for h in ("s2", "crossref", "openalex"))
    # the first S2 request starts at t=0; S2 spends `batches` slots on batches
    t = max((batches - 1) / REAL_LIMITS["s2"][0], n_title / title_rate)
    how = (f"{batches} S2 batch request(s) for {n_batch_ids} ids; {n_title} title-only entries "
           f"at best {title_rate:g} title lookups/s over S2+Crossref+OpenAlex")
    return t, how


def preprints_world(papers: list[dict[str, object]]) -> list[dict[str, object]]:
    """The papers as the ``preprints`` world holds them (see the module's docstring)."""
    out = []
    for p in papers:
        venue = str(p.get("venue") or "").lower()
        year = p.get("year")
        if p.get("arxiv") and isinstance(year, int) and venue and not any(
            w in venue for w in ("arxiv", "corr", "e-print")
        ):
            q = copy.deepcopy(p)
            preprint = {"venue": "arXiv", "year": year - 1}
            q["as"] = {src: dict(preprint) for src in ("s2", "openalex", "arxiv")}
            out.append(q)
        else:
            out.append(p)
    return out


def _papers_file(world: str, tmp: str) -> Path:
    if world == "agree":
        return PAPERS
    data = json.loads(PAPERS.read_text(encoding="utf-8"))
    path = Path(tmp) / f"papers-{world}.json"
    path.write_text(json.dumps({"papers": preprints_world(data["papers"])}), encoding="utf-8")
    return path


def _start_fake(papers: Path = PAPERS, openalex_budget: float | None = None
                ) -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    """The fake in its own process (as in real life, the APIs do not share our GIL);
    ``openalex_budget``: OpenAlex meters its keyless daily budget (dollars)."""
    from tests.fakes.scholarly import ENV_VARS

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # this checkout's fake
    budget = [] if openalex_budget is None else ["--openalex-budget", str(openalex_budget)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.scholarly", "--port", str(port), "--papers",
         str(papers), "--enforce-rates", *budget], cwd=HERE.parent, stdout=subprocess.PIPE,
        text=True, env=env)
    assert proc.stdout is not None
    urls: dict[str, str] = {}
    for line in proc.stdout:
        if line.startswith("export "):
            name, _, value = line[len("export "):].strip().partition("=")
            urls[name] = value
            if len(urls) == len(ENV_VARS):
                break
    return proc, f"http://127.0.0.1:{port}", urls


async def one_run(world: str, timeline: bool, fake: str | None = None,
                  openalex_budget: float | None = None, refuse: str | None = None,
                  mailto: bool = False) -> None:
    """The cold and warm runs; ``fake``: the root of a fake already running (its URLs in the
    environment: a run of another checkout, whose code the fake's module may not import)."""
    text = read_text(BIB)
    bib = parse_bib(text, str(BIB))
    views = [entry_view(e) for e in bib.entries]
    n_ids = sum(len(identifiers(v).s2_batch_ids()) for v in views)
    n_title = sum(1 for v in views if not identifiers(v) and v.title.strip())
    if fake is not None:
        urls = {k: v for k, v in os.environ.items() if k.startswith("CITELENS_") and k.endswith("_URL")}
        await _bench(views, n_ids, n_title, fake, urls, timeline, refuse, mailto)
        return
    with tempfile.TemporaryDirectory() as tmp:
        proc, root, env = _start_fake(_papers_file(world, tmp), openalex_budget)
        try:
            await _bench(views, n_ids, n_title, root, env, timeline, refuse, mailto)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


async def _refuse_later(control: httpx.AsyncClient, source: str, after_s: float = 2.0) -> None:
    """``source`` answers 429 with an hour's Retry-After from ``after_s`` on (mid-run)."""
    await asyncio.sleep(after_s)
    await control.post("", json={"action": "mode", "source": source, "mode": "429", "retry_after": 3600})


async def _bench(views: list[EntryView], n_ids: int, n_title: int, root: str,
                 env: dict[str, str], timeline: bool = False, refuse: str | None = None,
                 mailto: bool = False) -> None:
    control = httpx.AsyncClient(base_url=root + "/_control", timeout=30)
    if mailto:  # Crossref's polite pool (its 2026 limits for a caller with a contact address)
        env = {**env, "CITELENS_MAILTO": "bench@example.org"}
        await control.post("", json={"action": "rate", "source": "crossref", "per_second": 10.0,
                                     "max_concurrency": 3})
    with tempfile.TemporaryDirectory() as tmp:
        base = from_sources(env)
        settings = replace(base, cache_dir=tmp, request_timeout_s=10.0, retry_backoff_s=2.0)
        logs: list[str] = []
        for label in ("cold", "warm"):
            await control.post("", json={"action": "clear_log"})
            cache = VerificationCache(Path(tmp))
            # (a contact address: the polite rates Sources picks for it, not the public ones)
            sources = Sources.from_settings(settings, logs.append, rates=None if mailto else DEFAULT_RATES)
            t0 = time.perf_counter()
            at: dict[str, float] = {}
            refusing = (asyncio.ensure_future(_refuse_later(control, refuse))
                        if refuse and label == "cold" else None)
            res = await verify_entries(
                views, settings, sources=sources, cache=cache, log=logs.append,
                on_verdict=functools.partial(_shown, at, t0))
            wall = time.perf_counter() - t0
            if refusing is not None:
                refusing.cancel()
                await control.post("", json={"action": "mode", "source": refuse, "mode": "ok"})
            await sources.aclose()
            cache.close()
            reqs = (await control.get("/requests")).json()
            counts = Counter(r["source"] for r in reqs)
            too_many = Counter(r["source"] for r in reqs if r["status"] == 429)
            statuses = Counter(v.status.value for v in res.values())
            print(f"{label}: {len(res)} entries in {wall:.2f} s; requests {dict(counts) or 'none'}"
                  f" (answered 429: {dict(too_many) or 'none'}); {dict(sorted(statuses.items()))}")
            if label == "cold":
                spent = sum(float(r.get("cost_usd") or 0) for r in reqs if r["source"] == "openalex")
                said = [m for m in logs if "requests so far" not in m]
                print(f"  openalex: ${spent:.4f} of calls at its 2026 prices; said "
                      f"({len(said)} line{'' if len(said) == 1 else 's'}): {' | '.join(said) or 'nothing'}")
                kinds = Counter(_kind(r) for r in reqs)
                print(f"  requests per entry: {len(reqs) / max(len(res), 1):.3f}; by request: "
                      + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
            if label == "cold":
                times = sorted(at.values()) or [wall]
                print("  verdicts shown at (s): " + ", ".join(
                    f"{q} {times[min(len(times) - 1, int(len(times) * f))]:.2f}"
                    for q, f in (("first", 0.0), ("half", 0.5), ("90%", 0.9), ("99%", 0.99)))
                    + f", last {times[-1]:.2f}")
                if timeline:
                    late = sorted(at.items(), key=lambda kv: -kv[1])[:12]
                    print("  last verdicts: " + "; ".join(
                        f"{k} {t:.1f} s {res[k].status.value}" for k, t in late))
                verdicts = sorted((k, v.status.value) for k, v in res.items())
                print("  verdicts " + json.dumps(verdicts))
            if label == "cold" and timeline:
                t_first = reqs[0]["t"] if reqs else 0.0
                for r in reqs:
                    query = ",".join(f"{k}={v}" for k, v in (r.get("query") or {}).items()
                                     if k not in ("fields", "mailto"))
                    print(f"    {r['t'] - t_first:6.2f} {r['source']:9} {r['status']} {r['path']}"
                          f" {query[:120]}")
            if label == "cold" and fake_module_importable():
                bound, how = lower_bound(n_ids, n_title)
                print(f"  lower bound for this plan: {bound:.2f} s ({how}); "
                      f"ratio {wall / bound if bound else float('inf'):.2f}")
                odd = [v for v in res.values() if v.status.value not in ("VERIFIED", "PARTIAL")]
                for v in odd[:8]:
                    print(f"  {v.key}: {v.status.value}: {v.summary[:140]}")
    await control.aclose()


def _shown(at: dict[str, float], t0: float, v: Verification) -> None:
    at.setdefault(v.key, time.perf_counter() - t0)


def fake_module_importable() -> bool:
    try:
        import tests.fakes.scholarly  # noqa: F401
    except ImportError:  # another checkout's code on the path
        return False
    return True


def _kind(r: dict[str, object]) -> str:
    """``crossref GET /works filter=doi`` etc.: what one logged request was."""
    query = r.get("query") if isinstance(r.get("query"), dict) else {}
    assert isinstance(query, dict)
    flt = str(query.get("filter", ""))
    tag = (" filter=" + flt.split(":", 1)[0]) if flt else ""
    path = str(r["path"])
    path = "/works/{doi}" if path.startswith("/works/") else path
    path = "/paper/{id}" if path.startswith("/paper/") and "search" not in path \
        and "batch" not in path else path
    return f"{r['source']} {r['method']} {path}{tag}"


_COLD = re.compile(r"^cold: (\d+) entries in ([0-9.]+) s; requests (.*)$")


def paired(codes: list[str], runs: int, world: str, openalex_budget: float | None = None,
           refuse: str | None = None, mailto: bool = False) -> None:
    """``runs`` cold+warm runs of each checkout in ``codes``, in turn; their medians."""
    walls: dict[str, list[float]] = {c: [] for c in codes}
    verdicts: dict[str, list[list[str]]] = {}
    lines: dict[str, str] = {}
    shown: dict[str, list[str]] = {}
    for _ in range(runs):
        for code in codes:
            with tempfile.TemporaryDirectory() as tmp:
                # a fresh one per run
                proc, root, urls = _start_fake(_papers_file(world, tmp), openalex_budget)
                env = {**os.environ, **urls}
                if code != ".":
                    env["PYTHONPATH"] = str(Path(code).resolve() / "server")
                try:
                    out = subprocess.run(
                        [sys.executable, "-m", "benchmarks.bench_verify", "--fake", root,
                         *(["--refuse", refuse] if refuse else []), *(["--mailto"] if mailto else [])],
                        cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=1800,
                    )
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
            for line in out.stdout.splitlines():
                if line.startswith(("  verdicts shown at", "  openalex: $")):
                    shown.setdefault(code, []).append(line.strip())
                m = _COLD.match(line)
                if m:
                    walls[code].append(float(m.group(2)))
                    lines[code] = line
                elif line.startswith("  verdicts ["):
                    verdicts[code] = json.loads(line[len("  verdicts "):])
            if out.returncode:
                print(f"{code}: exit {out.returncode}\n{out.stderr[-2000:]}")
    first = verdicts.get(codes[0], [])
    for code in codes:
        mine = verdicts.get(code, [])
        differ = sum(1 for a, b in zip(first, mine, strict=False) if a != b) + abs(len(first) - len(mine))
        digest = hashlib.sha1(json.dumps(mine).encode()).hexdigest()[:10]
        ws = walls[code]
        med = statistics.median(ws) if ws else float("nan")
        print(f"{code}: cold median {med:.2f} s over {len(ws)} runs "
              f"({', '.join(f'{w:.1f}' for w in ws)}); verdicts {digest}, "
              f"{differ} differing from {codes[0]}\n    last: {lines.get(code, '')}"
              + "".join(f"\n    {line}" for line in shown.get(code, [])))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", choices=("agree", "preprints"), default="agree")
    ap.add_argument("--timeline", action="store_true", help="print every request of the cold run")
    ap.add_argument("--code", action="append", default=[], help="a checkout to run (repeatable)")
    ap.add_argument("--runs", type=int, default=1, help="cold runs of each --code, in turn")
    ap.add_argument("--fake", help=argparse.SUPPRESS)  # a fake already running (--code's runs)
    ap.add_argument("--openalex-budget", type=float, metavar="USD",
                    help="OpenAlex meters its 2026 daily budget: USD a day without a key (0.10)")
    ap.add_argument("--mailto", action="store_true",
                    help="a contact address is set: Crossref's polite pool (10/s, 3 at once)")
    ap.add_argument("--refuse", metavar="SOURCE",
                    help="SOURCE answers 429 with Retry-After 3600 from 2 s into the cold run")
    args = ap.parse_args(argv)
    if args.code:
        paired(args.code, args.runs, args.world, args.openalex_budget, args.refuse, args.mailto)
    else:
        asyncio.run(one_run(args.world, args.timeline, args.fake, args.openalex_budget, args.refuse,
                            args.mailto))


if __name__ == "__main__":
    main()
