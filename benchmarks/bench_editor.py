"""Editor benchmark: the real server (pytest-lsp client) on a 300-citation paper.

Measures, against the fake scholarly server (rate-limited like the real services
with ``--enforce-rates``):

* cold: didOpen -> the last verification diagnostic (empty cache);
* warm: the same with the cache the cold run filled;
* keystroke -> local diagnostics latency (p50/p95) while verification runs;
* idle CPU of the server process after verification ended (utime+stime over 5 s).

Run: ``.venv/bin/python -m benchmarks.bench_editor [--entries 300] [--enforce-rates]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.scholarly import ScholarlyFake, running  # noqa: E402
from tests.lsp_session import open_doc, session, uri  # noqa: E402

VERIFICATION_CODES = {"NOT_FOUND", "DOI_MISMATCH", "METADATA_MISMATCH", "UNVERIFIED",
                      "DUPLICATE_ENTRY"}


def make_paper(folder: Path, fake: ScholarlyFake, n: int) -> Path:
    """A .tex citing ``n`` entries: every paper the fake knows, then made-up ones."""
    entries = []
    for i, p in enumerate(fake.db.papers[:n]):
        authors = " and ".join(p.get("authors", [])[:6]) or "Anonymous"
        fields = [f"  title = {{{p['title']}}}", f"  author = {{{authors}}}"]
        if p.get("year"):
            fields.append(f"  year = {{{p['year']}}}")
        if p.get("venue"):
            fields.append(f"  journal = {{{p['venue']}}}")
        if p.get("doi"):
            fields.append(f"  doi = {{{p['doi']}}}")
        entries.append(f"@article{{real{i},\n" + ",\n".join(fields) + "\n}\n")
    for i in range(len(entries), n):
        entries.append(f"@article{{made{i},\n  title = {{A study of synthetic topic number {i} "
                       f"in imaginary systems}},\n  author = {{Doe, Jane and Roe, R{i}}},\n"
                       f"  year = {{{2000 + i % 24}}},\n  journal = {{Journal of Tests}}\n}}\n")
    (folder / "refs.bib").write_text("\n".join(entries), encoding="utf-8")
    keys = [e.split("{", 1)[1].split(",", 1)[0] for e in entries]
    body = "\n\n".join(f"Sentence {i} cites \\cite{{{k}}}." for i, k in enumerate(keys))
    tex = folder / "main.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\nTyping here: \\cite{}.\n\n"
                   f"{body}\n\\bibliography{{refs}}\n\\end{{document}}\n", encoding="utf-8")
    return tex


def _ended(client: LanguageClient) -> bool:
    rs = [r for r in client.progress_reports.values() if r]
    return bool(rs) and all(isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in rs)


def _server_pid() -> int | None:
    """The newest child process of this one running ``citelens serve``."""
    me = os.getpid()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"citelens" in cmd:
            found.append(int(d))
    return max(found) if found else None


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_session(folder: Path, tex: Path, text: str, env: dict[str, str], settings: dict[str, Any],
                      keystrokes: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with session("visual-studio-code", folder, env=env, settings=settings) as client:
        pid = _server_pid()
        t0 = time.monotonic()
        u = open_doc(client, tex, text)
        last_publish = [t0]
        published = client.diagnostics

        def watch() -> None:  # the last change of the verification diagnostics
            while not stop:
                cur = {k: sum(1 for d in v if d.code in VERIFICATION_CODES)
                       for k, v in published.items()}
                if cur != seen[0]:
                    seen[0] = cur
                    last_publish[0] = time.monotonic()
                time.sleep(0.005)

        seen: list[dict[str, int]] = [{}]
        stop = False
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()

        # keystrokes while verification runs: type a key into the empty \cite{}
        latencies = []
        anchor = "Typing here: \\cite{"
        line = text[: text.index(anchor)].count("\n")
        col = len(anchor)
        for k in range(keystrokes):
            version = k + 2
            ch = "abcdefghijklmnopqrstuvwxyz"[k % 26]
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=u),
                [lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col)),
                    text=ch)]))
            col += 1
            ts = time.monotonic()
            while True:
                ds = published.get(u, [])
                if any(isinstance(d.data, dict) and d.data.get("version") == version
                       for d in ds):
                    break
                if time.monotonic() - ts > 10:
                    break
                await asyncio.sleep(0.002)
            latencies.append(time.monotonic() - ts)
            await asyncio.sleep(0.05)

        # until the verification ended and its diagnostics stopped changing
        while True:
            if _ended(client) and time.monotonic() - last_publish[0] > 1.0:
                break
            if time.monotonic() - t0 > 1800:
                break
            await asyncio.sleep(0.02)
        stop = True
        watcher.join()
        out["open_to_last_diagnostic_s"] = last_publish[0] - t0
        out["diagnostics"] = sum(len(v) for v in published.values())
        out["keystroke_p50_ms"] = 1000 * statistics.median(latencies) if latencies else None
        out["keystroke_p95_ms"] = (1000 * sorted(latencies)[int(0.95 * (len(latencies) - 1))]
                                   if latencies else None)
        if pid is not None:
            c0 = _cpu_s(pid)
            await asyncio.sleep(5.0)
            out["idle_cpu_s_over_5s"] = _cpu_s(pid) - c0
    return out


async def main_async(args: argparse.Namespace) -> None:
    with running() as fake, tempfile.TemporaryDirectory() as tmp:
        if args.enforce_rates:
            fake.enforce_real_limits()
        folder = Path(tmp) / "paper"
        folder.mkdir()
        tex = make_paper(folder, fake, args.entries)
        text = tex.read_text(encoding="utf-8")
        env = fake.env(cache=Path(tmp) / "cache")
        settings = {"verificationEnabled": True, "verifyDebounceMs": 100,
                    "s2RequestsPerSecond": args.s2_rps}
        print(f"paper: {args.entries} cited entries ({min(len(fake.db.papers), args.entries)} "
              f"real); fake rates enforced: {args.enforce_rates}; server S2 rate "
              f"{args.s2_rps}/s", flush=True)
        for label in ("cold", "warm"):
            fake.clear_log()
            r = await run_session(folder, tex, text, env, settings, args.keystrokes)
            r["requests"] = sum(fake.counts().values())
            print(f"{label}: open -> last verification diagnostic "
                  f"{r['open_to_last_diagnostic_s']:.2f} s; {r['diagnostics']} diagnostics; "
                  f"{r['requests']} requests to the fake", flush=True)
            print(f"{label}: keystroke -> local diagnostics p50 {r['keystroke_p50_ms']:.1f} ms, "
                  f"p95 {r['keystroke_p95_ms']:.1f} ms ({args.keystrokes} keystrokes)", flush=True)
            if "idle_cpu_s_over_5s" in r:
                print(f"{label}: idle CPU after verification {r['idle_cpu_s_over_5s']:.3f} s "
                      f"over 5 s", flush=True)
            print(f"{label}: uri {uri(tex)}" if args.verbose else "", end="")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--entries", type=int, default=300)
    ap.add_argument("--keystrokes", type=int, default=40)
    ap.add_argument("--enforce-rates", action="store_true",
                    help="the fake answers 429 above the real services' rates")
    ap.add_argument("--s2-rps", type=float, default=1.0,
                    help="the server's Semantic Scholar rate (anonymous pool: 1/s)")
    ap.add_argument("--verbose", action="store_true")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
