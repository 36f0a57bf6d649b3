"""Verify 300 real entries against the fake APIs enforcing the real rate limits.

    .venv/bin/python -m benchmarks.bench_verify

Prints the cold run (empty cache): wall time, requests per API, statuses; the
warm run (same cache): wall time and requests; and the lower bound the rate
limits allow for this request plan, with our ratio to it. Targets: cold <= 20 s,
warm <= 1 s. Regenerate the input with ``python -m benchmarks.make_bib300``.
"""

from __future__ import annotations

import asyncio
import math
import socket
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

from tests.fakes.scholarly import ENV_VARS, REAL_LIMITS  # noqa: E402

from citelens.core.model import EntryView  # noqa: E402
from citelens.core.settings import from_sources  # noqa: E402
from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.documents.read import read_text  # noqa: E402
from citelens.sources.transport import DEFAULT_RATES, Sources  # noqa: E402
from citelens.verify.cache import VerificationCache  # noqa: E402
from citelens.verify.identity import identifiers  # noqa: E402
from citelens.verify.scheduler import verify_entries  # noqa: E402

BIB = HERE / "data" / "bib300.bib"
PAPERS = HERE / "data" / "bib300_papers.json"


def lower_bound(n_batch_ids: int, n_title: int) -> tuple[float, str]:
    """Seconds the real rate limits need at least for this plan: the S2 batch requests
    (1/s) and one successful title lookup per title-only entry, spread over the hosts
    that answer title searches (S2 1/s + Crossref 5/s + OpenAlex 10/s)."""
    batches = math.ceil(n_batch_ids / 500)
    title_rate = sum(REAL_LIMITS[h][0] for h in ("s2", "crossref", "openalex"))
    # the first S2 request starts at t=0; S2 spends `batches` slots on batches
    t = max((batches - 1) / REAL_LIMITS["s2"][0], n_title / title_rate)
    how = (f"{batches} S2 batch request(s) for {n_batch_ids} ids; {n_title} title-only entries "
           f"at best {title_rate:g} title lookups/s over S2+Crossref+OpenAlex")
    return t, how


def _start_fake() -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    """The fake in its own process (as in real life, the APIs do not share our GIL)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.scholarly", "--port", str(port), "--papers",
         str(PAPERS), "--enforce-rates"], cwd=HERE.parent, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    urls: dict[str, str] = {}
    for line in proc.stdout:
        if line.startswith("export "):
            name, _, value = line[len("export "):].strip().partition("=")
            urls[name] = value
            if len(urls) == len(ENV_VARS):
                break
    return proc, f"http://127.0.0.1:{port}", urls


async def main() -> None:
    text = read_text(BIB)
    bib = parse_bib(text, str(BIB))
    views = [entry_view(e) for e in bib.entries]
    n_ids = sum(len(identifiers(v).s2_batch_ids()) for v in views)
    n_title = sum(1 for v in views if not identifiers(v) and v.title.strip())
    proc, root, env = _start_fake()
    try:
        await _bench(views, n_ids, n_title, root, env)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _bench(views: list[EntryView], n_ids: int, n_title: int, root: str,
                 env: dict[str, str]) -> None:
    control = httpx.AsyncClient(base_url=root + "/_control", timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        base = from_sources(env)
        settings = replace(base, cache_dir=tmp, request_timeout_s=10.0, retry_backoff_s=2.0)
        logs: list[str] = []
        for label in ("cold", "warm"):
            await control.post("", json={"action": "clear_log"})
            cache = VerificationCache(Path(tmp))
            sources = Sources.from_settings(settings, logs.append, rates=DEFAULT_RATES)
            t0 = time.perf_counter()
            res = await verify_entries(views, settings, sources=sources, cache=cache,
                                       log=logs.append)
            wall = time.perf_counter() - t0
            await sources.aclose()
            cache.close()
            reqs = (await control.get("/requests")).json()
            counts = Counter(r["source"] for r in reqs)
            too_many = Counter(r["source"] for r in reqs if r["status"] == 429)
            statuses = Counter(v.status.value for v in res.values())
            print(f"{label}: {len(res)} entries in {wall:.2f} s; requests {dict(counts) or 'none'}"
                  f" (answered 429: {dict(too_many) or 'none'}); {dict(sorted(statuses.items()))}")
            if label == "cold":
                kinds = Counter(_kind(r) for r in reqs)
                print(f"  requests per entry: {len(reqs) / max(len(res), 1):.3f}; by request: "
                      + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
            if label == "cold" and "--timeline" in sys.argv:
                t_first = reqs[0]["t"] if reqs else 0.0
                for r in reqs:
                    print(f"    {r['t'] - t_first:6.2f} {r['source']:9} {r['status']} {r['path']}")
            if label == "cold":
                bound, how = lower_bound(n_ids, n_title)
                print(f"  lower bound for this plan: {bound:.2f} s ({how}); "
                      f"ratio {wall / bound if bound else float('inf'):.2f}")
                odd = [v for v in res.values() if v.status.value not in ("VERIFIED", "PARTIAL")]
                for v in odd[:8]:
                    print(f"  {v.key}: {v.status.value}: {v.summary[:140]}")
    await control.aclose()


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


if __name__ == "__main__":
    asyncio.run(main())
