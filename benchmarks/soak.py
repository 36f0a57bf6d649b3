"""Soak: a live server, a 300-citation paper, 10,000 edits while verification runs.

* The fake scholarly APIs run in their own process with the real services' rate
  limits (``python -m tests.fakes.scholarly --port P --enforce-rates --papers F``),
  F generated from 300 real entries of bhandari-phd-thesis/bib/references.bib so
  every entry exists there.
* The server is the real ``citelens serve`` code, started by this file with
  ``--serve``, which adds one request, ``citelens/_soakProbe``, answering the
  server's live asyncio task count and VmRSS (nothing else is changed).
* The client (pytest-lsp) opens main.tex citing the 300 keys, sends 10,000
  incremental edits (typing, deleting, touching citation keys) and every 10th
  edit a hover, completion or code-action request, timing each.

Prints request latency p50/p95/p99, RSS at start/end and the live task count
once the server is idle (verification finished). Targets: p95 <= 50 ms, RSS
growth <= 10 %, no leaked tasks.

    .venv/bin/python benchmarks/soak.py [--edits 10000] [--entries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.harness import CORPUS, free_port  # noqa: E402

THESIS_BIB = CORPUS / "papers" / "bhandari-phd-thesis" / "bib" / "references.bib"
PROBE = "citelens/_soakProbe"
SELF = Path(__file__).resolve()


# ---------------------------------------------------------------------- server side


def serve_with_probe() -> None:
    from citelens.lsp.server import create_server

    server = create_server()

    @server.feature(PROBE)
    def probe(ls: Any, params: Any) -> dict[str, Any]:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return {"tasks": len(tasks), "rss_kb": _rss_kb(os.getpid()),
                "task_names": sorted({t.get_coro().__qualname__ for t in tasks})[:20]}

    server.start_io()


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---------------------------------------------------------------------- the paper


def make_paper(folder: Path, n: int) -> tuple[list[str], Path]:
    from citelens.documents.bibtex.parse import parse_bib
    from citelens.documents.bibtex.view import entry_view
    from citelens.documents.read import read_text

    bib = parse_bib(read_text(THESIS_BIB), str(THESIS_BIB))
    chosen, papers, seen = [], [], set()
    for e in bib.entries:
        v = entry_view(e)
        if e.key in seen or not v.title.strip() or not v.authors:
            continue
        seen.add(e.key)
        chosen.append(e)
        authors = [" ".join(x for x in (a.first, a.von, a.last) if x) for a in v.authors
                   if not a.is_others]
        p: dict[str, Any] = {"title": v.title, "authors": authors or ["A. Nonymous"],
                             "year": v.year or 2000, "venue": v.venue or ""}
        if v.doi:
            p["doi"] = v.doi
        if v.arxiv_id:
            p["arxiv"] = v.arxiv_id
        papers.append(p)
        if len(chosen) == n:
            break
    text = read_text(THESIS_BIB)
    (folder / "refs.bib").write_text("\n\n".join(text[e.span.start:e.span.end] for e in chosen)
                                     + "\n", encoding="utf-8")
    keys = [e.key for e in chosen]
    body = []
    for i in range(0, len(keys), 3):
        body.append(f"Sentence {i} about prior work and its findings~\\cite{{{','.join(keys[i:i + 3])}}}.")
    tex = ("\\documentclass{article}\n\\begin{document}\n" + "\n".join(body)
           + "\n\\bibliography{refs}\n\\end{document}\n")
    (folder / "main.tex").write_text(tex, encoding="utf-8")
    papers_file = folder.parent / "papers.json"
    papers_file.write_text(json.dumps({"papers": papers}), encoding="utf-8")
    return keys, papers_file


# ---------------------------------------------------------------------- client side


def start_fake(port: int, papers: Path) -> subprocess.Popen[str]:
    """The fake scholarly APIs in their own process, enforcing the real rate limits."""
    return subprocess.Popen([sys.executable, "-m", "tests.fakes.scholarly", "--port", str(port),
                             "--enforce-rates", "--papers", str(papers)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else (values[0] if values else 0.0)


async def soak(edits: int, entries: int, seed: int) -> dict[str, Any]:
    from lsprotocol import types as lsp
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
    from tests.lsp_session import diagnostics, open_doc, uri

    rnd = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="citelens-soak-"))
    folder = work / "paper"
    folder.mkdir()
    keys, papers = make_paper(folder, entries)
    port = free_port()
    fake = start_fake(port, papers)
    try:
        assert fake.stdout is not None
        fake.stdout.readline()  # "fake scholarly APIs on ..."
        from tests.fakes.scholarly import ENV_VARS, PREFIXES
        env = {**os.environ, "CITELENS_CACHE_DIR": str(work / "cache")}
        for prefix, src in PREFIXES:
            env[ENV_VARS[src]] = f"http://127.0.0.1:{port}{prefix}"
        config = ClientServerConfig(server_command=[sys.executable, str(SELF),
                                                    "--serve"], server_env=env)
        client = await config.start()
        assert isinstance(client, LanguageClient)
        settings = {"verificationEnabled": True, "verifyDebounceMs": 300}
        client.set_configuration(settings, section="citelens")
        await client.initialize_session(lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=uri(folder),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name="paper")],
            initialization_options={"citelens": settings}))

        async def probe() -> dict[str, Any]:
            res = await client.protocol.send_request_async(PROBE, {})
            if not isinstance(res, dict):  # pygls hands back unknown results as named tuples
                res = res._asdict() if hasattr(res, "_asdict") else vars(res)
            return dict(res)

        text = (folder / "main.tex").read_text(encoding="utf-8")
        u = open_doc(client, folder / "main.tex", text)
        await diagnostics(client, u)
        await asyncio.sleep(1.0)
        start = await probe()
        latencies: dict[str, list[float]] = {"hover": [], "completion": [], "codeAction": []}
        lines = text.split("\n")
        version = 1
        t0 = time.perf_counter()
        for i in range(edits):
            line = rnd.randrange(2, len(lines) - 3)
            cur = lines[line]
            op = rnd.random()
            if op < 0.45 or not cur:  # type a character
                ch = rnd.randrange(len(cur) + 1)
                new, rng = rnd.choice("abcdefgh ,.;é"), (ch, ch)
            elif op < 0.85:  # delete one
                ch = rnd.randrange(len(cur))
                new, rng = "", (ch, ch + 1)
            else:  # rewrite a citation key (changes what is cited and what needs checking)
                m = list(re.finditer(r"\\cite\{([^}]*)\}", cur))
                if not m:
                    continue
                g = rnd.choice(m)
                new, rng = ",".join(rnd.sample(keys, 2)), (g.start(1), g.end(1))
            version += 1
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=u),
                [lsp.TextDocumentContentChangePartial(range=lsp.Range(
                    lsp.Position(line, rng[0]), lsp.Position(line, rng[1])), text=new)]))
            lines[line] = cur[:rng[0]] + new + cur[rng[1]:]
            if i % 10 == 9:
                target = rnd.randrange(2, len(lines) - 3)
                m = re.search(r"\\cite\{", lines[target])
                col = m.end() + 1 if m else 0
                pos = lsp.Position(target, col)
                kind = ("hover", "completion", "codeAction")[(i // 10) % 3]
                t = time.perf_counter()
                if kind == "hover":
                    await client.text_document_hover_async(lsp.HoverParams(
                        lsp.TextDocumentIdentifier(u), pos))
                elif kind == "completion":
                    await client.text_document_completion_async(lsp.CompletionParams(
                        lsp.TextDocumentIdentifier(u), pos))
                else:
                    diags = [d for d in client.diagnostics.get(u, [])
                             if d.range.start.line == target][:5]
                    await client.text_document_code_action_async(lsp.CodeActionParams(
                        lsp.TextDocumentIdentifier(u), lsp.Range(pos, pos),
                        lsp.CodeActionContext(diagnostics=diags)))
                latencies[kind].append((time.perf_counter() - t) * 1000)
            elif i % 2 == 0:
                await asyncio.sleep(0)
        edit_time = time.perf_counter() - t0
        # The same requests with no edit queued before them: the handlers' own cost.
        quiet: list[float] = []
        for j in range(300):
            target = rnd.randrange(2, len(lines) - 3)
            m = re.search(r"\\cite\{", lines[target])
            pos = lsp.Position(target, m.end() + 1 if m else 0)
            t = time.perf_counter()
            if j % 3 == 0:
                await client.text_document_hover_async(lsp.HoverParams(
                    lsp.TextDocumentIdentifier(u), pos))
            elif j % 3 == 1:
                await client.text_document_completion_async(lsp.CompletionParams(
                    lsp.TextDocumentIdentifier(u), pos))
            else:
                await client.text_document_code_action_async(lsp.CodeActionParams(
                    lsp.TextDocumentIdentifier(u), lsp.Range(pos, pos),
                    lsp.CodeActionContext(diagnostics=[])))
            quiet.append((time.perf_counter() - t) * 1000)
        # Idle: let the debounce fire and verification finish, then look inside.
        idle_deadline = time.monotonic() + 600
        end = await probe()
        while end["tasks"] > 0 and time.monotonic() < idle_deadline:
            await asyncio.sleep(2)
            end = await probe()
        logs = [m.message for m in client.log_messages]
        await asyncio.wait_for(client.shutdown_session(), 20)
    finally:
        fake.terminate()
        fake.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    every = [x for v in latencies.values() for x in v]
    return {"edits": edits, "entries": len(keys), "requests": len(every), "edit_s": edit_time,
            "p50": pct(every, 50), "p95": pct(every, 95), "p99": pct(every, 99),
            "max": max(every),
            "quiet": (pct(quiet, 50), pct(quiet, 95), pct(quiet, 99)),
            "by_kind": {k: (round(pct(v, 50), 1), round(pct(v, 95), 1), round(pct(v, 99), 1))
                        for k, v in latencies.items() if v},
            "rss_start_kb": start["rss_kb"], "rss_end_kb": end["rss_kb"],
            "tasks_start": start["tasks"], "tasks_end": end["tasks"],
            "task_names_end": end["task_names"],
            "verification_logs": [x for x in logs if "verified" in x][-3:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--edits", type=int, default=10_000)
    ap.add_argument("--entries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.serve:
        serve_with_probe()
        return 0
    t = time.perf_counter()
    r = asyncio.run(soak(args.edits, args.entries, args.seed))
    growth = (r["rss_end_kb"] - r["rss_start_kb"]) / max(1, r["rss_start_kb"]) * 100
    print(f"entries: {r['entries']}  edits: {r['edits']} in {r['edit_s']:.1f} s  "
          f"requests timed: {r['requests']}")
    print(f"latency ms  p50 {r['p50']:.1f}  p95 {r['p95']:.1f}  p99 {r['p99']:.1f}  "
          f"max {r['max']:.1f}   (target p95 <= 50)")
    print(f"  per kind (p50, p95, p99): {r['by_kind']}")
    q = r["quiet"]
    print(f"  same requests with no edit queued before them: p50 {q[0]:.1f}  p95 {q[1]:.1f}  "
          f"p99 {q[2]:.1f}")
    print(f"RSS kB  start {r['rss_start_kb']}  end {r['rss_end_kb']}  growth {growth:+.1f} %"
          "   (target <= 10 %)")
    print(f"live asyncio tasks besides the probe: start {r['tasks_start']}  idle end "
          f"{r['tasks_end']} {r['task_names_end']}   (target 0 at idle)")
    print(f"verification: {r['verification_logs']}")
    print(f"wall time: {time.perf_counter() - t:.1f} s")
    ok = r["p95"] <= 50 and growth <= 10 and r["tasks_end"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
