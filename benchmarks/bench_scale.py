"""Scale benchmark: a 68k-entry bibliography and a 150-entry paper's verification stream.

Prints, on the corpus papers and the large bibliographies (``CITELENS_BIGBIB``):

* ``check``: ``citelens check BIG.bib --offline`` in its own process (wall time, peak RSS);
* ``editor``: the real server on a folder whose ``main.tex`` cites 20 keys of BIG.bib
  (verification offline, so nothing leaves the machine): didOpen -> first diagnostics,
  hover on a citation after a one-character edit of the .bib (p50/p95), completion in an
  empty ``\\cite{}`` (latency, item count) and the server's peak RSS;
* ``stream``: the astropy paper against the fake APIs (real rate limits enforced by the
  fake): didOpen -> first and last verification diagnostic, and how many publishes
  changed the verification diagnostics.

Run: ``.venv/bin/python -m benchmarks.bench_scale [--only check,editor,stream] [--edits 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_editor import _server_pid  # noqa: E402
from benchmarks.bigbib import PHYSREV_E  # noqa: E402
from tests.fakes.scholarly import running  # noqa: E402
from tests.harness import CORPUS  # noqa: E402
from tests.lsp_session import open_doc, session  # noqa: E402

BIG = PHYSREV_E
ASTROPY = CORPUS / "papers" / "astropy-v5.0"
VERIFICATION_CODES = {"NOT_FOUND", "DOI_MISMATCH", "METADATA_MISMATCH", "UNVERIFIED",
                      "DUPLICATE_ENTRY"}


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]


# ---------------------------------------------------------------- check --offline


def bench_check(tmp: Path) -> None:
    env = {**os.environ, "CITELENS_CACHE_DIR": str(tmp / "cache-check")}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "citelens", "check", str(BIG), "--offline",
                             "-q"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    print(f"check: {BIG.name} --offline: {wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f}"
          f" s CPU, peak RSS {usage.ru_maxrss / 1024:.0f} MB (exit {proc.returncode})",
          flush=True)


# ---------------------------------------------------------------- editor on the big bib


def _big_folder(tmp: Path, n_cited: int) -> tuple[Path, list[str]]:
    folder = tmp / "big"
    folder.mkdir()
    shutil.copy(BIG, folder / "refs.bib")
    text = (folder / "refs.bib").read_text(encoding="utf-8")
    keys = re.findall(r"^@\w+\{([^,\s]+),", text, flags=re.M)
    step = max(1, len(keys) // n_cited)
    cited = keys[::step][:n_cited]
    body = "\n\n".join(f"Sentence {i} cites \\cite{{{k}}}." for i, k in enumerate(cited))
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\nTyping here: \\cite{}.\n\n"
        f"{body}\n\\bibliography{{refs}}\n\\end{{document}}\n", encoding="utf-8")
    return folder, cited


async def bench_editor(tmp: Path, edits: int) -> None:
    folder, cited = _big_folder(tmp, 20)
    tex, bib = folder / "main.tex", folder / "refs.bib"
    tex_text, bib_text = tex.read_text(encoding="utf-8"), bib.read_text(encoding="utf-8")
    env = {"CITELENS_CACHE_DIR": str(tmp / "cache-editor")}
    settings = {"verificationEnabled": True, "offline": True, "verifyDebounceMs": 100}
    async with session("visual-studio-code", folder, env=env, settings=settings) as client:
        pid = _server_pid()
        t0 = time.monotonic()
        ut = open_doc(client, tex, tex_text)
        ub = open_doc(client, bib, bib_text)
        while time.monotonic() - t0 < 600:
            if ut in client.diagnostics:
                break
            await asyncio.sleep(0.005)
        first = time.monotonic() - t0
        print(f"editor: {len(cited)} cited keys of {bib.name}: didOpen -> first diagnostics "
              f"{first:.2f} s", flush=True)
        await asyncio.sleep(2.0)
        # hover on a citation after a one-character edit of the .bib (inside a title)
        line_no = tex_text.splitlines().index(f"Sentence 1 cites \\cite{{{cited[1]}}}.")
        col = len("Sentence 1 cites \\cite{") + 1
        lines = bib_text.splitlines()
        title_line = next(i for i, s in enumerate(lines) if s.lstrip().startswith("title"))
        tcol = lines[title_line].index("{") + 1
        hover_ms = []
        for k in range(edits):
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=k + 2, uri=ub),
                [lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(title_line, tcol),
                                    lsp.Position(title_line, tcol)), text="x")]))
            ts = time.monotonic()
            await client.text_document_hover_async(lsp.HoverParams(
                lsp.TextDocumentIdentifier(ut), lsp.Position(line_no, col)))
            hover_ms.append(1000 * (time.monotonic() - ts))
            await asyncio.sleep(0.2)
        print(f"editor: hover after a .bib edit p50 {statistics.median(hover_ms):.1f} ms, "
              f"p95 {_pct(hover_ms, 0.95):.1f} ms, max {max(hover_ms):.1f} ms ({edits} edits)",
              flush=True)
        spread = await _hover_after_edits_anywhere(client, ub, ut, lines, edits, edits + 2,
                                                   lsp.Position(line_no, col))
        print(f"editor: hover after an edit anywhere in the .bib (another line each time, "
              f"every third a line break) p50 {statistics.median(spread):.1f} ms, "
              f"p95 {_pct(spread, 0.95):.1f} ms, max {max(spread):.1f} ms ({edits} edits)",
              flush=True)
        anchor = tex_text.splitlines().index("Typing here: \\cite{}.")
        comp_ms, items = [], 0
        for _ in range(5):
            ts = time.monotonic()
            res = await client.text_document_completion_async(lsp.CompletionParams(
                lsp.TextDocumentIdentifier(ut), lsp.Position(anchor, len("Typing here: \\cite{"))))
            comp_ms.append(1000 * (time.monotonic() - ts))
            items = len(res.items if isinstance(res, lsp.CompletionList) else (res or []))
        print(f"editor: completion in an empty \\cite{{}}: p50 {statistics.median(comp_ms):.1f} ms, "
              f"{items} items", flush=True)
        if pid is not None:
            print(f"editor: server peak RSS {_peak_rss_mb(pid):.0f} MB", flush=True)


async def _hover_after_edits_anywhere(client, ub: str, ut: str, lines: list[str], edits: int,
                                     version: int, at: lsp.Position) -> list[float]:
    """Hover latency after one-character edits on random lines of the .bib (each on a line
    the last edit did not touch; every third inserts a line break)."""
    rnd = random.Random(1)
    out = []
    for k in range(edits):
        n = rnd.randrange(len(lines) // 2)  # lines before the first line break typed stay put
        pos = lsp.Position(n, min(2, len(lines[n])))
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=version + k, uri=ub),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(pos, pos),
                                                  text="\n" if k % 3 == 2 else "x")]))
        ts = time.monotonic()
        await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(ut), at))
        out.append(1000 * (time.monotonic() - ts))
        await asyncio.sleep(0.2)
    return out


# ---------------------------------------------------------------- astropy stream


async def bench_stream(tmp: Path) -> None:
    folder = tmp / "astropy"
    shutil.copytree(ASTROPY, folder)
    for p in folder.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    tex = folder / "ms.tex"
    with running() as fake:
        fake.enforce_real_limits()
        env = fake.env(cache=tmp / "cache-stream")
        settings = {"verificationEnabled": True, "verifyDebounceMs": 100}
        async with session("visual-studio-code", folder, env=env, settings=settings) as client:
            t0 = time.monotonic()
            open_doc(client, tex)
            times: list[float] = []
            counts: list[tuple[float, int]] = []
            seen: dict[str, int] = {}
            idle_since = None
            while time.monotonic() - t0 < 1800:
                cur = {k: sum(1 for d in v if d.code in VERIFICATION_CODES)
                       for k, v in client.diagnostics.items()}
                if cur != seen:
                    seen = cur
                    times.append(time.monotonic() - t0)
                    counts.append((times[-1], sum(cur.values())))
                    idle_since = None
                rs = [r for r in client.progress_reports.values() if r]
                ended = bool(rs) and all(isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in rs)
                if ended:
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since > 2.0:
                        break
                await asyncio.sleep(0.01)
            msgs = [getattr(r, "message", "") for rs in client.progress_reports.values()
                    for r in rs]
        n = sum(seen.values())
        half = next((t for t, k in counts if k >= n / 2), float("nan"))
        if times:
            print(f"stream: astropy against the fake APIs: first verification diagnostic "
                  f"{times[0]:.1f} s, half of them {half:.1f} s, last {times[-1]:.1f} s, "
                  f"{len(times)} changes, {n} verification diagnostics", flush=True)
        else:
            print("stream: no verification diagnostic", flush=True)
        print(f"stream: last progress messages {msgs[-2:]}; {sum(fake.counts().values())} "
              f"requests to the fake", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--only", default="check,editor,stream")
    ap.add_argument("--edits", type=int, default=20)
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        if "check" in only:
            bench_check(tmp)
        if "editor" in only:
            asyncio.run(bench_editor(tmp, args.edits))
        if "stream" in only:
            asyncio.run(bench_stream(tmp))


if __name__ == "__main__":
    main()
