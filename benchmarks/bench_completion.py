"""Completion benchmark: the real server (pytest-lsp client, Neovim-like) answering
``textDocument/completion`` inside ``\\cite{…}``.

* local keys: latency p50/p95 and item count, on the 300-entry bibliography and on the
  68k-entry Physical Review E bibliography (a main.tex citing 20 of its keys), for
  prefixes of 0-3 characters of real keys;
* first paper results: typing a title (no key matches) -> the first answer that holds
  papers, against the fake scholarly APIs (S2 paced at its real 1 request/s, empty cache,
  the default debounce).

Run: ``.venv/bin/python -m benchmarks.bench_completion [--n 200] [--papers 15]
[--skip-big]``. To measure another checkout, put its ``server`` first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bigbib import PHYSREV_E  # noqa: E402
from tests.fakes.scholarly import running  # noqa: E402
from tests.lsp_session import diagnostics, open_doc, session  # noqa: E402

BIG = PHYSREV_E
BIB300 = ROOT / "benchmarks" / "data" / "bib300.bib"
PAPERS300 = ROOT / "benchmarks" / "data" / "bib300_papers.json"
_KEY = re.compile(r"^@\w+\s*\{\s*([^,\s]+)\s*,", re.M)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def make_project(folder: Path, bib: Path, cite: int = 20) -> tuple[Path, list[str]]:
    text = bib.read_text(encoding="utf-8", errors="replace")
    keys = _KEY.findall(text)
    (folder / "refs.bib").symlink_to(bib)
    cited = keys[:: max(1, len(keys) // cite)][:cite]
    body = "\n".join(f"Claim {i} \\cite{{{k}}}." for i, k in enumerate(cited))
    tex = folder / "main.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n" + body +
                   "\nNew \\cite{\n\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    return tex, keys


async def _completion(client: LanguageClient, u: str, line: int, char: int) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = await client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(u), lsp.Position(line, char)))
    return (time.perf_counter() - t0) * 1000, result


async def local_keys(bib: Path, n: int, label: str) -> dict[str, Any]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tex, keys = make_project(folder, bib)
        lines = tex.read_text(encoding="utf-8").splitlines()
        line = next(i for i, s in enumerate(lines) if s == "New \\cite{")
        async with session("neovim", folder, settings={"verificationEnabled": False,
                                                       "paperSearch": False}) as client:
            t0 = time.perf_counter()
            u = open_doc(client, tex)
            await diagnostics(client, u, timeout=600)
            opened = time.perf_counter() - t0
            version = 1
            lat: list[float] = []
            again: list[float] = []
            counts: list[int] = []
            first_ms = 0.0
            for i in range(n):
                prefix = "" if i % 4 == 0 else rng.choice(keys)[: 1 + i % 3]
                version += 1
                text = "\n".join([*lines[:line], "New \\cite{" + prefix, *lines[line + 1:]])
                client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
                    [lsp.TextDocumentContentChangeWholeDocument(text=text)]))
                ms, result = await _completion(client, u, line, len("New \\cite{") + len(prefix))
                items = result.items if isinstance(result, lsp.CompletionList) else result or []
                if i == 0:
                    first_ms = ms
                    continue  # the first one builds the caches: reported apart
                lat.append(ms)
                counts.append(len(items))
                ms, _ = await _completion(client, u, line, len("New \\cite{") + len(prefix))
                again.append(ms)  # the same request without an edit: completion alone
    return {"bib": label, "entries": len(keys), "open_s": round(opened, 2),
            "first_ms": round(first_ms, 1), "p50_ms": round(pct(lat, 50), 1),
            "p95_ms": round(pct(lat, 95), 1), "again_p50_ms": round(pct(again, 50), 1),
            "again_p95_ms": round(pct(again, 95), 1), "max_items": max(counts),
            "median_items": statistics.median(counts)}


async def first_papers(n: int) -> dict[str, Any]:
    papers = json.loads(PAPERS300.read_text(encoding="utf-8"))
    papers = papers["papers"] if isinstance(papers, dict) else papers
    titles = [p["title"] for p in papers if len(p.get("title", "").split()) >= 5]
    with running(papers) as fake, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tex = folder / "main.tex"
        tex.write_text("\\documentclass{article}\n\\begin{document}\nNew \\cite{\n"
                       "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
        (folder / "refs.bib").write_text("@article{a, title={x}, author={A, B}, year={2000}}\n",
                                         encoding="utf-8")
        env = fake.env(cache=folder / "cache")
        settings = {"verificationEnabled": False}  # default debounce, S2 at 1 request/s
        lat: list[float] = []
        found = 0
        async with session("neovim", folder, env=env, settings=settings) as client:
            u = open_doc(client, tex)
            await diagnostics(client, u)
            for version, title in enumerate(titles[:n], start=2):
                typed = " ".join(title.split()[:4]).lower()
                client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
                    [lsp.TextDocumentContentChangeWholeDocument(text=tex.read_text().replace(
                        "New \\cite{", "New \\cite{" + typed))]))
                t0 = time.perf_counter()
                while True:  # as a client does: ask again while the list is incomplete
                    _, result = await _completion(client, u, 2, len("New \\cite{" + typed))
                    if any(i.text_edit for i in result.items) or time.perf_counter() - t0 > 10:
                        break
                    await asyncio.sleep(0.05)
                lat.append((time.perf_counter() - t0) * 1000)
                found += any(i.text_edit for i in result.items)
                await asyncio.sleep(1.0)  # a writer types; S2 allows 1 request/s
        s2 = fake.count("s2")
    return {"queries": len(lat), "with_papers": found, "p50_ms": round(pct(lat, 50), 1),
            "p95_ms": round(pct(lat, 95), 1), "s2_requests": s2}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=200, help="completions per bibliography")
    ap.add_argument("--papers", type=int, default=15, help="paper searches")
    ap.add_argument("--skip-big", action="store_true", help="not the 68k-entry bibliography")
    args = ap.parse_args()
    print("local keys (latency of textDocument/completion, prefixes of 0-3 characters)")
    for bib, label in ((BIB300, "bib300"), (BIG, "physrev_e 68k")):
        if label.startswith("physrev") and (args.skip_big or not BIG.exists()):
            continue
        r = await local_keys(bib, args.n if label == "bib300" else max(args.n // 4, 20), label)
        print(f"  {r['bib']:>14}: {r['entries']} entries, first {r['first_ms']} ms, "
              f"after an edit p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms; without an edit "
              f"p50 {r['again_p50_ms']} ms, p95 {r['again_p95_ms']} ms; items max {r['max_items']} "
              f"median {r['median_items']} (opened in {r['open_s']} s)")
    if args.papers:
        r = await first_papers(args.papers)
        print("first paper results (typing a title, fake APIs, default debounce, S2 1/s)")
        print(f"  {r['with_papers']}/{r['queries']} queries with papers, p50 {r['p50_ms']} ms, "
              f"p95 {r['p95_ms']} ms, {r['s2_requests']} S2 requests")


if __name__ == "__main__":
    asyncio.run(main())
