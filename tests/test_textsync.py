"""The fast incremental sync gives exactly the text pygls's own gives, for any edit."""

from __future__ import annotations

import random

from lsprotocol import types as lsp
from pygls.workspace.text_document import TextDocument

from citelens.lsp.textsync import apply_incremental_change, install

ORIGINAL = TextDocument._apply_incremental_change
install()  # as the server does: ``source`` joins an edited big text


def test_same_text_as_pygls_for_random_edits() -> None:
    rng = random.Random(3)
    pieces = ["abc", "é", "😀x", "\n", "\r\n", "\r", "@article{k,\n  title = {T},\n}\n", ""]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
        n_lines = text.count("\n") + 2
        a, b = (lsp.Position(rng.randrange(n_lines), rng.randrange(6)) for _ in range(2))
        if (b.line, b.character) < (a.line, a.character):
            a, b = b, a
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(a, b), text=rng.choice(pieces))
        want = TextDocument("file:///x.bib", text)
        ORIGINAL(want, change)
        got = TextDocument("file:///x.bib", text)
        apply_incremental_change(got, change)
        assert got.source == want.source, (text, change)


def test_big_documents_are_edited_through_a_kept_line_index() -> None:
    """Over 1 MB the edit's offsets come from a line index moved by each edit (no split of
    the text per keystroke); positions within lines give exactly pygls's text."""
    from citelens.lsp.textsync import BIG

    rng = random.Random(5)
    line = "@article{k%d, title = {Tïtle 😀 %d}},\n"
    text = "".join(line % (i, i) for i in range(BIG // len(line) + 50))
    want = TextDocument("file:///big.bib", text)
    got = TextDocument("file:///big.bib", text)
    for _ in range(60):
        lines = want.source.split("\n")
        n = rng.randrange(len(lines) - 1)
        a = lsp.Position(n, rng.randrange(len(lines[n]) // 2))
        b = lsp.Position(n + rng.randrange(2), rng.randrange(len(lines[n]) // 2))
        if (b.line, b.character) < (a.line, a.character):
            a, b = b, a
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(a, b), text=rng.choice(["x", "é", "\n", "", "{}", "😀"]))
        ORIGINAL(want, change)
        apply_incremental_change(got, change)
        assert got.source == want.source


def test_the_store_follows_a_described_edit_of_a_big_bib() -> None:
    """An edit the client described (textsync) reaches the store with its range: the big
    .bib's entries and line index after it are those of a fresh parse of the new text."""
    from citelens.core.text import LineIndex
    from citelens.documents.bibtex.parse import parse_bib
    from citelens.lsp.textsync import BIG, take_edit
    from citelens.workspace.store import DocumentStore

    entry = "@article{k%d,\n  title = {Title %d},\n  year = {2001},\n}\n"
    text = "".join(entry % (i, i) for i in range(BIG // len(entry) + 10))
    doc = TextDocument("file:///big.bib", text)
    store = DocumentStore()
    store.open("/big.bib", doc.source, 1)
    assert store.bib("/big.bib") is not None and store.line_index("/big.bib") is not None
    for n, (line, col, new) in enumerate([(5, 12, "X"), (1000, 0, "@misc{new,}\n"),
                                          (20000, 3, ""), (7, 2, "\n\n")]):
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col + len(new) % 2)),
            text=new)
        apply_incremental_change(doc, change)
        edit = take_edit(doc)
        assert edit is not None
        store.open("/big.bib", doc.source, n + 2, edit)
        bib, index = store.bib("/big.bib"), store.line_index("/big.bib")
        fresh, fresh_index = parse_bib(doc.source, "/big.bib"), LineIndex(doc.source)
        assert bib is not None and index is not None
        assert [(e.key, e.span, e.get("title")) for e in bib.entries] == \
            [(e.key, e.span, e.get("title")) for e in fresh.entries]
        assert all(index.line_start(i) == fresh_index.line_start(i)
                   for i in range(0, fresh_index.line_count, 997))
