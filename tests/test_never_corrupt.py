"""Never corrupt a writer's citations (issue 22): text sync, merges across .bib files,
renames that reach unopened papers, symlinked .bib files, long and unusual citation
commands. Through the real server (pytest-lsp)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from citelens.core.text import LineIndex
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import diagnostics, open_doc, session, uri
from tests.test_lsp_verification import apply_text_edits, edits_for
from tests.test_safe_edits import SETTINGS

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


# --------------------------------------------------------------------------- merges and renames

SMITH = ("@article{{{key},\n  title = {{Cats and their whiskers: a field study}},\n"
         "  author = {{Smith, John and Doe, Jane}},\n  journal = {{Journal of Cats}},\n"
         "  year = {{2020}},\n  doi = {{10.1234/cats.2020.1}}\n}}\n")

SMITH_PAPER = {"title": "Cats and their whiskers: a field study",
               "authors": ["John Smith", "Jane Doe"], "year": 2020, "venue": "Journal of Cats",
               "doi": "10.1234/cats.2020.1", "type": "journal-article",
               "publication_types": ["JournalArticle"]}


def _tex(cites: str, bibs: str) -> str:
    return (f"\\documentclass{{article}}\n\\begin{{document}}\n{cites}\n"
            f"\\bibliography{{{bibs}}}\n\\end{{document}}\n")


def _touched(edit: lsp.WorkspaceEdit) -> set[str]:
    out = set(edit.changes or {})
    for dc in edit.document_changes or []:
        assert isinstance(dc, lsp.TextDocumentEdit)
        out.add(dc.text_document.uri)
    return out


async def test_a_merge_across_two_bib_files_never_breaks_another_paper(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """Paper A reads shared.bib; paper B reads shared.bib and extra.bib, which holds the same
    paper under another key. Dropping ``smith2020`` from shared.bib would leave paper A
    citing a key its bibliography no longer defines: that merge is not offered; the other
    direction (drop the extra.bib copy, which only paper B reads) is, and no merge is the
    preferred action. Before, the preferred action deleted ``smith2020`` from shared.bib and
    rewrote paper A's citation."""
    (tmp_path / "shared.bib").write_text(SMITH.format(key="smith2020"), encoding="utf-8")
    (tmp_path / "extra.bib").write_text(SMITH.format(key="Smith_2020_cats"), encoding="utf-8")
    for name, cites, bibs in (("paperA", "\\cite{smith2020}", "../shared"),
                              ("paperB", "\\cite{smith2020} \\cite{Smith_2020_cats}",
                               "../shared,../extra")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "main.tex").write_text(_tex(cites, bibs), encoding="utf-8")
    scholarly_server.add_paper(SMITH_PAPER)
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=SETTINGS) as client:
        open_doc(client, tmp_path / "paperB" / "main.tex")
        u = open_doc(client, tmp_path / "shared.bib")
        diags = await diagnostics(client, u, lambda ds: any(
            d.code == "DUPLICATE_ENTRY" for d in ds))
        dup = next(d for d in diags if d.code == "DUPLICATE_ENTRY")
        assert "Smith_2020_cats" in dup.message
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(u), range=dup.range,
            context=lsp.CodeActionContext(diagnostics=[dup])))
        merges = [a for a in got or [] if isinstance(a, lsp.CodeAction)
                  and a.title.startswith("Merge duplicate")]
        assert [a.title for a in merges] == ["Merge duplicate into smith2020"], \
            [a.title for a in merges]
        assert not merges[0].is_preferred
        assert merges[0].edit is not None
        assert uri(tmp_path / "paperA" / "main.tex") not in _touched(merges[0].edit)


async def test_a_rename_to_a_key_an_unopened_paper_defines_is_refused(tmp_path: Path) -> None:
    """Only paper A is open. Paper B (not open) reads shared.bib and extra.bib, which
    defines ``new``: renaming ``k1`` to ``new`` would switch paper B's citations to another
    paper, so it is refused. Before, it was accepted unless paper B was open."""
    (tmp_path / "shared.bib").write_text(BIB.replace("beta", "k1"), encoding="utf-8")
    (tmp_path / "extra.bib").write_text(SMITH.format(key="new"), encoding="utf-8")
    for name, cites, bibs in (("paperA", "\\cite{k1}", "../shared"),
                              ("paperB", "\\cite{k1} \\cite{new}", "../shared,../extra")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "main.tex").write_text(_tex(cites, bibs), encoding="utf-8")
    a_tex = tmp_path / "paperA" / "main.tex"
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, a_tex)
        await diagnostics(client, u)
        text = a_tex.read_text(encoding="utf-8")
        with pytest.raises(JsonRpcException) as err:
            await client.text_document_rename_async(lsp.RenameParams(
                lsp.TextDocumentIdentifier(u), _pos(text, "k1}", 1), "new"))
        assert "already exists" in str(err.value), err.value
        # another name is accepted, and reaches paper B too
        edit = await client.text_document_rename_async(lsp.RenameParams(
            lsp.TextDocumentIdentifier(u), _pos(text, "k1}", 1), "k2"))
        assert edit is not None
        assert uri(tmp_path / "paperB" / "main.tex") in _touched(edit)


async def test_a_rename_reaches_papers_using_the_real_path_of_a_symlinked_bib(
        tmp_path: Path) -> None:
    """Paper A reads ``refs.bib``, a symlink to ``lib/refs.bib``, which paper B reads by its
    real path: renaming from paper A edits paper B's citation too. Before, paths were
    compared with ``normpath`` and paper B's citation was left undefined."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "paperA").mkdir()
    (tmp_path / "paperA" / "refs.bib").symlink_to(tmp_path / "lib" / "refs.bib")
    (tmp_path / "paperA" / "main.tex").write_text(_tex("\\cite{beta}", "refs"), encoding="utf-8")
    (tmp_path / "paperB").mkdir()
    (tmp_path / "paperB" / "main.tex").write_text(_tex("\\cite{beta}", "../lib/refs"),
                                                  encoding="utf-8")
    a_tex = tmp_path / "paperA" / "main.tex"
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, a_tex)
        await diagnostics(client, u)
        text = a_tex.read_text(encoding="utf-8")
        edit = await client.text_document_rename_async(lsp.RenameParams(
            lsp.TextDocumentIdentifier(u), _pos(text, "beta}", 1), "gamma"))
        assert edit is not None
        touched = _touched(edit)
        assert uri(tmp_path / "paperB" / "main.tex") in touched, touched
        assert u in touched
        # the .bib is edited once, whichever path names it
        bibs = [t for t in touched if t.endswith("refs.bib")]
        assert len(bibs) == 1, touched


# --------------------------------------------------------------------------- special files


async def test_the_server_skips_special_files_and_says_why(tmp_path: Path) -> None:
    """A chapter (no \\documentclass: its siblings are read to find its root) next to .tex
    links to /dev/zero and /dev/stdin (the server's own input) and a FIFO: the server
    answers, and its log says why each was skipped. Before, /dev/stdin and the FIFO hung
    the server for good, and /dev/zero raised a MemoryError."""
    from tests.test_hostile_input import _special_files

    _special_files(tmp_path)
    chapter = tmp_path / "chapter.tex"
    chapter.write_text("Text \\cite{beta} and \\cite{nokey}.\n", encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, chapter)
        await diagnostics(client, u, timeout=30)
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(0, 1)))
        assert hover is None or hover.contents is not None
        logs = "\n".join(m.message for m in client.log_messages)
        for name, why in (("zero.tex", "a device"), ("stdin.tex", "a FIFO"),
                          ("fifo.tex", "a FIFO")):
            assert f"skipped {tmp_path / name}: not a regular file ({why})" in logs, logs


# --------------------------------------------------------------------------- Markdown injection

EVIL_BIB = r"""@article{track,
  title = {Cats [Open the retraction notice](https://evil.example/notice) ![pixel](https://track.example/p.png)},
  author = {Smith, John},
  year = {2020},
  url = {https://example.org/a)![x](https://track.example/q.png}
}
@article{cmd,
  title = {[✅ Verified](command:workbench.action.terminal.new)},
  author = {Doe, Jane},
  year = {2021},
  url = {javascript:alert(1)}
}
@article{fine,
  title = {A fine paper},
  author = {Roe, Richard},
  year = {2019},
  url = {https://example.org/paper(1)}
}
"""
_CODE_SPAN = re.compile(r"`[^`]*`")
_MD_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)\)")
_OUR_TARGETS = ("https://doi.org/", "https://arxiv.org/abs/", "https://www.semanticscholar.org/paper/")


def _links_outside_code(markdown: str) -> list[tuple[str, str, str]]:
    return _MD_LINK.findall(_CODE_SPAN.sub("", markdown))


async def test_hover_and_completion_never_render_markdown_from_a_bib(tmp_path: Path) -> None:
    """Titles and urls written to plant an image, a fake "Open the retraction notice" and a
    fake "✅ Verified" link: the hover and the completion show them as text; a url becomes a
    link only when it is an http(s) address, percent-encoded whole (``javascript:`` never).
    Before, the url went raw into the link target (``[link](https://example.org/a)![x](…)``
    planted a tracking image) and completion showed titles as Markdown."""
    (tmp_path / "refs.bib").write_text(EVIL_BIB, encoding="utf-8")
    text = _tex("\\cite{track} \\cite{cmd} \\cite{fine} \\cite{}", "refs")
    tex = tmp_path / "main.tex"
    tex.write_text(text, encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tex)
        await diagnostics(client, u)
        shown: dict[str, str] = {}
        for key in ("track", "cmd", "fine"):
            hover = await client.text_document_hover_async(lsp.HoverParams(
                lsp.TextDocumentIdentifier(u), _pos(text, key + "}", 1)))
            assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
            shown[key] = hover.contents.value
        items = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(u), _pos(text, "\\cite{}", 6)))
        listed = items.items if isinstance(items, lsp.CompletionList) else items or []
        for item in listed:
            doc = item.documentation
            if isinstance(doc, lsp.MarkupContent):
                shown["completion " + item.label] = doc.value
    assert {"completion track", "completion cmd"} <= set(shown), list(shown)
    for where, markdown in shown.items():
        for bang, _label, target in _links_outside_code(markdown):
            assert not bang, (where, markdown)
            assert target.startswith(_OUR_TARGETS) or (  # or one whole, encoded http(s) URL
                target.startswith("https://example.org/") and not set("()[]<>!") & set(target)
            ), (where, target, markdown)
    assert "[link](https://example.org/paper%281%29)" in shown["fine"], shown["fine"]
    assert "javascript:" not in "".join(t for _b, _l, t in _links_outside_code(shown["cmd"]))
