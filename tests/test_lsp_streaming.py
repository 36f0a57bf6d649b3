"""End-to-end: verdicts reach the editor as they are decided, not all at the end.

The real server verifies made-up, title-only entries against the fake scholarly server,
which answers 429 above the rate it is given; every entry needs two Semantic Scholar
requests, so the run lasts several seconds and the verdicts come out one by one.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import open_doc, session, wait_for

N = 12
S2_RPS = 4.0


def _write(folder: Path, n: int = N) -> tuple[Path, Path]:
    entries = [
        f"@article{{made{i},\n  title = {{A study of synthetic topic number {i} in imaginary "
        f"lattice systems}},\n  author = {{Doe, Jane and Roe, Rick}},\n  year = {{2011}},\n"
        f"  journal = {{Journal of Tests}}\n}}\n" for i in range(n)]
    bib = folder / "refs.bib"
    bib.write_text("\n".join(entries), encoding="utf-8")
    body = "\n\n".join(f"Sentence {i} cites \\cite{{made{i}}}." for i in range(n))
    tex = folder / "main.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n"
                   f"{body}\n\\bibliography{{refs}}\n\\end{{document}}\n", encoding="utf-8")
    return tex, bib


def _settings() -> dict[str, Any]:
    return {"verificationEnabled": True, "verifyDebounceMs": 30,
            "s2RequestsPerSecond": S2_RPS, "requestTimeoutS": 5.0, "retryBackoffS": 0.2}


def _not_found(client: LanguageClient, u: str) -> set[str]:
    """The keys with a NOT_FOUND diagnostic at their citation in the .tex."""
    return {str((d.data or {}).get("key")) for d in client.diagnostics.get(u, [])
            if d.code == "NOT_FOUND" and isinstance(d.data, dict)}


async def _watch(client: LanguageClient, u: str, until: float,
                 stop: asyncio.Event) -> list[tuple[float, int]]:
    """(time, number of NOT_FOUND keys) at every change of that number."""
    seen: list[tuple[float, int]] = []
    last = -1
    t0 = time.monotonic()
    while time.monotonic() - t0 < until and not stop.is_set():
        n = len(_not_found(client, u))
        if n != last:
            seen.append((time.monotonic() - t0, n))
            last = n
        await asyncio.sleep(0.01)
    return seen


def _ended(client: LanguageClient) -> bool:
    rs = [r for r in client.progress_reports.values() if r]
    return bool(rs) and all(isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in rs)


async def test_verdicts_arrive_in_several_publishes_while_the_run_lasts(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    fake.set_rate_limit("s2", S2_RPS, 1)
    tex, _ = _write(tmp_path)
    env = fake.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=_settings()) as client:
        u = open_doc(client, tex)
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(client, u, 60, stop))
        await wait_for(lambda: len(_not_found(client, u)) == N, 60, "every verdict")
        await wait_for(lambda: _ended(client), 10, "the end of the progress")
        stop.set()
        seen = [(t, n) for t, n in await watcher if n > 0]
        messages = [getattr(r, "message", "") or "" for rs in client.progress_reports.values()
                    for r in rs]
    # several publishes, each adding verdicts; the first well before the last
    assert len(seen) >= 3, seen
    assert [n for _, n in seen] == sorted(n for _, n in seen)
    first, last = seen[0][0], seen[-1][0]
    assert last - first >= 1.5, seen
    assert seen[0][1] < N
    # the progress counts what it found so far, in entries
    assert any(m.startswith(f"{N}/{N} entries") and f"{N} not found" in m for m in messages), \
        messages
    assert any(" not found" in m and not m.startswith(f"{N}/") for m in messages), messages


async def test_a_bib_edit_that_cancels_the_run_keeps_the_verdicts_reached(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    fake.set_rate_limit("s2", S2_RPS, 1)
    tex, bib = _write(tmp_path)
    env = fake.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=_settings()) as client:
        u = open_doc(client, tex)
        ub = open_doc(client, bib)
        await wait_for(lambda: len(_not_found(client, u)) >= 3, 60, "the first verdicts")
        reached = _not_found(client, u)
        assert len(reached) < N, "the run ended before the edit: the test proves nothing"
        # an edit of an entry the run has not reached yet: the run is superseded
        text = bib.read_text(encoding="utf-8")
        pending = next(f"made{i}" for i in range(N - 1, -1, -1) if f"made{i}" not in reached)
        old = f"synthetic topic number {pending[4:]} in"
        line = next(i for i, s in enumerate(text.splitlines()) if old in s)
        col = text.splitlines()[line].index(old)
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=ub),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col)),
                text="new ")]))
        requested_before = [r for r in fake.requests("s2")]
        # the verdicts reached stay on screen: no diagnostic of them disappears
        for _ in range(30):
            assert reached <= _not_found(client, u)
            await asyncio.sleep(0.02)
        await wait_for(lambda: len(_not_found(client, u)) == N, 60, "every verdict")
        await wait_for(lambda: _ended(client), 10, "the end of the progress")
        after = fake.requests("s2")[len(requested_before):]
    # and no entry verified before the edit was asked about again
    asked_again = [r for r in after for k in reached
                   if f"topic number {k[4:]} in" in str(r.get("query", "")) + str(r.get("body", ""))]
    assert not asked_again, asked_again


async def test_the_report_command_during_a_run_shares_its_rate_limits(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """``citelens.report`` while the background run verifies: one S2 limiter in the process,
    so S2 is never asked faster than its rate (two limiters each kept it, together not: 429s)."""
    fake = scholarly_server
    fake.set_rate_limit("s2", S2_RPS, 1)
    tex, _ = _write(tmp_path)
    env = fake.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=_settings()) as client:
        u = open_doc(client, tex)
        await wait_for(lambda: fake.count("s2") >= 2, 30, "the background run's first requests")
        assert len(_not_found(client, u)) < N, "the run ended before the report: proves nothing"
        report = await asyncio.wait_for(client.workspace_execute_command_async(
            lsp.ExecuteCommandParams("citelens.report")), 90)
        await wait_for(lambda: _ended(client), 60, "the end of the background run")
    assert isinstance(report, dict)
    # each problem once, at the entry, its citation in main.tex a related place
    assert sorted(d["code"] for d in report["diagnostics"]
                  if any(r["file"].endswith("main.tex") for r in d.get("related", []))) \
        == ["NOT_FOUND"] * N
    # two limiters: half the report's requests refused, the breaker opened, entries UNVERIFIED;
    # one limiter: at most a stray 429 when a loaded machine delays one request in transit
    refused = [r for r in fake.requests("s2") if r["status"] == 429]
    assert len(refused) <= 1, f"{len(refused)} of {fake.count('s2')} S2 requests refused with 429"
