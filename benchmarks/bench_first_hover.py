"""The first hover after opening a paper, cold: its latency and its length in lines.

    .venv/bin/python -m benchmarks.bench_first_hover [--runs 10] [--preset neovim]

Each run starts a fresh ``citelens serve`` (pytest-lsp client) with an empty cache on the
paper of tests/vscode/paper.py (a wrong DOI, an invented paper, a right one), against the
fake scholarly APIs on 127.0.0.1, no model. It waits for the verdicts (diagnostics), then
hovers each cited key once, the first hover of the session on it, and measures the time
from the request to the answer at the client. Prints p50/p95 per key and over all, the line
count of each hover, whether a hover still says "Looking up…" (a hover never updates), and
the time from didOpen to the first diagnostic of a verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import open_doc, session, wait_for
from tests.vscode.paper import FABRICATED_KEY, MISMATCH_KEY, fake_papers, seed

KEYS = (MISMATCH_KEY, FABRICATED_KEY, "vaswani2017attention")


async def one_run(preset: str) -> tuple[float, dict[str, tuple[float, str]]]:
    with tempfile.TemporaryDirectory() as tmp, ScholarlyFake() as fake:
        for p in fake_papers():
            fake.add_paper(p)
        paper = seed(Path(tmp) / "paper")
        env = {**fake.env(cache=Path(tmp) / "cache"), "CITELENS_S2_RPS": "1000"}
        settings = {"verifyDebounceMs": 0, "fetchEntryUrls": False}
        async with session(preset, paper.dir, env=env, settings=settings) as client:
            t0 = time.perf_counter()
            u = open_doc(client, paper.tex)

            def verdicts() -> bool:
                codes = {str(d.code) for d in client.diagnostics.get(u, [])}
                return {"DOI_MISMATCH", "NOT_FOUND"} <= codes

            await wait_for(verdicts, 60, "verdicts")
            first_squiggle = time.perf_counter() - t0
            text = paper.tex.read_text(encoding="utf-8")
            out: dict[str, tuple[float, str]] = {}
            for key in KEYS:
                offset = text.index("{" + key) + 3
                line = text.count("\n", 0, offset)
                col = offset - (text.rfind("\n", 0, offset) + 1)
                h0 = time.perf_counter()
                hover = await client.text_document_hover_async(
                    lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(line, col))
                )
                assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
                out[key] = (time.perf_counter() - h0, hover.contents.value)
            return first_squiggle, out


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--preset", default="neovim")
    args = ap.parse_args()
    squiggles: list[float] = []
    latencies: dict[str, list[float]] = {k: [] for k in KEYS}
    last: dict[str, str] = {}
    unsettled = 0
    for _ in range(args.runs):
        s, hovers = asyncio.run(one_run(args.preset))
        squiggles.append(s)
        for key, (dt, text) in hovers.items():
            latencies[key].append(dt)
            last[key] = text
            unsettled += "Looking up" in text
    every = [x for v in latencies.values() for x in v]
    print(f"{args.runs} cold runs, preset {args.preset}")
    print(f"open -> first verdict diagnostic: p50 {statistics.median(squiggles):.2f} s, "
          f"p95 {_pct(squiggles, 0.95):.2f} s")
    for key in KEYS:
        v = latencies[key]
        print(f"first hover {key:22s} p50 {statistics.median(v) * 1000:7.1f} ms  "
              f"p95 {_pct(v, 0.95) * 1000:7.1f} ms  lines {len(last[key].splitlines())}")
    print(f"first hover, all keys:  p50 {statistics.median(every) * 1000:.1f} ms, "
          f"p95 {_pct(every, 0.95) * 1000:.1f} ms")
    print(f"hovers still saying 'Looking up…': {unsettled} of {len(every)}")


if __name__ == "__main__":
    main()
