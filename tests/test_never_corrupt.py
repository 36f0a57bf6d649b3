"""Never corrupt a writer's citations (issue 22): text sync, merges across .bib files,
renames that reach unopened papers, symlinked .bib files, long and unusual citation
commands. Through the real server (pytest-lsp)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from citelens.core.text import LineIndex
from tests.lsp_session import diagnostics, open_doc, session
from tests.test_lsp_verification import apply_text_edits, edits_for

#: Every character Python's ``str.splitlines`` breaks at but LSP does not.
NOT_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
BIB = "@article{beta, title = {Beta}, author = {Bee, Anna}, year = {2020}}\n"


def _pos(text: str, needle: str, delta: int = 0) -> lsp.Position:
    p = LineIndex(text).position(text.index(needle) + delta)
    return lsp.Position(p.line, p.character)


def _undefined(diags: object) -> list[str]:
    return sorted(d.data["key"] for d in diags  # type: ignore[attr-defined]
                  if d.code == "UNDEFINED_CITATION" and isinstance(d.data, dict))


@pytest.mark.parametrize("char", list(NOT_LINE_BREAKS))
async def test_a_form_feed_does_not_desynchronise_the_document(tmp_path: Path, char: str) -> None:
    """A form feed (or \\v, U+2028, …) above an edit: the server's copy stays the client's,
    so the fixed typo loses its UNDEFINED_CITATION and the rename writes \\cite{gamma}.
    Before, the server broke lines there, each keystroke landed a line higher, and the
    rename wrote ``\\citegammaa}``."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    text = (f"\\documentclass{{article}}\n% page{char}break {char}{char}\n\\begin{{document}}\n"
            "See \\cite{betx} here.\n\\bibliography{refs}\n\\end{document}\n")
    tex = tmp_path / "main.tex"
    tex.write_text(text, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tex, text)
        await diagnostics(client, u, lambda ds: _undefined(ds) == ["betx"])
        at = _pos(text, "betx", 3)
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=u, version=2), [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(at, lsp.Position(at.line, at.character + 1)), text="a")]))
        text = text.replace("betx", "beta")
        await diagnostics(client, u, lambda ds: _undefined(ds) == [])
        edit = await client.text_document_rename_async(lsp.RenameParams(
            lsp.TextDocumentIdentifier(u), _pos(text, "beta", 1), "gamma"))
        assert edit is not None
        after = apply_text_edits(text, edits_for(edit, u))
        assert "See \\cite{gamma} here." in after, after
        assert after.replace("gamma", "beta") == text
