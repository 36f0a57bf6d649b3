"""End-to-end: cite while writing. Typing a title inside \\cite{…} or [@… offers papers
from the (fake) scholarly sources; accepting one inserts a new unique key and appends a
verified entry to the document's .bib through workspace/applyEdit."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from citelens.core.text import LineIndex
from citelens.documents.bibtex.parse import parse_bib
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import PRESETS, diagnostics, open_doc, session, uri, wait_for

PAPER = {
    "title": "Lateral diffusion of active proteins in fluid membranes",
    "authors": ["Jane Q. Smith", "Ali Reza"],
    "year": 2019,
    "venue": "Physical Review E",
    "doi": "10.1103/PhysRevE.99.062412",
    "volume": "99",
    "pages": "062412",
    "abstract": "Active proteins move in membranes. We measure their lateral diffusion. "
    "A third sentence that is not shown.",
}
OTHER = {
    "title": "Lateral diffusion in crowded membranes",
    "authors": ["Pieter de Vries"],
    "year": 2021,
    "venue": "Biophysical Journal",
    "doi": "10.1016/j.bpj.2021.01.001",
}
# A .bib in its own style: tabs, Key = AuthorYear, title before author, braces.
BIB = """% the lab's references
@Article{Smith2019,
\ttitle = {Something else entirely},
\tauthor = {Smith, John},
\tjournal = {Nature},
\tyear = {2019},
\tdoi = {10.1038/xyz},
}

@Article{Doe2020,
\ttitle = {Another paper},
\tauthor = {Doe, Jane},
\tjournal = {Science},
\tyear = {2020},
}
"""
TYPED = "lateral diffusion active proteins"


def _settings(**extra: Any) -> dict[str, Any]:
    return {
        "verificationEnabled": False,
        "paperSearchDebounceMs": 100,
        "requestTimeoutS": 2.0,
        "retryBackoffS": 0.01,
        "maxRetries": 0,
        "s2RequestsPerSecond": 200,
        **extra,
    }


def _env(fake: ScholarlyFake, tmp: Path) -> dict[str, str]:
    return fake.env(cache=tmp / "cache")


@pytest.fixture(params=PRESETS)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fake(scholarly_server: ScholarlyFake) -> ScholarlyFake:
    scholarly_server.add_paper(PAPER)
    scholarly_server.add_paper(OTHER)
    return scholarly_server


def _apply_on_disk(client: LanguageClient) -> list[lsp.WorkspaceEdit]:
    """Answer workspace/applyEdit like an editor that saves: the edits land on disk."""
    seen: list[lsp.WorkspaceEdit] = []

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        seen.append(params.edit)
        changes: list[tuple[str, list[lsp.TextEdit]]] = list((params.edit.changes or {}).items())
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.CreateFile):
                Path(change.uri.removeprefix("file://")).touch()
            elif isinstance(change, lsp.TextDocumentEdit):
                changes.append(
                    (change.text_document.uri, [e for e in change.edits if isinstance(e, lsp.TextEdit)])
                )
        for u, edits in changes:
            path = Path(u.removeprefix("file://"))
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            index = LineIndex(text)
            for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
                a = index.offset(e.range.start.line, e.range.start.character)
                b = index.offset(e.range.end.line, e.range.end.character)
                text = text[:a] + e.new_text + text[b:]
            path.write_text(text, encoding="utf-8")
        return lsp.ApplyWorkspaceEditResult(applied=True)

    return seen


async def _complete(client: LanguageClient, u: str, line: int, char: int) -> lsp.CompletionList:
    result = await asyncio.wait_for(
        client.text_document_completion_async(
            lsp.CompletionParams(lsp.TextDocumentIdentifier(u), lsp.Position(line, char))
        ),
        20,
    )
    assert isinstance(result, lsp.CompletionList)
    return result


def _papers(result: lsp.CompletionList) -> list[lsp.CompletionItem]:
    return [i for i in result.items if i.text_edit is not None]


async def _accept(client: LanguageClient, item: lsp.CompletionItem) -> Any:
    assert item.command is not None
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=item.command.command, arguments=item.command.arguments)
        ),
        20,
    )


async def test_tex_paper_is_offered_and_accepting_appends_a_verified_entry(
    preset: str, fake: ScholarlyFake, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    line = f"Proteins diffuse \\cite{{{TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(
        f"\\documentclass{{article}}\n\\begin{{document}}\n{line}\n"
        "\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    async with session(preset, tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        applied = _apply_on_disk(client)
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 2, len(line))
        assert result.is_incomplete
        papers = _papers(result)
        assert [p.label for p in papers][:1] == [PAPER["title"]]
        item = papers[0]
        assert item.detail == "Smith et al., 2019, Physical Review E"
        assert isinstance(item.documentation, lsp.MarkupContent)
        docs = item.documentation.value
        assert "Jane Q. Smith, Ali Reza" in docs and "10.1103/physreve.99.062412" in docs
        assert "We measure their lateral diffusion." in docs and "third sentence" not in docs
        # the typed text becomes the project's key style (AuthorYear), unique in refs.bib
        assert isinstance(item.text_edit, lsp.TextEdit)
        assert item.text_edit.new_text == "Smith2019a"
        start = len(line) - len(TYPED)
        assert (item.text_edit.range.start.character, item.text_edit.range.end.character) == (
            start,
            len(line),
        )
        answer = await _accept(client, item)
        assert answer["added"] is True
        assert len(applied) == 1
        after = bib.read_text(encoding="utf-8")
        assert after.startswith(BIB)  # the rest of the file is byte-identical
        assert after[len(BIB) :] == (
            "\n@Article{Smith2019a,\n"
            "\ttitle = {Lateral diffusion of active proteins in fluid membranes},\n"
            "\tauthor = {Smith, Jane Q. and Reza, Ali},\n"
            "\tjournal = {Physical Review E},\n"
            "\tyear = {2019},\n"
            "\tvolume = {99},\n"
            "\tpages = {062412},\n"
            "\tdoi = {10.1103/physreve.99.062412},\n"
            "}\n"
        )
        assert parse_bib(after).by_key()["Smith2019a"][0].get("doi") == "10.1103/physreve.99.062412"
        # accepting the same item again adds nothing
        again = await _accept(client, item)
        assert again["added"] is False
        assert bib.read_text(encoding="utf-8") == after
        assert fake.count("s2") == 1


async def test_paper_already_in_the_bibliography_inserts_its_key_and_adds_nothing(
    fake: ScholarlyFake, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    text = BIB + (
        "\n@article{reza_lateral,\n  author = {Reza, A.},\n"
        "  title = {Lateral diffusion},\n  doi = {10.1103/PhysRevE.99.062412},\n}\n"
    )
    bib.write_text(text, encoding="utf-8")
    line = f"\\citep{{Doe2020, {TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(f"{line}\n\\bibliography{{refs}}\n", encoding="utf-8")
    async with session("neovim", tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        applied = _apply_on_disk(client)
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 0, len(line))
        item = next(p for p in _papers(result) if p.label == PAPER["title"])
        assert isinstance(item.text_edit, lsp.TextEdit)
        assert item.text_edit.new_text == "reza_lateral"
        assert item.command is None
        assert isinstance(item.documentation, lsp.MarkupContent)
        assert "already in refs.bib as reza_lateral" in item.documentation.value
        # the other paper is new: its key follows the file's style
        other = next(p for p in _papers(result) if p.label == OTHER["title"])
        assert isinstance(other.text_edit, lsp.TextEdit)
        assert other.text_edit.new_text == "Vries2021"  # AuthorYear, as the file writes keys
        assert applied == []
        assert bib.read_text(encoding="utf-8") == text


async def test_markdown_without_bibliography_creates_references_bib_and_says_so(
    preset: str, fake: ScholarlyFake, tmp_path: Path
) -> None:
    line = "Proteins diffuse [see @lateral diffusion of active"
    doc = tmp_path / "notes.md"
    doc.write_text(f"# Notes\n\n{line}\n", encoding="utf-8")
    async with session(preset, tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        _apply_on_disk(client)
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 2, len(line))
        item = _papers(result)[0]
        assert item.label == PAPER["title"]
        assert isinstance(item.text_edit, lsp.TextEdit)
        assert item.text_edit.new_text == "smith2019lateral"  # authorYEARfirstword
        assert item.text_edit.range.start.character == line.index("@") + 1
        assert isinstance(item.documentation, lsp.MarkupContent)
        assert "references.bib" in item.documentation.value
        answer = await _accept(client, item)
        assert answer["added"] is True
        created = tmp_path / "references.bib"
        entries = parse_bib(created.read_text(encoding="utf-8")).entries
        assert [(e.key, e.get("doi")) for e in entries] == [
            ("smith2019lateral", "10.1103/physreve.99.062412")
        ]
        assert any("references.bib" in m.message for m in client.messages)


async def test_offline_or_every_source_failing_offers_keys_only_silently(
    fake: ScholarlyFake, tmp_path: Path
) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    line = f"See \\cite{{{TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(f"{line}\n\\bibliography{{refs}}\n", encoding="utf-8")
    async with session(
        "neovim", tmp_path, env=_env(fake, tmp_path), settings=_settings(offline=True)
    ) as client:
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 0, len(line))
        assert _papers(result) == []
        keys = await _complete(client, u, 0, len(line) - len(TYPED))
        assert {i.label for i in keys.items} == {"Smith2019", "Doe2020"}
    assert fake.count() == 0
    for source in ("s2", "openalex", "crossref"):
        fake.set_mode(source, "5xx")
    async with session("neovim", tmp_path, env=_env(fake, tmp_path / "c2"), settings=_settings()) as client:
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 0, len(line))
        assert _papers(result) == []
        assert client.messages == []  # no pop-up while typing
    assert {r["source"] for r in fake.requests()} == {"s2", "openalex", "crossref"}


async def test_s2_down_falls_back_to_openalex(fake: ScholarlyFake, tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    line = f"See \\cite{{{TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(f"{line}\n\\bibliography{{refs}}\n", encoding="utf-8")
    fake.set_mode("s2", "429", retry_after="0")
    async with session("neovim", tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        u = open_doc(client, doc)
        await diagnostics(client, u)
        result = await _complete(client, u, 0, len(line))
        assert [p.label for p in _papers(result)][:1] == [PAPER["title"]]
    assert fake.count("openalex") == 1 and fake.count("crossref") == 0


async def test_a_burst_of_keystrokes_makes_one_search_per_debounce_window(
    fake: ScholarlyFake, tmp_path: Path
) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    head = "See \\cite{"
    doc = tmp_path / "main.tex"
    doc.write_text(f"{head}\n\\bibliography{{refs}}\n", encoding="utf-8")
    debounce_ms = 400
    async with session(
        "visual-studio-code",
        tmp_path,
        env=_env(fake, tmp_path),
        settings=_settings(paperSearchDebounceMs=debounce_ms),
    ) as client:
        u = open_doc(client, doc, doc.read_text(encoding="utf-8"))
        await diagnostics(client, u)
        pending = []
        started = time.monotonic()
        for n, ch in enumerate(TYPED, start=1):
            client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(uri=u, version=n + 1),
                    [
                        lsp.TextDocumentContentChangePartial(
                            range=lsp.Range(
                                lsp.Position(0, len(head) + n - 1), lsp.Position(0, len(head) + n - 1)
                            ),
                            text=ch,
                        )
                    ],
                )
            )
            pending.append(
                asyncio.ensure_future(
                    client.text_document_completion_async(
                        lsp.CompletionParams(lsp.TextDocumentIdentifier(u), lsp.Position(0, len(head) + n))
                    )
                )
            )
            await asyncio.sleep(0.03)
        typed_s = time.monotonic() - started
        results = await asyncio.wait_for(asyncio.gather(*pending), 30)
    searches = fake.requests("s2")
    windows = int(typed_s * 1000 / debounce_ms) + 2
    assert 1 <= len(searches) <= windows, (len(searches), typed_s)
    assert all(r["path"].endswith("/paper/search") for r in searches)
    times = [r["t"] for r in searches]
    assert all(b - a >= debounce_ms / 1000 * 0.9 for a, b in itertools.pairwise(times))
    assert searches[-1]["query"]["query"] == TYPED  # the last window searched the full text
    last = results[-1]
    assert isinstance(last, lsp.CompletionList)
    assert [p.label for p in _papers(last)][:1] == [PAPER["title"]]
    assert uri(doc) == u


def _insert(client: LanguageClient, u: str, item: lsp.CompletionItem, version: int) -> None:
    """Insert the item's text edit like a client that ignores its command (Neovim's
    omnifunc, or any client without command support on completion items)."""
    assert isinstance(item.text_edit, lsp.TextEdit)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=item.text_edit.range, text=item.text_edit.new_text)],
    ))


async def test_inserted_key_of_an_offered_paper_gets_its_entry_without_the_command(
    preset: str, fake: ScholarlyFake, tmp_path: Path
) -> None:
    """The server itself appends the entry of a key it offered once the key is in the text
    and undefined (the same edit as the command), and only once: the command after it, or
    the key typed again, adds nothing."""
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    line = f"Proteins diffuse \\cite{{{TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(f"\\documentclass{{article}}\n\\begin{{document}}\n{line}}}.\n"
                   "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    async with session(preset, tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        applied = _apply_on_disk(client)
        u = open_doc(client, doc)
        await diagnostics(client, u)
        item = _papers(await _complete(client, u, 2, len(line)))[0]
        assert isinstance(item.text_edit, lsp.TextEdit) and item.text_edit.new_text == "Smith2019a"
        _insert(client, u, item, 2)
        with contextlib.suppress(AssertionError, TimeoutError):
            await wait_for(lambda: "@Article{Smith2019a," in bib.read_text(encoding="utf-8"), 15, "entry")
        after = bib.read_text(encoding="utf-8")
        assert after.startswith(BIB)
        assert after[len(BIB):].startswith("\n@Article{Smith2019a,\n\ttitle = {Lateral diffusion"), (
            [m.message for m in client.log_messages])
        # the client runs the command after all: nothing more is added
        again = await _accept(client, item)
        assert again["added"] is False
        await asyncio.sleep(0.3)
        assert len(applied) == 1
        assert bib.read_text(encoding="utf-8") == after


async def test_completion_documentation_reads_right_without_markdown(
    fake: ScholarlyFake, tmp_path: Path
) -> None:
    """Neovim shows completion documentation as written: no emphasis or code marks; a client
    that asks for plain text gets PlainText."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    line = f"\\cite{{{TYPED}"
    doc = tmp_path / "main.tex"
    doc.write_text(f"{line}\n\\bibliography{{refs}}\n", encoding="utf-8")
    async with session("neovim", tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        u = open_doc(client, doc)
        await diagnostics(client, u)
        item = _papers(await _complete(client, u, 0, len(line)))[0]
        assert isinstance(item.documentation, lsp.MarkupContent)
        value = item.documentation.value
        assert PAPER["title"] in value
        assert "**" not in value and "`" not in value and "_Physical" not in value, value


async def test_search_phrase_in_a_cite_is_one_information_hint(fake: ScholarlyFake, tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    doc = tmp_path / "main.tex"
    doc.write_text("See \\cite{Doe2020, attention is all you need} and \\cite{nokey}.\n"
                   "\\bibliography{refs}\n", encoding="utf-8")
    async with session("neovim", tmp_path, env=_env(fake, tmp_path), settings=_settings()) as client:
        u = open_doc(client, doc)
        diags = await diagnostics(client, u)
        undefined = [d for d in diags if d.code == "UNDEFINED_CITATION"]
        phrase = [d for d in undefined if "search phrase" in d.message]
        assert len(phrase) == 1, [d.message for d in undefined]
        assert phrase[0].severity == lsp.DiagnosticSeverity.Information
        assert "'attention is all you need'" in phrase[0].message
        start = "See \\cite{Doe2020, ".__len__()
        assert (phrase[0].range.start.character, phrase[0].range.end.character) == (
            start, start + len("attention is all you need"))
        # a real undefined key is still an error
        errors = [d for d in undefined if d not in phrase]
        assert [d.severity for d in errors] == [lsp.DiagnosticSeverity.Error]
        assert "nokey" in errors[0].message
