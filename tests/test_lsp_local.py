"""End-to-end: the real server, as VS Code and as Neovim, on real papers, no network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.harness import CORPUS
from tests.lsp_session import PRESETS, codes, diagnostics, open_doc, rng, session, uri, wait_for

THESIS = CORPUS / "papers" / "thammegowda-dissertation"
RMD = CORPUS / "papers" / "tsr-dockerfiles-rmd"
GMR = CORPUS / "papers" / "joss-gmr"


@pytest.fixture(params=PRESETS)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_undefined_keys_of_the_thesis_at_their_exact_ranges(preset: str) -> None:
    chapter = THESIS / "chapter" / "04-evaluation.tex"
    async with session(preset, THESIS) as client:
        u = open_doc(client, chapter)
        diags = await diagnostics(client, u)
        undefined = [d for d in diags if d.code == "UNDEFINED_CITATION"]
        assert [(d.message, rng(d)) for d in undefined] == [
            ("Citation key 'Artetxe-2018-unmt-iclr' is not defined in anthology.bib",
             (395, 162, 395, 184)),
            ("Citation key 'Lample-2018-unmt-iclr' is not defined in anthology.bib",
             (395, 185, 395, 206)),
        ]
        d = undefined[0]
        assert d.source == "citelens"
        assert d.severity == lsp.DiagnosticSeverity.Error
        assert d.code_description is not None
        assert d.code_description.href.endswith("docs/diagnostics.md#undefined_citation")
        # The project's other chapter and its .bib get theirs too, unopened.
        other = await diagnostics(client, uri(THESIS / "chapter" / "06-robustness.tex"))
        assert codes(other) == ["UNDEFINED_CITATION", "UNDEFINED_CITATION"]
        bib = await diagnostics(client, uri(THESIS / "anthology.bib"))
        assert set(codes(bib)) == {"DUPLICATE_KEY"} and len(bib) == 10
        first = bib[0]
        assert first.related_information or preset == "neovim-without-related"
        # Nothing spurious anywhere else in the thesis.
        for other_uri, ds in client.diagnostics.items():
            if other_uri not in {u, uri(THESIS / "chapter" / "06-robustness.tex"),
                                 uri(THESIS / "anthology.bib")}:
                assert not ds, (other_uri, ds)


async def test_citations_in_an_html_comment_are_not_reported(preset: str) -> None:
    async with session(preset, RMD) as client:
        u = open_doc(client, RMD / "ten-simple-rules-dockerfiles.Rmd")
        await diagnostics(client, uri(RMD / "bibliography.bib"))
        assert not client.diagnostics.get(u)
        bib = client.diagnostics[uri(RMD / "bibliography.bib")]
        assert codes(bib) == ["DUPLICATE_KEY", "DUPLICATE_KEY"]
        assert all("chen_open_2019" in d.message for d in bib)


async def test_hover_definition_references_on_a_markdown_paper(preset: str) -> None:
    paper = GMR / "paper.md"
    text = paper.read_text(encoding="utf-8")
    line = text.splitlines().index(next(x for x in text.splitlines() if x.startswith("@Calinon")))
    async with session(preset, GMR) as client:
        u = open_doc(client, paper)
        await diagnostics(client, u)
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(line, 3)))
        assert hover is not None
        assert isinstance(hover.contents, lsp.MarkupContent)
        value = hover.contents.value
        assert "Sylcain Calinon" in value  # the entry as written (its real typo)
        assert "2007" in value
        assert "https://doi.org/10.1109/tsmcb.2006.886952" in value.lower()
        assert hover.range is not None and rng(hover) == (line, 1, line, 12)

        defs = await client.text_document_definition_async(lsp.DefinitionParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(line, 3)))
        assert isinstance(defs, list) and len(defs) == 1
        assert defs[0].uri == uri(GMR / "paper.bib")
        assert defs[0].range.start.line == 32  # "@ARTICLE{Calinon2007," is line 33

        refs = await client.text_document_references_async(lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri(GMR / "paper.bib")),
            position=lsp.Position(32, 12),
            context=lsp.ReferenceContext(include_declaration=False)))
        assert refs is not None
        assert [(r.uri, r.range.start.line) for r in refs] == [(u, line)]


async def test_completion_inside_a_citation(preset: str, tmp_path: Path) -> None:
    shutil.copy(GMR / "paper.bib", tmp_path / "refs.bib")
    doc = tmp_path / "main.tex"
    doc.write_text("\\documentclass{article}\n\\begin{document}\nSee \\citep[p.~2]{Calin"
                   "\n\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    async with session(preset, tmp_path) as client:
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(2, 22)))
        assert isinstance(result, lsp.CompletionList)
        labels = [i.label for i in result.items]
        assert labels == ["Calinon2007"]
        item = result.items[0]
        assert item.detail == "Calinon 2007"
        assert isinstance(item.documentation, lsp.MarkupContent)
        assert "Gaussian mixture" in item.documentation.value or item.documentation.value
        # Outside a citation: nothing.
        none = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(2, 3)))
        assert none is None or not getattr(none, "items", none)


async def test_edits_update_diagnostics_and_bib_changes_on_disk_are_seen(
    preset: str, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    shutil.copy(GMR / "paper.bib", bib)
    doc = tmp_path / "main.tex"
    text = "\\documentclass{article}\nA \\cite{Calinon2007}.\n\\bibliography{refs}\n"
    doc.write_text(text, encoding="utf-8")
    async with session(preset, tmp_path) as client:
        u = open_doc(client, doc, text)
        await diagnostics(client, u)
        assert not client.diagnostics[u]
        # Type a new key: reported at once.
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=u),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(1, 19), lsp.Position(1, 19)), text=",Nobody2024")]))
        diags = await diagnostics(client, u, lambda ds: len(ds) == 1)
        assert diags[0].code == "UNDEFINED_CITATION" and rng(diags[0]) == (1, 20, 1, 30)
        # The .bib gains the entry on disk, no watched-files event (as in Neovim): the next
        # change of the document sees it.
        bib.write_text(bib.read_text() + "\n@misc{Nobody2024, title={X}, year={2024}}\n")
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=3, uri=u),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(1, 0), lsp.Position(1, 0)), text="B")]))
        await diagnostics(client, u, lambda ds: len(ds) == 0)


# H é l l ö ␠ 😀 ␠ \cite{ : 14 code points, 15 UTF-16 units (😀 is a surrogate pair), 19 bytes.
@pytest.mark.parametrize("encoding,expected", [("utf-16", (1, 15, 1, 18)), ("utf-8", (1, 19, 1, 22))])
async def test_ranges_follow_the_negotiated_position_encoding(
    tmp_path: Path, encoding: str, expected: tuple[int, int, int, int]
) -> None:
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n", encoding="utf-8")
    doc = tmp_path / "main.tex"
    text = "\\documentclass{article}\nHéllö 😀 \\cite{zzz}\n\\bibliography{refs}\n"
    async with session("visual-studio-code", tmp_path, encodings=[encoding]) as client:
        u = open_doc(client, doc, text)
        diags = await diagnostics(client, u, lambda ds: len(ds) == 1)
        assert rng(diags[0]) == expected


async def test_bib_document_symbols_and_syntax_errors(preset: str, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    text = "@article{good, title={Fine}, year=2020}\n\n@article{broken, title={Oops, year=2020\n"
    bib.write_text(text, encoding="utf-8")
    async with session(preset, tmp_path) as client:
        u = open_doc(client, bib, text)
        diags = await diagnostics(client, u, lambda ds: len(ds) >= 1)
        assert codes(diags) == ["BIB_SYNTAX"]
        assert diags[0].range.start.line == 2
        symbols = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(u)))
        assert symbols is not None
        names = [s.name for s in symbols]
        assert names[0] == "good"
        await wait_for(lambda: True)


async def test_a_whole_librarys_outline_is_not_sent(preset: str, tmp_path: Path) -> None:
    """Editors ask for the outline after every edit: a library over the limit gets none
    (68,000 entries took 7 s each time); one at the limit gets every entry, with its title."""
    from citelens.lsp.symbols import MAX_OUTLINE_ENTRIES

    def library(n: int) -> str:
        return "".join(f"@article{{k{i},\n  title = {{Title {i}}},\n}}\n" for i in range(n))

    (tmp_path / "big.bib").write_text(library(MAX_OUTLINE_ENTRIES + 1), encoding="utf-8")
    (tmp_path / "ok.bib").write_text(library(MAX_OUTLINE_ENTRIES), encoding="utf-8")
    async with session(preset, tmp_path) as client:
        big = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(open_doc(client, tmp_path / "big.bib"))))
        ok = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(open_doc(client, tmp_path / "ok.bib"))))
    assert big is not None and len(big) == 0
    assert ok is not None and len(ok) == MAX_OUTLINE_ENTRIES
    last = ok[-1]
    assert isinstance(last, lsp.DocumentSymbol)
    n = MAX_OUTLINE_ENTRIES - 1
    assert (last.name, last.detail) == (f"k{n}", f"@article Title {n}")
    assert last.selection_range == lsp.Range(lsp.Position(3 * n, 9), lsp.Position(3 * n, 9 + len(f"k{n}")))
