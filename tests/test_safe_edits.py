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
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from citelens.documents.bibtex.parse import parse_bib
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import CORPUS
from tests.lsp_session import PRESETS, diagnostics, open_doc, session, uri
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
    env = scholarly_server.env(cache=tmp_path / "cache")
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
        assert "(Mannila, 1996)" in text
        # the lookups tried are audit detail (hoverDetail: "verbose"); never "search: found"
        assert "search: found" not in text and "Tiers tried" not in text, text

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
    env = scholarly_server.env(cache=tmp_path / "cache")
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
                assert _empty(a) or (isinstance(a, lsp.CompletionList) and not a.items), \
                    (pos, answers)
        # and the server still answers a normal request afterwards
        hover = await client.text_document_hover_async(lsp.HoverParams(
            doc, lsp.Position(*_pos_of(a_tex.read_text(encoding="utf-8"), "\\cite{keep}", 7))))
        assert hover is not None and "keep" in str(hover.contents)


def _empty(answer: object) -> bool:
    """No result, or an error reply: either way the client is not left waiting."""
    return answer is None or isinstance(answer, Exception) or (
        isinstance(answer, list | tuple) and not answer)


def _pos_of(text: str, needle: str, delta: int) -> tuple[int, int]:
    offset = text.index(needle) + delta
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def test_positions_lsp_cannot_express_get_an_error_reply(tmp_path: Path) -> None:
    """Line -1, character -5, line 2**31: not valid LSP (unsigned integers < 2**31), so
    the server cannot read the request; it still answers each one with an error."""
    ws = _two_papers(tmp_path)
    main = ws / "paperA" / "main.tex"
    u = uri(main)
    requests: list[tuple[str, dict[str, object]]] = []
    for line, char in ((-1, 0), (0, -5), (2**31, 0), (2**40, 2**40)):
        pos = {"line": line, "character": char}
        for method in ("textDocument/hover", "textDocument/definition",
                       "textDocument/references", "textDocument/completion"):
            requests.append((method, {"textDocument": {"uri": u}, "position": pos,
                                      "context": {"includeDeclaration": True}}))
        requests.append(("textDocument/codeAction", {
            "textDocument": {"uri": u}, "range": {"start": pos, "end": pos},
            "context": {"diagnostics": []}}))
    with _RawClient(ws) as client:
        client.send("textDocument/didOpen", {"textDocument": {
            "uri": u, "languageId": "latex", "version": 1,
            "text": main.read_text(encoding="utf-8")}})
        ids = [client.request(method, params) for method, params in requests]
        # a valid request after them: answered too, so the server is still serving
        ok = client.request("textDocument/hover", {
            "textDocument": {"uri": u}, "position": {"line": 2, "character": 30}})
        replies = client.replies([*ids, ok], timeout=20)
    for i, (method, _) in zip(ids, requests, strict=True):
        error = replies[i].get("error")
        assert isinstance(error, dict) and error.get("code") == -32602, (method, replies[i])
        assert method in str(error.get("message")), error
    assert "keep" in json.dumps(replies[ok].get("result")), replies[ok]


class _RawClient:
    """A JSON-RPC client on the real server's stdio that sends what pytest-lsp would
    refuse to send (its typed client validates positions)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.next_id = 0
        self.buffer = b""
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> _RawClient:
        self.proc = subprocess.Popen([sys.executable, "-m", "citelens", "serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        try:
            init = self.request("initialize", {
                "processId": None, "capabilities": {}, "rootUri": uri(self.folder),
                "initializationOptions": {"citelens": {"verificationEnabled": False}}})
            self.replies([init], timeout=20)
            self.send("initialized", {})
        except BaseException:  # no __exit__ follows a failed __enter__: the server goes here
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def send(self, method: str, params: object, msg_id: int | None = None) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        msg: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
        if msg_id is not None:
            msg["id"] = msg_id
        body = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: object) -> int:
        self.next_id += 1
        self.send(method, params, self.next_id)
        return self.next_id

    def replies(self, ids: Sequence[int], timeout: float) -> dict[int, dict[str, object]]:
        assert self.proc is not None and self.proc.stdout is not None
        got: dict[int, dict[str, object]] = {}
        deadline = time.monotonic() + timeout
        while not set(ids) <= set(got):
            left = deadline - time.monotonic()
            assert left > 0, f"no reply to {sorted(set(ids) - set(got))}"
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.2))
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                assert chunk, "the server exited"
                self.buffer += chunk
            for msg in self._messages():
                if isinstance(msg.get("id"), int) and "method" not in msg:
                    got[int(msg["id"])] = msg  # type: ignore[call-overload]
        return got

    def _messages(self) -> list[dict[str, Any]]:
        out = []
        while b"\r\n\r\n" in self.buffer:
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            if len(rest) < length:
                break
            out.append(json.loads(rest[:length]))
            self.buffer = rest[length:]
        return out
