"""End-to-end (VS Code-like and Neovim-like clients): rename of a cite key, workspace
symbols, document links and hovers on a citation command, on the real dissertation."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fakes.scholarly import SOURCES, ScholarlyFake
from tests.harness import CORPUS
from tests.lsp_session import PRESETS, diagnostics, open_doc, session, uri, wait_for

THESIS = CORPUS / "papers" / "thammegowda-dissertation"
KEY = "vaswani-2017-attention"


@pytest.fixture(params=PRESETS)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The dissertation, a Markdown note using its .bib, and an unrelated paper that
    cites the same key from its own .bib."""
    ws = tmp_path / "ws"
    shutil.copytree(THESIS, ws / "thesis")
    (ws / "thesis" / "notes.md").write_text(
        "---\nbibliography: anthology.bib\n---\n\n"
        f"Transformers [@{KEY}; @kingma2015adam] and @{KEY} again.\n"
        f"`code @{KEY}` <!-- [@{KEY}] -->\n",
        encoding="utf-8",
    )
    other = ws / "other"
    other.mkdir()
    (other / "paper.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n"
        f"Attention \\cite{{{KEY}}}.\n\\bibliography{{refs}}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    (other / "refs.bib").write_text(
        f"@article{{{KEY},\n  title = {{Attention Is All You Need}},\n  year = 2017,\n}}\n", encoding="utf-8"
    )
    return ws


def _position(path: Path, needle: str, nth: int = 0) -> lsp.Position:
    text = path.read_text(encoding="utf-8")
    at = [m.start() for m in re.finditer(re.escape(needle), text)][nth]
    line = text.count("\n", 0, at)
    return lsp.Position(line, at - (text.rfind("\n", 0, at) + 1))


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _changes(edit: lsp.WorkspaceEdit) -> dict[str, list[lsp.TextEdit]]:
    if edit.document_changes:
        out: dict[str, list[lsp.TextEdit]] = {}
        for dc in edit.document_changes:
            assert isinstance(dc, lsp.TextDocumentEdit)
            out[dc.text_document.uri] = [e for e in dc.edits if isinstance(e, lsp.TextEdit)]
        return out
    return dict(edit.changes or {})


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.split("\n")
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)

    def off(p: lsp.Position) -> int:
        return starts[p.line] + p.character  # ASCII files: UTF-16 == characters

    for e in sorted(edits, key=lambda e: off(e.range.start), reverse=True):
        text = text[: off(e.range.start)] + e.new_text + text[off(e.range.end) :]
    return text


async def test_rename_a_key_across_the_chapters_and_the_bib(preset: str, workspace: Path) -> None:
    thesis = workspace / "thesis"
    chapter = thesis / "chapter" / "06-robustness.tex"
    async with session(preset, workspace) as client:
        u = open_doc(client, chapter)
        await diagnostics(client, u)
        pos = _position(chapter, KEY, 1)  # line 333 (the first one is in a comment)
        prep = await client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(lsp.TextDocumentIdentifier(u), pos)
        )
        assert isinstance(prep, lsp.PrepareRenamePlaceholder)
        assert prep.placeholder == KEY
        assert prep.range.start.line == pos.line == 332
        assert prep.range.end.character - prep.range.start.character == len(KEY)

        edit = await client.text_document_rename_async(
            lsp.RenameParams(lsp.TextDocumentIdentifier(u), pos, "vaswani2017attention")
        )
        assert edit is not None
        changes = _changes(edit)
        counts = {k.rsplit("/", 1)[-1]: len(v) for k, v in changes.items()}
        assert counts == {
            "anthology.bib": 1,
            "01-intro.tex": 1,
            "02-ml-background.tex": 2,
            "03-nlg-imbalance.tex": 4,
            "04-evaluation.tex": 2,
            "06-robustness.tex": 3,
            "07-multilingual-nmt.tex": 3,
            "08-related-work.tex": 1,
            "notes.md": 2,
        }, counts
        for u2, es in changes.items():
            path = Path(u2.removeprefix("file://"))
            before = _read(path)
            after = _apply(before, es)
            assert after.replace("vaswani2017attention", KEY) == before
            if path.suffix == ".tex":
                # the commented-out citations keep the old key
                assert all(KEY not in ln.split("%", 1)[0] for ln in after.splitlines()), path
        notes = _apply((thesis / "notes.md").read_text(), changes[uri(thesis / "notes.md")])
        assert "[@vaswani2017attention; @kingma2015adam] and @vaswani2017attention again" in notes
        assert f"`code @{KEY}` <!-- [@{KEY}] -->" in notes
        bib = _apply((thesis / "anthology.bib").read_text(), changes[uri(thesis / "anthology.bib")])
        assert "@inproceedings{vaswani2017attention," in bib
        # the chapter no project includes, and the other paper, are left alone
        assert uri(thesis / "chapter" / "x01-transformers.tex") not in changes
        assert uri(workspace / "other" / "paper.tex") not in changes
        assert uri(workspace / "other" / "refs.bib") not in changes


async def test_rename_from_the_bib_entry_and_refusals(preset: str, workspace: Path) -> None:
    bib = workspace / "thesis" / "anthology.bib"
    async with session(preset, workspace) as client:
        open_doc(client, workspace / "thesis" / "main1.tex")
        u = open_doc(client, bib)
        await diagnostics(client, u)
        pos = _position(bib, "{" + KEY)
        pos = lsp.Position(pos.line, pos.character + 3)
        edit = await client.text_document_rename_async(
            lsp.RenameParams(lsp.TextDocumentIdentifier(u), pos, "attention-is-all")
        )
        assert edit is not None
        changes = _changes(edit)
        assert uri(bib) in changes and uri(workspace / "thesis" / "chapter" / "01-intro.tex") in changes
        for bad, why in (
            ("has space", "not a valid citation key"),
            ("kingma2015adam", "already exists"),
            ("Kingma2015Adam", "only in case"),
        ):
            with pytest.raises(JsonRpcException) as err:
                await client.text_document_rename_async(
                    lsp.RenameParams(lsp.TextDocumentIdentifier(u), pos, bad)
                )
            assert why in str(err.value), err.value
        # not on a key: prepareRename refuses with a message
        with pytest.raises(JsonRpcException) as err:
            await client.text_document_prepare_rename_async(
                lsp.PrepareRenameParams(lsp.TextDocumentIdentifier(u), lsp.Position(pos.line + 1, 2))
            )
        assert "key" in str(err.value)


def _names(result: object) -> list[str]:
    assert isinstance(result, list)
    return [s.name.split(" — ")[0] for s in result]


async def test_workspace_symbols_by_key_title_and_first_author(preset: str, workspace: Path) -> None:
    async with session(preset, workspace) as client:
        u = open_doc(client, workspace / "thesis" / "main1.tex")
        await diagnostics(client, u)
        by_key = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="vaswani-2017"))
        assert _names(by_key) == [KEY, KEY]  # the thesis's .bib and the other paper's
        paths = sorted(s.location.uri.rsplit("/", 2)[-2] for s in by_key)
        assert paths == ["other", "thesis"]
        thesis = next(s for s in by_key if "/thesis/" in s.location.uri)
        assert "Vaswani" in thesis.name and "2017" in thesis.name and "Attention" in thesis.name
        text = (workspace / "thesis" / "anthology.bib").read_text(encoding="utf-8")
        line = text[: text.index("{" + KEY)].count("\n")
        assert thesis.location.range.start.line == line
        by_title = await client.workspace_symbol_async(
            lsp.WorkspaceSymbolParams(query="attention all you need")
        )
        assert KEY in _names(by_title)
        assert all("ttention" in s.name for s in by_title)
        by_author = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="doddington"))
        assert _names(by_author) == ["doddington-2002-NIST"]
        # Polosukhin is the last author, not the first: no match
        none = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="polosukhin"))
        assert KEY not in _names(none)


async def test_document_links_in_bib_and_tex(preset: str, workspace: Path) -> None:
    bib = workspace / "thesis" / "links.bib"
    bib.write_text(
        "@article{a,\n  title = {A},\n  doi = {10.1000/xyz_1},\n"
        "  url = {https://example.org/paper.pdf},\n}\n"
        "@misc{b,\n  title = {B},\n  eprint = {1706.03762},\n  archivePrefix = {arXiv},\n}\n"
        "@misc{c,\n  title = {C},\n  eprint = {12345},\n  archivePrefix = {HAL},\n}\n",
        encoding="utf-8",
    )
    async with session(preset, workspace) as client:
        u = open_doc(client, bib)
        links = await client.text_document_document_link_async(
            lsp.DocumentLinkParams(lsp.TextDocumentIdentifier(u))
        )
        assert links is not None
        lines = bib.read_text(encoding="utf-8").splitlines()
        got = {
            (ln.target, lines[ln.range.start.line][ln.range.start.character : ln.range.end.character])
            for ln in links
        }
        assert got == {
            ("https://doi.org/10.1000/xyz_1", "10.1000/xyz_1"),
            ("https://example.org/paper.pdf", "https://example.org/paper.pdf"),
            ("https://arxiv.org/abs/1706.03762", "1706.03762"),
        }
        main = workspace / "thesis" / "body.tex"
        u = open_doc(client, main)
        links = await client.text_document_document_link_async(
            lsp.DocumentLinkParams(lsp.TextDocumentIdentifier(u))
        )
        assert links is not None
        targets = {ln.target for ln in links}
        assert uri(workspace / "thesis" / "anthology.bib") in targets
        assert uri(workspace / "thesis" / "chapter" / "01-intro.tex") in targets
        text_lines = main.read_text(encoding="utf-8").splitlines()
        bib_link = next(ln for ln in links if ln.target and ln.target.endswith("anthology.bib"))
        r = bib_link.range
        assert text_lines[r.start.line][r.start.character : r.end.character] == "anthology"


PAPER_TEX = (
    "\\documentclass{article}\n\\begin{document}\n"
    "Transformers \\citep[see][p.~3]{vaswani2017, missing2020} changed NLP.\n"
    "\\bibliography{refs}\n\\end{document}\n"
)
PAPER_BIB = (
    "@inproceedings{vaswani2017,\n  title = {Attention Is All You Need: the {\\_\\_init\\_\\_} "
    "of *transformers*},\n  author = {Vaswani, Ashish and Shazeer, Noam},\n"
    "  booktitle = {NeurIPS},\n  year = {2017},\n  eprint = {1706.03762},\n"
    "  archivePrefix = {arXiv},\n  doi = {10.5555/3295222.3295349},\n}\n"
)


def _hover_text(h: lsp.Hover | None) -> str:
    assert h is not None
    assert isinstance(h.contents, lsp.MarkupContent)
    return h.contents.value


async def test_hover_on_the_cite_command_lists_its_entries(preset: str, tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text(PAPER_TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(PAPER_BIB, encoding="utf-8")
    async with session(preset, tmp_path) as client:
        u = open_doc(client, tmp_path / "paper.tex")
        await diagnostics(client, u)
        on_command = lsp.Position(2, PAPER_TEX.splitlines()[2].index("citep") + 2)
        h = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(u), on_command))
        text = _hover_text(h)
        assert text.startswith("**Cites 2 entries**")
        items = [ln for ln in text.splitlines() if ln.startswith("- ")]
        assert len(items) == 2
        assert items[0].startswith("- `vaswani2017` — Vaswani et al. 2017 · *Attention Is All")
        assert items[1] == "- `missing2020` — ❌ not defined in any bibliography of this document"
        assert h is not None and h.range is not None
        line = PAPER_TEX.splitlines()[2]
        assert (h.range.start.character, h.range.end.character) == (
            line.index("\\citep"),
            line.index(" changed"),
        )
        # the optional argument belongs to the command too; plain text does not
        on_opt = lsp.Position(2, line.index("see"))
        assert "Cites 2 entries" in _hover_text(
            await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(u), on_opt))
        )
        assert (
            await client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(2, line.index("changed")))
            )
            is None
        )


async def test_hovers_need_no_backslash_escapes(preset: str, tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text(PAPER_TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(PAPER_BIB, encoding="utf-8")
    async with session(preset, tmp_path) as client:
        u = open_doc(client, tmp_path / "paper.tex")
        await diagnostics(client, u)
        line = PAPER_TEX.splitlines()[2]
        for col in (line.index("vaswani2017") + 2, line.index("citep")):
            text = _hover_text(
                await client.text_document_hover_async(
                    lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(2, col))
                )
            )
            assert "\\" not in text, text
            # markup in the title is shown as written, in a code span, not escaped
            assert "`__init__`" in text and "`*transformers*`" in text, text
        text = _hover_text(
            await client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(2, line.index("vaswani2017") + 2))
            )
        )
        assert "arXiv [1706.03762](https://arxiv.org/abs/1706.03762)" in text


async def test_hover_says_in_one_line_that_verification_is_running(
    preset: str,
    tmp_path: Path,
    scholarly_server: ScholarlyFake,
) -> None:
    (tmp_path / "paper.tex").write_text(PAPER_TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(PAPER_BIB, encoding="utf-8")
    for source in SOURCES:
        scholarly_server.set_mode(source, "stall", stall_s=8.0)
    env = scholarly_server.env(cache=tmp_path / "cache")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 0, "requestTimeoutS": 10.0}
    async with session(preset, tmp_path, env=env, settings=settings) as client:
        u = open_doc(client, tmp_path / "paper.tex")
        await diagnostics(client, u)
        await wait_for(lambda: scholarly_server.requests() != [], 10, "a request to a source")
        line = PAPER_TEX.splitlines()[2]
        text = _hover_text(
            await client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(2, line.index("vaswani2017") + 2))
            )
        )
        running = [ln for ln in text.splitlines() if "erif" in ln]
        assert running == ["⏳ Verification of this entry is still running"], text
        text = _hover_text(
            await client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(2, line.index("citep")))
            )
        )
        assert "⏳ verifying" in text.splitlines()[2], text


ASTROPY = CORPUS / "papers" / "astropy-v5.0"


async def test_a_key_in_an_entry_that_is_not_closed_is_not_called_undefined(preset: str) -> None:
    ms = ASTROPY / "ms.tex"
    bib = ASTROPY / "refs.bib"
    async with session(preset, ASTROPY) as client:
        u = open_doc(client, ms)
        diags = await diagnostics(client, u)
        # BibTeX still uses the entry: no UNDEFINED_CITATION for ASDF, the error is at the .bib
        assert not [d for d in diags if "'ASDF'" in d.message], [d.message for d in diags]
        ms_lines = _read(ms).splitlines()
        cite_line = next(i for i, ln in enumerate(ms_lines) if "citep{ASDF}" in ln)
        bib_lines = _read(bib).splitlines()
        entry_line = next(i for i, ln in enumerate(bib_lines) if ln.startswith("@ARTICLE{ASDF,"))
        b = open_doc(client, bib)
        syntax = [d for d in await diagnostics(client, b) if d.code == "BIB_SYNTAX"]
        at_entry = [d for d in syntax if d.range.start.line <= entry_line <= d.range.end.line]
        assert len(at_entry) == 1 and "not closed" in at_entry[0].message, [d.message for d in syntax]
        d = at_entry[0]
        assert d.related_information or preset != "visual-studio-code"
        if d.related_information:  # the Neovim preset may not announce support
            loc = d.related_information[0].location
            assert loc.uri == uri(ms)
            assert loc.range.start.line == cite_line
            assert "'ASDF' is cited here" in d.related_information[0].message
        line = ms_lines[cite_line]
        col = line.index("ASDF}")
        hover = await client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(u), lsp.Position(cite_line, col))
        )
        text = _hover_text(hover)
        assert f"refs.bib:{entry_line + 1} in an entry that is not closed" in text, text


async def test_the_end_of_run_summary_is_logged_at_info(
    preset: str,
    tmp_path: Path,
    scholarly_server: ScholarlyFake,
) -> None:
    (tmp_path / "paper.tex").write_text(PAPER_TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(PAPER_BIB, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    settings = {
        "verificationEnabled": True,
        "verifyDebounceMs": 0,
        "requestTimeoutS": 2.0,
        "s2RequestsPerSecond": 200,
    }
    async with session(preset, tmp_path, env=env, settings=settings) as client:
        open_doc(client, tmp_path / "paper.tex")

        def summaries() -> list[lsp.LogMessageParams]:
            return [m for m in client.log_messages if m.message.startswith("verified ")]

        await wait_for(lambda: bool(summaries()), 20, "the end-of-run summary")
        assert [m.type for m in summaries()] == [lsp.MessageType.Info]


async def test_a_whole_library_gets_no_document_links(preset: str, workspace: Path) -> None:
    """VS Code asks for a document's links after every edit: a library of thousands of
    entries answers none (68,000 entries were 137,000 links and seconds of work each time)."""
    from citelens.lsp.links import MAX_LINKED_ENTRIES

    bib = workspace / "thesis" / "library.bib"
    bib.write_text(
        "".join(
            f"@article{{k{i},\n  title = {{T{i}}},\n  doi = {{10.1000/x{i}}},\n}}\n"
            for i in range(MAX_LINKED_ENTRIES + 1)
        ),
        encoding="utf-8",
    )
    async with session(preset, workspace) as client:
        u = open_doc(client, bib)
        links = await client.text_document_document_link_async(
            lsp.DocumentLinkParams(lsp.TextDocumentIdentifier(u))
        )
        assert links is not None and len(links) == 0
