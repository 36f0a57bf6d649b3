"""Never damage a writer's files: through the real server (pytest-lsp).

* The astroML book of the astropy paper (``@BOOK{astroML_book}``, Ivezić et al., 2014) is in
  no source; a title search returns "Data Mining and Machine Learning (Abstract)" (Mannila,
  1996) at title score 0.75. That is another paper: NOT_FOUND with the closest candidate
  named, and no quick fix that would write it over the book.
* The ``two-papers`` workspace (``tests/data/two-papers``): merging a duplicate in paperA
  renames citations in paperA only, never in paperB, whose own .bib has another ``old``.
* Requests with positions outside the document get an answer, not silence.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from citelens.parsing.bibtex import parse_bib
from tests.conftest import CORPUS
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import PRESETS, diagnostics, open_doc, session, uri, wait_for
from tests.test_lsp_verification import apply_text_edits, edits_for

ASTROPY_BIB = CORPUS / "papers" / "astropy-v5.0" / "refs.bib"
TWO_PAPERS = Path(__file__).parent / "data" / "two-papers"

MANNILA = {"title": "Data Mining and Machine Learning (Abstract)", "authors": ["Heikki Mannila"],
           "year": 1996, "venue": "International Conference on Machine Learning",
           "type": "proceedings-article", "publication_types": ["Conference"]}
COURTOIS = {"title": "Optimizing SHA256 in Bitcoin Mining",
            "authors": ["Nicolas T. Courtois", "Marek Grajek", "Rahul Naik"], "year": 2014,
            "venue": "Cryptography and Security Systems", "doi": "10.1007/978-3-662-44893-9_12",
            "pages": "131-144", "type": "book-chapter", "publication_types": ["Conference"]}
EYAL = {"title": "Majority Is Not Enough: Bitcoin Mining Is Vulnerable",
        "authors": ["Ittay Eyal", "Emin Gün Sirer"], "year": 2014,
        "venue": "Financial Cryptography and Data Security", "doi": "10.1007/978-3-662-45472-5_28",
        "pages": "436-454", "type": "proceedings-article", "publication_types": ["Conference"]}
#: A control: a book whose title is marginally off but whose authors and year agree is still
#: the same work (PARTIAL), and its metadata fix is still offered.
CONTROL = """
@book{courtois_book,
  title = {Optimizing SHA256 in Litecoin Mining},
  author = {Courtois, Nicolas T. and Grajek, Marek and Naik, Rahul},
  publisher = {Springer},
  year = {2014}
}
"""
SETTINGS = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
            "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}


def _astroml_entry() -> str:
    """The astroML entry exactly as the astropy paper's refs.bib has it."""
    text = ASTROPY_BIB.read_text(encoding="utf-8")
    entry = next(e for e in parse_bib(text).entries if e.key == "astroML_book")
    return text[entry.span.start:entry.span.end]


def _keyed(diags: Sequence[lsp.Diagnostic], key: str) -> list[lsp.Diagnostic]:
    return [d for d in diags if isinstance(d.data, dict) and d.data.get("key") == key
            and d.code in ("NOT_FOUND", "METADATA_MISMATCH", "DOI_MISMATCH")]


async def _actions(client: object, u: str, d: lsp.Diagnostic) -> list[lsp.CodeAction]:
    got = await client.text_document_code_action_async(  # type: ignore[attr-defined]
        lsp.CodeActionParams(text_document=lsp.TextDocumentIdentifier(u), range=d.range,
                             context=lsp.CodeActionContext(
                                 diagnostics=[d], only=[lsp.CodeActionKind.QuickFix])))
    return [a for a in got or [] if isinstance(a, lsp.CodeAction)]


@pytest.mark.parametrize("preset", PRESETS)
async def test_astroml_book_is_not_replaced_by_an_unrelated_paper(
        preset: str, tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    scholarly_server.add_paper(MANNILA)
    scholarly_server.add_paper(COURTOIS)
    folder = tmp_path / "astro"
    folder.mkdir()
    bib = _astroml_entry() + "\n" + CONTROL
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    tex = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{astroML_book} and "
           "\\cite{courtois_book}.\n\\bibliography{refs}\n\\end{document}\n")
    (folder / "main.tex").write_text(tex, encoding="utf-8")
    env = {**scholarly_server.env(), "CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    async with session(preset, folder, env=env, settings=SETTINGS) as client:
        open_doc(client, folder / "main.tex")
        u_bib = open_doc(client, folder / "refs.bib")
        diags = await diagnostics(client, u_bib, lambda ds: bool(
            _keyed(ds, "astroML_book") and _keyed(ds, "courtois_book")), 30)

        (book,) = _keyed(diags, "astroML_book")
        assert book.code == "NOT_FOUND", book.message
        assert "closest candidate: “Data Mining and Machine Learning (Abstract)” (Mannila, " \
               "1996)" in book.message
        assert "none is this paper" in book.message
        assert "common for books" in book.message
        actions = await _actions(client, u_bib, book)
        assert not [a.title for a in actions if a.title.startswith("Replace")], \
            [a.title for a in actions]

        # the hover names the closest candidate, and does not contradict "not found"
        line = bib.splitlines().index("@BOOK{astroML_book,")
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u_bib), lsp.Position(line, 8)))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        text = hover.contents.value
        assert "Closest candidate (not this paper): *Data Mining and Machine Learning " \
               "(Abstract)*" in text, text
        assert "Heikki Mannila" in text and "1996" in text
        assert "search: found" not in text and "search: other papers" in text, text

        # the control: same authors and year, marginal title -> still the same work
        ctls = _keyed(diags, "courtois_book")
        assert {d.code for d in ctls} == {"METADATA_MISMATCH"}, [d.message for d in ctls]
        ctl = ctls[0]
        titles = [a.title for a in await _actions(client, u_bib, ctl)]
        assert any(t.startswith("Replace entry with ") for t in titles), titles


# --------------------------------------------------------------------------- two papers


def _two_papers(tmp_path: Path) -> Path:
    dest = tmp_path / "two-papers"
    shutil.copytree(TWO_PAPERS, dest)
    return dest


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("opened", ["paperA", "both"])
async def test_merge_in_paper_a_never_touches_paper_b(
        preset: str, opened: str, tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    ws = _two_papers(tmp_path)
    a_tex, a_bib = ws / "paperA" / "main.tex", ws / "paperA" / "refs.bib"
    b_tex, b_bib = ws / "paperB" / "main.tex", ws / "paperB" / "refsB.bib"
    b_before = (b_tex.read_text(encoding="utf-8"), b_bib.read_text(encoding="utf-8"))
    scholarly_server.add_paper(COURTOIS)
    scholarly_server.add_paper(EYAL)
    env = {**scholarly_server.env(), "CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    async with session(preset, ws, env=env, settings=SETTINGS) as client:
        u_a_tex = open_doc(client, a_tex)
        u_a_bib = open_doc(client, a_bib)
        if opened == "both":  # paperB analysed too: its project must still be left alone
            open_doc(client, b_tex)
            await diagnostics(client, uri(b_tex))
        diags = await diagnostics(client, u_a_bib, lambda ds: any(
            d.code == "DUPLICATE_ENTRY" for d in ds), 30)
        dup = next(d for d in diags if d.code == "DUPLICATE_ENTRY"
                   and isinstance(d.data, dict) and d.data.get("key") == "old")
        actions = await _actions(client, u_a_bib, dup)
        merge = next((a for a in actions if a.title == "Merge duplicate into keep"), None)
        assert merge is not None and merge.edit is not None, [a.title for a in actions]
        touched = set(merge.edit.changes or {})
        for dc in merge.edit.document_changes or []:
            assert isinstance(dc, lsp.TextDocumentEdit)
            touched.add(dc.text_document.uri)
        assert touched == {u_a_tex, u_a_bib}, touched
        new_tex = apply_text_edits(a_tex.read_text(encoding="utf-8"),
                                   edits_for(merge.edit, u_a_tex))
        assert "\\cite{old}" not in new_tex and new_tex.count("\\cite{keep}") == 2
    assert (b_tex.read_text(encoding="utf-8"), b_bib.read_text(encoding="utf-8")) == b_before


# --------------------------------------------------------------------------- bad positions

BAD_POSITIONS = [lsp.Position(2**31 - 1, 0), lsp.Position(0, 2**31 - 1),
                 lsp.Position(3, 10_000), lsp.Position(10_000, 5)]


@pytest.mark.parametrize("preset", PRESETS)
async def test_out_of_range_positions_get_an_answer(preset: str, tmp_path: Path) -> None:
    """Positions outside the document (or outside an unsigned int) never leave a client
    waiting: every position-taking request is answered, empty or with an error."""
    ws = _two_papers(tmp_path)
    a_tex = ws / "paperA" / "main.tex"
    async with session(preset, ws) as client:
        u = open_doc(client, a_tex)
        await diagnostics(client, u)
        doc = lsp.TextDocumentIdentifier(u)
        for pos in BAD_POSITIONS:
            rng = lsp.Range(pos, pos)
            answers = await asyncio.wait_for(asyncio.gather(
                client.text_document_hover_async(lsp.HoverParams(doc, pos)),
                client.text_document_definition_async(lsp.DefinitionParams(doc, pos)),
                client.text_document_references_async(lsp.ReferenceParams(
                    context=lsp.ReferenceContext(include_declaration=True), text_document=doc,
                    position=pos)),
                client.text_document_completion_async(lsp.CompletionParams(doc, pos)),
                client.text_document_code_action_async(lsp.CodeActionParams(
                    text_document=doc, range=rng, context=lsp.CodeActionContext(diagnostics=[]))),
                return_exceptions=True), 10)
            for a in answers:
                assert a is None or a == [] or isinstance(a, Exception) or (
                    isinstance(a, lsp.CompletionList) and not a.items), (pos, answers)
        # negative numbers are not even valid LSP: the raw message still gets a reply
        for method in ("textDocument/hover", "textDocument/definition",
                       "textDocument/references", "textDocument/completion"):
            params = {"textDocument": {"uri": u}, "position": {"line": -1, "character": -1},
                      "context": {"includeDeclaration": True}}
            reply = await asyncio.wait_for(_raw_request(client, method, params), 10)
            assert reply is None or reply == [] or isinstance(reply, Exception), (method, reply)
        params = {"textDocument": {"uri": u},
                  "range": {"start": {"line": -1, "character": 0},
                            "end": {"line": 2**31, "character": 0}},
                  "context": {"diagnostics": []}}
        reply = await asyncio.wait_for(_raw_request(client, "textDocument/codeAction",
                                                    params), 10)
        assert reply is None or reply == [] or isinstance(reply, Exception), reply
        # and the server still answers a normal request afterwards
        hover = await client.text_document_hover_async(lsp.HoverParams(
            doc, lsp.Position(*_pos_of(a_tex.read_text(encoding="utf-8"), "\\cite{keep}", 7))))
        assert hover is not None and "keep" in str(hover.contents)
        await wait_for(lambda: True)


def _pos_of(text: str, needle: str, delta: int) -> tuple[int, int]:
    offset = text.index(needle) + delta
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


async def _raw_request(client: object, method: str, params: dict[str, object]) -> object:
    """Send a request whose params are not valid LSP (the typed client would refuse)."""
    protocol = client.protocol  # type: ignore[attr-defined]
    try:
        return await asyncio.wrap_future(protocol.send_request(method, params))
    except Exception as exc:  # an error reply is an answer
        return exc
