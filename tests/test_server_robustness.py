"""The real server (pytest-lsp) on huge and odd documents, and under a storm of random edits.

After every odd document the server must still answer hovers and completions on
a normal one; after ~200 random incremental edits its diagnostics must equal
those of a fresh ``citelens check`` of the final text.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from citelens.core.settings import Settings
from citelens.workspace.check import run_check
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.report import to_json
from tests.harness import CORPUS, bigbib, needs_bigbib
from tests.lsp_session import diagnostics, open_doc, session, uri, wait_for

GMR = CORPUS / "papers" / "joss-gmr"
CANARY = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{Calinon2007} and "
          "\\cite{Calin\n\\bibliography{refs}\n\\end{document}\n")
_NL = re.compile(r"\r\n|\r|\n")


def _junk(seed: str, n: int) -> str:
    rnd = random.Random(seed)
    return bytes(rnd.getrandbits(8) for _ in range(n)).decode("latin-1")


ODD: dict[str, tuple[str, str]] = {
    "one-mb-line": (".tex", "\\documentclass{article}\n" + "word " * 200_000
                    + "\\cite{Calinon2007,ghost}\n\\bibliography{refs}\n"),
    "nul": (".tex", "A\x00B \\cite{Calinon2007}\x00\\cite{gh\x00ost}\n\\bibliography{refs}\n"),
    "replacement-chars": (".tex", "caf\ufffd \\cite{Calinon2007} \udcff".encode(
        "utf-8", "replace").decode() + "\n\\bibliography{refs}\n"),
    "crlf-mixed": (".tex", "\\documentclass{article}\r\nA\rB \\cite{ghost}\n\r\n"
                   "\\bibliography{refs}\r"),
    "self-input": (".tex", "\\input{self-input}\\include{self-input}\\cite{ghost}\n"
                   "\\bibliography{refs}\n"),
    "deep-braces": (".tex", "{" * 100_000 + "\\cite{ghost}" + "}" * 99_999
                    + "\n\\bibliography{refs}\n"),
    "deep-bib": (".bib", "@misc{deep, title = " + "{" * 100_000 + "x" + "}" * 100_000
                 + "}\n@misc{open, title = {" + "{" * 50_000 + "\n"),
    "junk-bib": (".bib", _junk("bib", 200_000) + "@article{x," + _junk("b2", 500)),
    "junk-tex": (".tex", _junk("tex", 200_000) + "\\cite{" + _junk("t2", 500)),
    "junk-md": (".md", _junk("md", 200_000) + "[@" + _junk("m2", 500)),
}


async def _still_answers(client: object, canary: str) -> None:
    c = client  # a pytest_lsp LanguageClient
    hover = await asyncio.wait_for(c.text_document_hover_async(  # type: ignore[attr-defined]
        lsp.HoverParams(lsp.TextDocumentIdentifier(canary), lsp.Position(2, 12))), 20)
    assert hover is not None and "Calinon" in str(hover.contents)
    comp = await asyncio.wait_for(c.text_document_completion_async(  # type: ignore[attr-defined]
        lsp.CompletionParams(lsp.TextDocumentIdentifier(canary), lsp.Position(2, 38))), 20)
    assert comp is not None and "Calinon2007" in [i.label for i in comp.items]


async def test_odd_documents_leave_the_server_answering(tmp_path: Path) -> None:
    shutil.copy(GMR / "paper.bib", tmp_path / "refs.bib")
    (tmp_path / "main.tex").write_text(CANARY, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        canary = open_doc(client, tmp_path / "main.tex", CANARY)
        await diagnostics(client, canary)
        await _still_answers(client, canary)
        for name, (suffix, text) in ODD.items():
            path = tmp_path / f"{name}{suffix}"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            u = open_doc(client, path, text.encode("utf-8", "replace").decode("utf-8"))
            diags = await diagnostics(client, u, timeout=30)
            assert {str(d.code) for d in diags} <= {
                "BIB_SYNTAX", "UNDEFINED_CITATION", "DUPLICATE_KEY", "MISSING_BIBLIOGRAPHY",
                "UNUSED_ENTRY"}, (name, [d.code for d in diags])
            if name == "deep-bib":
                assert "BIB_SYNTAX" in {str(d.code) for d in diags}
            await _still_answers(client, canary)
            client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                lsp.TextDocumentIdentifier(u)))
        await _still_answers(client, canary)


@needs_bigbib
async def test_fifty_megabyte_bib_by_path(tmp_path: Path) -> None:
    big = bigbib("ml_conferences.bib")
    key = next(m.group(1) for m in re.finditer(
        r"@\w+\{([^,\s]+),", big.read_text(encoding="utf-8", errors="replace")[:200_000]))
    text = (f"\\documentclass{{article}}\n\\begin{{document}}\nSee \\cite{{{key}}} and "
            f"\\cite{{nope-nope}}.\n\\bibliography{{{big.with_suffix('')}}}\n"
            "\\end{document}\n")
    (tmp_path / "main.tex").write_text(text, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tmp_path / "main.tex", text)
        diags = await diagnostics(client, u, lambda ds: any(
            str(d.code) == "UNDEFINED_CITATION" for d in ds), timeout=60)
        assert [str(d.code) for d in diags] == ["UNDEFINED_CITATION"]
        hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(2, 10))), 30)
        assert hover is not None and "**" in str(hover.contents)
        # (no completion here: see test_entry_views_do_not_rebuild_the_key_table_each_time)


def test_entry_views_do_not_rebuild_the_key_table_each_time(tmp_path: Path) -> None:
    """Viewing N entries must not scan all definitions N times (it did: one completion in a
    project using ml_conferences.bib, 37,046 entries, took 247 s)."""
    from citelens.workspace.check import collect_projects
    from citelens.workspace.engine import Engine
    from citelens.workspace.index import analyze

    bib = "".join(f"@misc{{k{i}, title = {{Title {i}}}, year = 2000}}\n" for i in range(200))
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    (tmp_path / "main.tex").write_text("\\cite{k1}\n\\bibliography{refs}\n", encoding="utf-8")
    session = Engine()
    project = collect_projects(session.store, [str(tmp_path)], session.settings)[0]
    analysis = analyze(session.store, project, session.settings)

    class Counting(dict):  # type: ignore[type-arg]
        scans = 0

        def items(self):  # type: ignore[no-untyped-def, override]
            Counting.scans += 1
            return super().items()

    analysis.definitions = Counting(analysis.definitions)
    for defs in list(analysis.definitions.values()):
        session.entry_view(defs[0], analysis)
    assert Counting.scans <= 2, f"{Counting.scans} scans of all definitions for 200 views"


# ---------------------------------------------------------------------- random edits

SNIPPETS = ["\\cite{", "}", "{", "Calinon2007", ",", "ghost", "\\citep[p.~3]{", "\n", "\r\n",
            "é", "%", "\\input{main}", "\\bibliography{refs}", " ", "\\", "\\cite{Calinon2007}",
            "\\cite{nobody,Calinon2007}", "$x$", "\\begin{document}", "\\end{document}"]


def _offset(text: str, line: int, char: int) -> int:
    starts = [0] + [m.end() for m in _NL.finditer(text)]
    return min(starts[line] + char, len(text))


def _position(text: str, offset: int) -> lsp.Position:
    starts = [0] + [m.end() for m in _NL.finditer(text)]
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return lsp.Position(line, offset - starts[line])


def random_edits(text: str, n: int, seed: int) -> list[tuple[int, int, str]]:
    """(start, end, replacement) offsets, each valid for the text after the previous ones."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        a = rnd.randint(0, len(text))
        b = min(len(text), a + rnd.choice([0, 0, 1, 2, 5, 20]))
        if 0 < a < len(text) and text[a - 1] == "\r" and text[a] == "\n":
            a -= 1  # never split a CRLF (the client would not either)
        if 0 < b < len(text) and text[b - 1] == "\r" and text[b] == "\n":
            b += 1
        new = "".join(rnd.choice(SNIPPETS) for _ in range(rnd.choice([0, 1, 1, 2, 3])))
        out.append((a, b, new))
        text = text[:a] + new + text[b:]
    return out


def _key(d: lsp.Diagnostic | dict) -> tuple:
    if isinstance(d, dict):
        r = d["range"]
        return (d["code"], r["start"]["line"], r["start"]["character"], r["end"]["line"],
                r["end"]["character"], d["message"])
    r = d.range
    return (str(d.code), r.start.line, r.start.character, r.end.line, r.end.character,
            d.message)


async def test_random_edits_then_same_diagnostics_as_a_fresh_check(tmp_path: Path) -> None:
    shutil.copy(GMR / "paper.bib", tmp_path / "refs.bib")
    doc = tmp_path / "main.tex"
    text = CANARY
    doc.write_text(text, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, doc, text)
        await diagnostics(client, u)
        version = 1
        for i, (a, b, new) in enumerate(random_edits(text, 200, seed=20240611)):
            start, end = _position(text, a), _position(text, b)
            assert _offset(text, start.line, start.character) == a
            version += 1
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=u),
                [lsp.TextDocumentContentChangePartial(range=lsp.Range(start, end), text=new)]))
            text = text[:a] + new + text[b:]
            if i % 40 == 0:  # requests in between, as an editor sends them
                await client.text_document_hover_async(lsp.HoverParams(
                    lsp.TextDocumentIdentifier(u), _position(text, len(text) // 2)))
        # Still answering, and its diagnostics settle on those of a fresh check.
        await asyncio.wait_for(client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(0, 0))), 20)
        doc.write_bytes(text.encode("utf-8"))
        fresh = to_json(await run_check([str(tmp_path)], Pipeline(Settings()), verify=False))
        want = sorted(_key(d) for d in fresh["diagnostics"] if d["file"].endswith("main.tex"))
        await wait_for(lambda: sorted(_key(d) for d in client.diagnostics.get(u, [])) == want,
                       20, "diagnostics equal to a fresh check")


async def test_commands_are_executed(tmp_path: Path) -> None:
    """workspace/executeCommand reaches the commands (pygls 2 dispatches only to
    @server.command handlers; a generic feature handler was never called)."""
    shutil.copy(GMR / "paper.bib", tmp_path / "refs.bib")
    (tmp_path / "main.tex").write_text(CANARY, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tmp_path / "main.tex", CANARY)
        await diagnostics(client, u)
        report = await asyncio.wait_for(client.workspace_execute_command_async(
            lsp.ExecuteCommandParams("citelens.report")), 20)
        assert isinstance(report, dict) and report.get("entries")
        assert uri(tmp_path / "main.tex") == u


async def test_the_report_command_reads_unsaved_buffers(tmp_path: Path) -> None:
    """``citelens.report`` reports the documents as the editor has them, not as saved: a
    key cited only in the unsaved buffer is in the report's diagnostics."""
    shutil.copy(GMR / "paper.bib", tmp_path / "refs.bib")
    saved = "\\documentclass{article}\n\\begin{document}\nSee \\cite{Calinon2007}.\n" \
            "\\bibliography{refs}\n\\end{document}\n"
    (tmp_path / "main.tex").write_text(saved, encoding="utf-8")
    unsaved = saved.replace("\\cite{Calinon2007}", "\\cite{Calinon2007, notInTheBib}")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tmp_path / "main.tex", unsaved)
        await diagnostics(client, u)
        report = await asyncio.wait_for(client.workspace_execute_command_async(
            lsp.ExecuteCommandParams("citelens.report")), 20)
    assert isinstance(report, dict)
    undefined = [d for d in report["diagnostics"] if d["code"] == "UNDEFINED_CITATION"]
    assert [d["message"] for d in undefined] == [
        "Citation key 'notInTheBib' is not defined in refs.bib"]
    assert (tmp_path / "main.tex").read_text(encoding="utf-8") == saved  # nothing written


def test_a_refused_rename_is_one_info_line_not_an_error_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """pygls logs an error answer with its traceback at ERROR (it lands in Neovim's lsp.log);
    a rename the server declines, with its reason, is one INFO line."""
    import logging

    from pygls.exceptions import JsonRpcException

    from citelens.lsp.server import create_server

    create_server()
    rpc_log = logging.getLogger("pygls.protocol.json_rpc")
    with caplog.at_level(logging.DEBUG, logger="pygls.protocol.json_rpc"):
        try:
            raise JsonRpcException("Key 'b' already exists", code=int(lsp.LSPErrorCodes.RequestFailed))
        except JsonRpcException:
            rpc_log.exception('Exception occurred for message "%s"', 7)
        try:
            raise JsonRpcException("boom", code=-32603)
        except JsonRpcException:
            rpc_log.exception('Exception occurred for message "%s"', 8)
    refused, internal = caplog.records[-2:]
    assert refused.levelno == logging.INFO and refused.exc_info is None, refused
    assert "already exists" in refused.getMessage()
    assert internal.levelno == logging.ERROR and internal.exc_info is not None  # real errors stay
