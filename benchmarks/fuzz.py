"""Fuzz the parsers and a live server with inputs mutated from the corpus.

Seeds: every .tex/.md/.Rmd/.bib of tests/corpus/papers plus a 2 MB slice of
ml_conferences.bib (``CITELENS_BIGBIB``). Each input is a random window of a seed file (so one
input costs well under a millisecond) mutated by byte flips, deletions,
duplications, insertions of syntax fragments, splices with another file, and
truncations, then decoded as UTF-8 with replacement (what the store does with
bytes from disk). It goes through the parser of its kind (parse_latex,
parse_markdown or parse_bib + entry_view of every entry) and LineIndex
(offset <-> position round trips). A failure is an exception, a span outside
the text, a BibProblem reporting a caught internal error ("cannot parse"), a
round trip that does not return the offset, or one input taking over 2 s.

Then random incremental edits go to a live ``citelens serve`` (pytest-lsp), with
hovers and completions in between; the server must keep answering and end with
the diagnostics of a fresh ``citelens check`` of the final text.

    .venv/bin/python benchmarks/fuzz.py                 # 100,000 inputs + 2 x 500 edits
    .venv/bin/python benchmarks/fuzz.py --inputs 2000 --edits 100 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bigbib import ML_CONFERENCES  # noqa: E402
from tests.harness import CORPUS  # noqa: E402

from citelens.core.text import LineIndex  # noqa: E402
from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.documents.latex import parse_latex  # noqa: E402
from citelens.documents.markdown import parse_markdown  # noqa: E402

FRAGMENTS = [b"\\cite{", b"\\citep[p.~2]{", b"}", b"{", b"@article{", b"@string{", b",", b"=",
             b'"', b"#", b"%", b"\\input{", b"\\bibliography{", b"[@", b"@", b"]", b"---\n",
             b"bibliography: ", b"\r\n", b"\r", b"\n", b"\x00", b"\xff\xfe", b"\xf0\x9f\x98",
             b"\xf0\x9f\x98\x80", b"\\", b"$", b"\\begin{verbatim}", b"<!--", b"-->", b"```",
             b"\\end{document}", b"crossref = {", b"author = {", b" and ", b"{\\\"o}"]


def seeds() -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {"latex": [], "markdown": [], "bib": []}
    for p in sorted((CORPUS / "papers").rglob("*")):
        suffix = p.suffix.lower()
        kind = {".tex": "latex", ".md": "markdown", ".rmd": "markdown", ".bib": "bib"}.get(suffix)
        if kind and p.is_file():
            out[kind].append(p.read_bytes())
    big = ML_CONFERENCES
    if big.exists():
        with big.open("rb") as fh:
            out["bib"].append(fh.read(2_000_000))
    return out


def mutate(rnd: random.Random, data: bytes, other: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.choice([1, 1, 2, 3, 5, 8])):
        op = rnd.randrange(7)
        n = len(b)
        i = rnd.randrange(n + 1)
        if op == 0 and n:  # byte flips
            for _ in range(rnd.randint(1, 4)):
                j = rnd.randrange(n)
                b[j] ^= 1 << rnd.randrange(8)
        elif op == 1:  # deletion
            del b[i:i + rnd.choice([1, 2, 10, 100, 1000])]
        elif op == 2:  # duplication
            j = rnd.randrange(n + 1)
            b[i:i] = b[j:j + rnd.choice([1, 10, 100, 1000])]
        elif op == 3:  # syntax fragment
            b[i:i] = rnd.choice(FRAGMENTS) * rnd.choice([1, 1, 2, 50])
        elif op == 4 and other:  # splice with another file
            j = rnd.randrange(len(other))
            b[i:] = other[j:j + rnd.randint(1, 3000)] + b[i:i + rnd.randint(0, 3000)]
        elif op == 5:  # truncation
            del b[i:]
        else:  # random bytes
            b[i:i] = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 20)))
    return bytes(b)


def window(rnd: random.Random, data: bytes) -> bytes:
    size = rnd.choice([64, 256, 1024, 4096, 8192])
    start = rnd.randrange(max(1, len(data) - size + 1))
    return data[start:start + size]


class Failure(Exception):
    pass


def _span_ok(span: object, n: int) -> bool:
    s, e = span.start, span.end  # type: ignore[attr-defined]
    return 0 <= s <= e <= n


def run_one(kind: str, text: str, rnd: random.Random) -> None:
    n = len(text)
    if kind == "latex" or kind == "markdown":
        doc = parse_latex(text, "f.tex") if kind == "latex" else parse_markdown(text, "f.md")
        for c in doc.citations:
            if not _span_ok(c.span, n) or text[c.span.start:c.span.end] != c.key:
                raise Failure(f"citation span {c.span} does not hold key {c.key!r}")
        for r in [*doc.bibliographies, *doc.includes]:
            if not _span_ok(r.span, n):
                raise Failure(f"reference span {r.span} outside the text")
    else:
        bib = parse_bib(text, "f.bib")
        for p in bib.problems:
            if "cannot parse" in p.message:
                raise Failure(f"caught internal error: {p.message[:200]}")
            if not _span_ok(p.span, n):
                raise Failure(f"problem span {p.span} outside the text")
        for e in bib.entries:
            if not _span_ok(e.span, n):
                raise Failure(f"entry span {e.span} outside the text")
            entry_view(e)
    index = LineIndex(text)
    for _ in range(3):
        off = rnd.randint(0, n)
        for enc in ("utf-16", "utf-8", "utf-32"):
            pos = index.position(off, enc)
            back = index.offset(pos.line, pos.character, enc)
            # an offset inside a line break maps to the end of its line
            if back != off and not (off < n and text[off - 1:off + 1] == "\r\n"):
                raise Failure(f"LineIndex round trip {off} -> {pos} -> {back} ({enc})")


def fuzz_parsers(count: int, seed: int) -> tuple[int, list[tuple[str, str]], float]:
    rnd = random.Random(seed)
    pool = seeds()
    kinds = [k for k in pool if pool[k]]
    everything = [d for k in kinds for d in pool[k]]
    failures: list[tuple[str, str]] = []
    slowest = 0.0
    for i in range(count):
        kind = kinds[i % len(kinds)]
        data = window(rnd, rnd.choice(pool[kind]))
        data = mutate(rnd, data, window(rnd, rnd.choice(everything)))
        text = data.decode("utf-8", "replace")
        t = time.perf_counter()
        try:
            run_one(kind, text, rnd)
        except Failure as exc:
            failures.append(("Failure", f"{kind}: {exc}"))
        except Exception as exc:
            failures.append((type(exc).__name__, f"{kind}: {exc!r}\n{traceback.format_exc()}"))
        took = time.perf_counter() - t
        slowest = max(slowest, took)
        if took > 2.0:
            failures.append(("Slow", f"{kind}: {took:.1f} s for {len(text)} chars"))
    return count, failures, slowest


def _offline_env(folder: Path) -> dict[str, str]:
    """As in the tests: no real host (paper search while typing is on by default) and a
    cache of the session's own, never the user's."""
    unreachable = "http://127.0.0.1:9"  # the discard port: refused at once
    env = {var: unreachable for var in (
        "CITELENS_S2_API_URL", "CITELENS_CROSSREF_API_URL", "CITELENS_OPENALEX_API_URL",
        "CITELENS_ARXIV_API_URL", "CITELENS_ARXIV_URL", "CITELENS_DOI_URL",
        "CITELENS_NCBI_EUTILS_URL", "CITELENS_UNPAYWALL_API_URL", "CITELENS_LLM_BASE_URL")}
    env["CITELENS_CACHE_DIR"] = str(folder / ".cache")
    return env


async def fuzz_server(edits: int, sessions: int, seed: int) -> list[str]:
    from lsprotocol import types as lsp
    from tests.lsp_session import diagnostics, open_doc, session, wait_for
    from tests.test_server_robustness import CANARY, GMR, _key, _position, random_edits

    from citelens.core.settings import Settings
    from citelens.workspace.check import run_check
    from citelens.workspace.pipeline import Pipeline
    from citelens.workspace.report import to_json

    problems: list[str] = []
    for s in range(sessions):
        folder = Path(tempfile.mkdtemp(prefix="citelens-fuzz-"))
        try:
            shutil.copy(GMR / "paper.bib", folder / "refs.bib")
            doc = folder / "main.tex"
            text = CANARY
            doc.write_text(text, encoding="utf-8")
            async with session("visual-studio-code", folder, env=_offline_env(folder)) as client:
                u = open_doc(client, doc, text)
                await diagnostics(client, u)
                for i, (a, b, new) in enumerate(random_edits(text, edits, seed + s)):
                    start, end = _position(text, a), _position(text, b)
                    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                        lsp.VersionedTextDocumentIdentifier(version=i + 2, uri=u),
                        [lsp.TextDocumentContentChangePartial(range=lsp.Range(start, end),
                                                              text=new)]))
                    text = text[:a] + new + text[b:]
                    if i % 25 == 0:
                        pos = _position(text, len(text) // 2)
                        await asyncio.wait_for(client.text_document_hover_async(
                            lsp.HoverParams(lsp.TextDocumentIdentifier(u), pos)), 10)
                        await asyncio.wait_for(client.text_document_completion_async(
                            lsp.CompletionParams(lsp.TextDocumentIdentifier(u), pos)), 10)
                doc.write_bytes(text.encode("utf-8"))
                fresh = to_json(await run_check([str(folder)], Pipeline(Settings()), verify=False))
                want = sorted(_key(d) for d in fresh["diagnostics"]
                              if d["file"].endswith("main.tex"))
                try:
                    await wait_for(lambda u=u, want=want: sorted(
                        _key(d) for d in client.diagnostics.get(u, [])) == want, 20, "settle")
                except AssertionError:
                    problems.append(f"session {s}: diagnostics differ from a fresh check")
        except Exception as exc:
            problems.append(f"session {s}: {type(exc).__name__}: {exc}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--edits", type=int, default=500, help="edits per server session")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    n, failures, slowest = fuzz_parsers(args.inputs, args.seed)
    t1 = time.perf_counter()
    server_problems = asyncio.run(fuzz_server(args.edits, args.sessions, args.seed))
    t2 = time.perf_counter()
    by_type = collections.Counter(kind for kind, _ in failures)
    print(f"parser inputs run: {n}")
    print(f"parser failures:   {len(failures)}  by type: {dict(by_type) or '{}'}")
    print(f"slowest input:     {slowest * 1000:.1f} ms")
    print(f"parser wall time:  {t1 - t0:.1f} s")
    print(f"server edits:      {args.edits * args.sessions} in {args.sessions} sessions, "
          f"problems: {len(server_problems)}")
    for p in server_problems:
        print(f"  {p}")
    print(f"server wall time:  {t2 - t1:.1f} s")
    print(f"total wall time:   {t2 - t0:.1f} s")
    for kind, detail in failures[:10]:
        print(f"--- {kind}\n{detail[:1500]}")
    return 1 if failures or server_problems else 0


if __name__ == "__main__":
    sys.exit(main())
