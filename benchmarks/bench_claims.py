"""Claim checks: hover latency of a cached verdict, and the calls each path costs.

    .venv/bin/python -m benchmarks.bench_claims [--n 2000]

1. A cached verdict: ``ClaimChecker.cached`` + ``render_markdown`` (what a hover
   does once the check has run), p50/p95/max over ``--n`` lookups; target p95 <= 20 ms.
   Also ``extract_claim`` on a real corpus file (also on every hover).
2. Per path (fake model + fake full-text pages on 127.0.0.1): model calls
   (chat + embeddings), other HTTP requests (full texts, landing pages), and
   what the fake server saw.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import replace

from tests.fakes.llm import FakeLLM
from tests.harness import CORPUS, attention_view
from tests.test_claims_pipeline import ABSTRACT, CLAIM_P1, CLAIM_P2

from citelens.claims.checker import ClaimChecker
from citelens.claims.pipeline import check_claim
from citelens.claims.render import render_markdown
from citelens.claims.sentences import extract_claim
from citelens.core.model import Span
from citelens.core.settings import Settings
from citelens.sources.records import PaperRecord


def _record() -> PaperRecord:
    return PaperRecord(source="s2", title="Attention Is All You Need", abstract=ABSTRACT,
                       arxiv_id="1706.03762")


def _page() -> str:
    intro = " ".join(f"Background sentence {i} about sequence models." for i in range(150))
    results = ("Training the big Transformer took 3.5 days on eight P100 GPUs. "
               + " ".join(f"Ablation remark {i} on heads." for i in range(150)))
    return (f"<html><body><h2>Introduction</h2><p>{intro}</p><h2>Results</h2><p>{results}</p>"
            "</body></html>")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def cached_latency(fake: FakeLLM, n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        checker = ClaimChecker(fake.settings(), cache_dir=tmp)
        await checker.check(CLAIM_P1, attention_view(), _record())
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            hit = checker.cached(CLAIM_P1, attention_view(), _record())
            assert hit is not None
            render_markdown(hit)
            times.append((time.perf_counter() - t0) * 1000)
        await checker.aclose()
    return {"p50": statistics.median(times), "p95": _pct(times, 0.95), "max": max(times)}


def extraction_latency(n: int) -> dict[str, float] | None:
    path = (CORPUS / "papers" / "saier-phd-thesis" / "chapters"
            / "reference_coverage_and_granularity.tex")
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    spots = [i for i in range(len(text)) if text.startswith("\\cite", i)][:50]
    times = []
    for k in range(n):
        at = spots[k % len(spots)]
        t0 = time.perf_counter()
        extract_claim(text, Span(at, at + 10), "latex")
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50": statistics.median(times), "p95": _pct(times, 0.95), "max": max(times),
            "file_chars": float(len(text))}


async def paths(fake: FakeLLM) -> list[tuple[str, dict[str, object]]]:
    base = fake.settings(arxiv_url=fake.root + "/arxiv")
    rows: list[tuple[str, dict[str, object]]] = []

    async def one(name: str, claim: str, settings: Settings, setup: object = None) -> None:
        fake.clear()
        fake.pages.clear()
        if setup == "page":
            fake.page("/arxiv/html/1706.03762", _page())
        elif setup == "malformed":
            fake.reply("not json", "still not json")
        r = await check_claim(claim, attention_view(), _record(), settings=settings)
        rows.append((name, {
            "verdict": r.verdict.value if r.verdict else r.status.value,
            "model calls": r.llm_calls,
            "other http": r.http_calls,
            "fake saw chat": fake.chat_calls(),
            "fake saw embed": fake.embedding_calls(),
        }))

    await one("phase 1 decides (abstract known)", CLAIM_P1, base)
    await one("escalated, BM25 passages", CLAIM_P2, base, "page")
    await one("escalated, embedding passages", CLAIM_P2,
              replace(base, embedding_model="fake-embed"), "page")
    await one("escalated, no full text", CLAIM_P2, base)
    await one("no model configured", CLAIM_P1, replace(base, llm_model=None))
    await one("malformed output (retry, error)", CLAIM_P1, base, "malformed")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    with FakeLLM() as fake:
        fake.embedder = lambda t: [1.0, 0.0] if "P100" in t else [0.0, 1.0]
        lat = asyncio.run(cached_latency(fake, args.n))
        print(f"cached verdict lookup + render ({args.n}x): p50 {lat['p50']:.3f} ms, "
              f"p95 {lat['p95']:.3f} ms, max {lat['max']:.3f} ms "
              f"[target p95 <= 20 ms: {'OK' if lat['p95'] <= 20 else 'MISSED'}]")
        ext = extraction_latency(min(args.n, 500))
        if ext:
            print(f"extract_claim on a {int(ext['file_chars'])}-char thesis chapter: "
                  f"p50 {ext['p50']:.2f} ms, p95 {ext['p95']:.2f} ms, max {ext['max']:.2f} ms")
        print()
        rows = asyncio.run(paths(fake))
    cols = ["verdict", "model calls", "other http", "fake saw chat", "fake saw embed"]
    width = max(len(n) for n, _ in rows)
    print(f"{'path':<{width}}  " + "  ".join(f"{c:>15}" for c in cols))
    for name, row in rows:
        print(f"{name:<{width}}  " + "  ".join(f"{row[c]!s:>15}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
