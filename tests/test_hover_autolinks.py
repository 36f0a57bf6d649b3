"""Hover text never lets a Markdown renderer make a link from a .bib (issue 32, break 9):
bare ``https://…``, ``www.…`` and e-mail addresses in a title are shown in code spans, which
no renderer autolinks. Through the real server (pytest-lsp)."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

from citelens.core.mdplain import plain
from tests.lsp_session import diagnostics, open_doc, session
from tests.test_never_corrupt import _pos

BIB = r"""@article{lure,
  title = {Results at https://evil.example/login and www.evil.example, write to help@evil.example},
  author = {Smith, John},
  year = {2020}
}
"""
_CODE_SPAN = re.compile(r"`[^`]*`")


async def test_bare_addresses_in_a_hover_are_not_autolinked(tmp_path: Path) -> None:
    """The title's ``https://evil.example/login``, ``www.evil.example`` and e-mail address
    appear only inside code spans. Before, they were left bare, and VS Code's hover made each
    a clickable link chosen by the .bib's author."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    text = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{lure}.\n"
            "\\bibliography{refs}\n\\end{document}\n")
    tex = tmp_path / "main.tex"
    tex.write_text(text, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tex)
        await diagnostics(client, u)
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), _pos(text, "lure}", 1)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    shown = hover.contents.value
    assert "evil.example" in shown, shown
    outside = _CODE_SPAN.sub("", shown)
    assert "evil.example" not in outside, (outside, shown)
    assert "`https://evil.example/login`" in shown and "`www.evil.example,`" in shown, shown


def test_plain_leaves_ordinary_text_alone() -> None:
    """Only what a renderer would link is wrapped: a title with dots, ``@`` alone and
    snake_case words stays as written."""
    title = "Results v2.0 at 3.5 GHz for s2_batch: a survey @ scale"
    assert plain(title) == title
