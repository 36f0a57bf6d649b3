"""A keystroke in a .tex crosses from ``lsp/`` into the engine (``workspace/``) at most
twice before its diagnostics are sent: ``Session.apply_edit`` (the store has the text at
once) and ``Session.update`` (analysis, findings per changed file, entries to verify), whose
result the language server sends without asking the engine anything else."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from lsprotocol import types as lsp

from tests.lsp_session import in_process_server, uri

BIB = "@article{beta, title = {Beta}, author = {Bee, Anna}, year = {2020}}\n"
TEX = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{betx} here.\n"
       "\\bibliography{refs}\n\\end{document}\n")


def _crossings(run: Any) -> list[str]:
    """Calls from a function of ``citelens.lsp`` into one of ``citelens.workspace`` while
    ``run`` runs (a dataclass's ``__init__``, building a value, is not a call of the engine)."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call" or frame.f_back is None or frame.f_code.co_name.startswith("__"):
            return
        callee = str(frame.f_globals.get("__name__", ""))
        caller = str(frame.f_back.f_globals.get("__name__", ""))
        if callee.startswith("citelens.workspace.") and caller.startswith("citelens.lsp."):
            seen.append(f"{caller}.{frame.f_back.f_code.co_name} -> {callee}.{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def test_a_keystroke_crosses_into_the_engine_at_most_twice(tmp_path: Path) -> None:
    from citelens.lsp import documents

    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text(TEX, encoding="utf-8")
    ls = in_process_server(tmp_path, {"offline": True, "cacheDir": str(tmp_path / "cache")})
    sent: list[lsp.PublishDiagnosticsParams] = []
    ls.publisher.send = sent.append
    u = uri(tex)
    item = lsp.TextDocumentItem(uri=u, language_id="latex", version=1, text=TEX)
    ls.workspace.put_text_document(item)  # (pygls's own didOpen, then CiteLens's)
    documents.did_open(ls, lsp.DidOpenTextDocumentParams(item))
    assert [d.code for d in sent[-1].diagnostics] == ["UNDEFINED_CITATION"]
    line = TEX.splitlines().index("See \\cite{betx} here.")
    at = lsp.Range(lsp.Position(line, 14), lsp.Position(line, 14))
    change = lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
        [lsp.TextDocumentContentChangePartial(range=at, text="y")])

    def keystroke() -> None:
        ls.workspace.update_text_document(change.text_document, change.content_changes[0])
        documents.did_change(ls, change)  # (pygls's didChange, then CiteLens's; no loop: analysed now)

    crossings = _crossings(keystroke)
    # \cite{betxy}: the diagnostic follows the keystroke, at the new key's range
    assert sent[-1].version == 2
    [d] = sent[-1].diagnostics
    assert d.code == "UNDEFINED_CITATION" and isinstance(d.data, dict) and d.data["key"] == "betxy"
    assert (d.range.start.character, d.range.end.character) == (10, 15)
    assert len(crossings) <= 2, crossings
    assert [c.split(" -> ")[1] for c in crossings] == [
        "citelens.workspace.session.apply_edit", "citelens.workspace.session.update"]
