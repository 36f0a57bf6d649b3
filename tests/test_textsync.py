"""The fast incremental sync gives exactly the text pygls's own gives, for any edit."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.workspace.text_document import TextDocument

from citelens.lsp.textsync import Document, apply_incremental_change

ORIGINAL = TextDocument._apply_incremental_change


@pytest.fixture
def smaller_big(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sizes at which a document is "big" (kept line index, incremental .bib parse,
    EditedText) divided by 10, in the same proportions: the same code paths on 100 kB
    documents instead of 1-2 MB (these tests took minutes on a loaded 2-core machine)."""
    from citelens.core import text
    from citelens.documents.bibtex import parse
    from citelens.lsp import textsync

    monkeypatch.setattr(textsync, "BIG", textsync.BIG // 10)
    monkeypatch.setattr(text, "KEPT_INDEX_FROM", text.KEPT_INDEX_FROM // 10)
    monkeypatch.setattr(parse, "EAGER_LIMIT", parse.EAGER_LIMIT // 10)


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
        got = Document("file:///x.bib", text)
        apply_incremental_change(got, change)
        assert got.source == want.source, (text, change)


@pytest.mark.usefixtures("smaller_big")
def test_big_documents_are_edited_through_a_kept_line_index() -> None:
    """Over 1 MB the edit's offsets come from a line index moved by each edit (no split of
    the text per keystroke); positions within lines give exactly pygls's text."""
    from citelens.lsp.textsync import BIG

    rng = random.Random(5)
    line = "@article{k%d, title = {Tïtle 😀 %d}},\n"
    text = "".join(line % (i, i) for i in range(BIG // len(line) + 50))
    want = TextDocument("file:///big.bib", text)
    got = Document("file:///big.bib", text)
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


@pytest.mark.usefixtures("smaller_big")
def test_the_store_follows_a_described_edit_of_a_big_bib() -> None:
    """An edit the client described (textsync) reaches the store with its range: the big
    .bib's entries and line index after it are those of a fresh parse of the new text."""
    from citelens.core.text import LineIndex
    from citelens.documents.bibtex.parse import parse_bib
    from citelens.lsp.textsync import BIG, take_edit
    from citelens.workspace.store import DocumentStore

    entry = "@article{k%d,\n  title = {Title %d},\n  year = {2001},\n}\n"
    text = "".join(entry % (i, i) for i in range(BIG // len(entry) + 10))
    doc = Document("file:///big.bib", text)
    store = DocumentStore()
    store.open("/big.bib", doc.source, 1)
    assert store.bib("/big.bib") is not None and store.line_index("/big.bib") is not None
    quarter = text.count("\n") // 4
    for n, (line, col, new) in enumerate([(5, 12, "X"), (quarter // 20, 0, "@misc{new,}\n"),
                                          (quarter, 3, ""), (7, 2, "\n\n")]):
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


def test_edited_text_reads_like_the_string_it_stands_for() -> None:
    """Slices, characters and the joined string of an EditedText equal those of the same
    edits made to a str, over many edits (pieces merged, joined past MAX_PIECES)."""
    from citelens.core.text import EditedText

    rng = random.Random(11)
    plain = "".join(rng.choice(["ab", "é", "😀", "\n", "{x}", "\r\n"]) for _ in range(3000))
    text = EditedText(plain)
    for k in range(1500):
        n = len(plain)
        a = rng.randrange(n + 2) - 1
        b = a + rng.choice([0, 0, 1, 3, 40, 700])
        new = rng.choice(["", "x", "é😀", "\n", "}", "@misc{n,}\n"])
        text = text.edit(a, b, new)
        a, b = min(max(a, 0), n), min(max(b, 0), n)
        plain = plain[:a] + new + plain[max(a, b):]
        assert len(text) == len(plain)
        i, j = sorted(rng.randrange(-5, len(plain) + 5) for _ in range(2))
        assert text[i:j] == plain[i:j]
        if plain:
            c = rng.randrange(-len(plain), len(plain))
            assert text[c] == plain[c]
        if k % 250 == 0:
            assert str(text) == plain
    assert str(text) == plain
    empty = EditedText("").edit(5, 9, "ab").edit(0, 0, "é").edit(3, 3, "")
    assert (str(empty), empty[1:], len(empty), EditedText(empty).edit(0, 3, "")[:]) == ("éab", "ab", 3, "")


def _random_change(rng: random.Random, text: str) -> tuple[lsp.TextDocumentContentChangePartial, bool]:
    """An edit a user could make in a .bib: typing, a paste over several entries, deleting
    a whole entry, typing at the end of the file, a brace; and two a client should not send
    (an inverted range, a position past a line's end). Whether pygls applies it the same."""
    lines = text.split("\n")
    n = rng.randrange(len(lines))
    kind = rng.randrange(6)
    if kind == 0:  # type in a line
        a = b = lsp.Position(n, rng.randrange(len(lines[n]) + 1))
    elif kind == 1:  # replace from one line into a later one (over entries)
        a = lsp.Position(n, rng.randrange(len(lines[n]) + 1))
        m = min(len(lines) - 1, n + rng.randrange(1, 12))
        b = lsp.Position(m, rng.randrange(len(lines[m]) + 1))
    elif kind == 2:  # delete a whole entry, from its '@' to the next one
        at = next((i for i in range(n, len(lines)) if lines[i].startswith("@")), len(lines) - 1)
        nxt = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("@")), len(lines))
        a, b = lsp.Position(at, 0), lsp.Position(nxt, 0)
    elif kind == 3:  # at the very end
        a = b = lsp.Position(len(lines) - 1, len(lines[-1]))
    elif kind == 4:  # an inverted range: pygls drops the rest of the line
        a = lsp.Position(n, rng.randrange(len(lines[n]) + 1))
        b = lsp.Position(max(0, n - rng.randrange(3)), 0)
    else:  # past the end of a line: clamps to it (pygls goes on into the next line)
        a = b = lsp.Position(n, 4 * len(lines[n]) + 5)
    entry = f"\n@misc{{new{rng.randrange(9)},\n  title = {{Né}},\n}}\n"
    new = rng.choice(["x", "é", "😀", "", "\n", "}", "{", entry, "  doi = {10.1/x},\n"])
    return lsp.TextDocumentContentChangePartial(range=lsp.Range(a, b), text=new), kind < 4


def _applied(text: str, change: lsp.TextDocumentContentChangePartial, encoding: str) -> str:
    """What the big-document sync must make of ``change``, computed on a fresh line index:
    positions clamp to the line (LSP spec); an inverted range replaces the rest of its
    start line."""
    from citelens.core.text import LineIndex

    index = LineIndex(text)
    a, b = change.range.start, change.range.end
    start, end = index.offset(a.line, a.character, encoding), index.offset(b.line, b.character, encoding)
    if (b.line, b.character) < (a.line, a.character):
        end = index.line_start(a.line + 1) if a.line + 1 < index.line_count else len(text)
    return text[:start] + change.text + text[max(start, end):]


def _entries(bib: object) -> list[tuple[object, ...]]:
    from citelens.core.model import BibFile

    assert isinstance(bib, BibFile)
    return [(e.entry_type, e.key, e.span, e.key_span,
             [(f.name, f.value, f.span, f.value_span) for f in e.fields.values()])
            for e in bib.entries]


@pytest.mark.usefixtures("smaller_big")
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_random_edits_of_a_big_bib_equal_a_fresh_parse(encoding: str) -> None:
    """Any sequence of edits of a big .bib (parsed incrementally, its text never joined)
    gives the text pygls gives, and the entries, fields, problems and line positions of a
    fresh parse of that text: what diagnostics and hovers are made of."""
    from pygls.workspace.position_codec import PositionCodec

    from citelens.core.text import LineIndex
    from citelens.documents.bibtex.parse import (
        EAGER_LIMIT,
        all_problems,
        field_values,
        parse_bib,
        unclosed_keys,
    )
    from citelens.lsp.textsync import current_text, line_index, take_edit
    from citelens.workspace.store import DocumentStore

    rng = random.Random(7 if encoding == "utf-8" else 8)
    # text between entries (skipped by the parser) makes it big with fewer entries to compare
    entry = "@article{k%d,\n  title = {Tïtle 😀 %d},\n  year = {2001},\n}\n" + "Notes. " * 40 + "\n"
    text = "".join(entry % (i, i) for i in range(EAGER_LIMIT // (len(entry) - 4) + 10))
    # the workspace's codec holds the negotiated encoding as an enum or as a plain str
    codec = PositionCodec(lsp.PositionEncodingKind(encoding) if encoding == "utf-16" else encoding)
    doc = Document("file:///big.bib", text, position_codec=codec)
    store = DocumentStore()
    store.open("/big.bib", current_text(doc), 1)
    assert store.bib("/big.bib") is not None
    now = text
    for k in range(48):
        change, regular = _random_change(rng, now)
        if regular:
            want = TextDocument("file:///big.bib", now, position_codec=codec)
            ORIGINAL(want, change)
            assert want.source == _applied(now, change, encoding)
        now = _applied(now, change, encoding)
        apply_incremental_change(doc, change)
        store.open("/big.bib", current_text(doc), k + 2, take_edit(doc), line_index(doc))
        bib, index = store.bib("/big.bib"), store.line_index("/big.bib")
        if k % 12 != 11:
            continue
        assert doc.source == now
        fresh = parse_bib(now, "/big.bib")
        # entry views read values without fields (first: reading the fields would hold them)
        assert bib is not None and [field_values(e) for e in bib.entries] == [
            {f.name: f.value for f in e.fields.values()} for e in fresh.entries
        ]
        assert _entries(bib) == _entries(fresh)
        assert bib is not None and all_problems(bib) == all_problems(fresh)
        assert unclosed_keys(bib, store.raw_text("/big.bib") or "") == unclosed_keys(fresh, now)
        fresh_index = LineIndex(now)
        assert index is not None and index.line_count == fresh_index.line_count
        for off in [rng.randrange(len(now) + 1) for _ in range(300)]:
            assert index.position(off, encoding) == fresh_index.position(off, encoding)


@pytest.mark.usefixtures("smaller_big")
def test_an_unbalanced_brace_in_a_big_bib_is_read_incrementally_where_a_full_parse_agrees() -> None:
    """Typing '{' in a title leaves the entry unclosed: it ends at the next line that starts
    an entry, so only the touched entry is read again. When the next entry does not start a
    line (``} @article{...``), the unclosed one reaches past it: the whole text is parsed."""
    from citelens.core.text import EditedText
    from citelens.documents.bibtex.parse import EAGER_LIMIT, all_problems, parse_bib, reparse_edit

    entry = "@article{k%d,\n  title = {T %d},\n}\n"
    text = "".join(entry % (i, i) for i in range(EAGER_LIMIT // len(entry) + 10))
    text = text.replace("}\n@article{k501,", "}  @article{k501,")  # k501 shares a line with k500
    for anchor, want_incremental in (("{T 7}", True), ("{T 500}", False)):
        old = parse_bib(text, "/big.bib")
        at = text.index(anchor) + 1
        new = EditedText(text).edit(at, at, "{")
        got = reparse_edit(text, old, new, (at, len(text) - at))
        assert (got is not None) == want_incremental
        fresh = parse_bib(str(new), "/big.bib")
        got = got or parse_bib(str(new), "/big.bib")
        assert [(e.key, e.span) for e in got.entries] == [(e.key, e.span) for e in fresh.entries]
        assert all_problems(got) == all_problems(fresh)
        assert any("not closed" in p.message for p in fresh.problems)


# Every character Python's str.splitlines breaks at; LSP breaks only at \n, \r\n and \r.
LINE_BREAKERS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _lsp_position(text: str, line: int, character: int) -> tuple[lsp.Position, int]:
    """A client's LSP position on ``line`` at most ``character`` characters in (UTF-16
    units; lines end only at \\n, \\r\\n, \\r), and its offset."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    line = min(line, len(starts) - 1)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    while end > start and text[end - 1] in "\r\n":
        end -= 1
    units, i = 0, start
    while i < end and i - start < character:
        units += 2 if ord(text[i]) > 0xFFFF else 1
        i += 1
    return lsp.Position(line, units), i


@st.composite
def _edits(draw: st.DrawFn, base_len: int) -> tuple[str, list[tuple[int, int, int, int, str]]]:
    alphabet = st.sampled_from([*LINE_BREAKERS, "a", "\\cite{k}", "é", "😀", "\r\n", " "])
    tail = draw(st.lists(alphabet, max_size=40).map("".join))
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        steps.append((draw(st.integers(0, 60)), draw(st.integers(0, 12)),
                      draw(st.integers(0, 3)), draw(st.integers(0, 12)),
                      draw(st.lists(alphabet, max_size=6).map("".join))))
    return tail, steps


@pytest.mark.usefixtures("smaller_big")
@pytest.mark.parametrize("size", [0, 200, 120_000])  # 120 kB: over BIG (100 kB here)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_edits_with_every_line_breaking_character_keep_the_clients_text(
    size: int, data: st.DataObject
) -> None:
    """Random edits whose text holds every character ``str.splitlines`` breaks at: the
    server's copy stays the client's, character for character, below and above BIG
    (the EditedText path). Before, a form feed above an edit put it one line too high."""
    filler = ("@misc{k, note = {x\x0cy\u2028z}}\n" * (size // 30 + 1))[:size]
    tail, steps = data.draw(_edits(size))
    client = filler + tail
    doc = Document("file:///x.tex", client)
    first_line = filler.count("\n")
    for line, col, dl, dcol, new in steps:
        a, start = _lsp_position(client, first_line + line, col)
        b, end = _lsp_position(client, a.line + dl, dcol if dl else col + dcol)
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(a, b), text=new)
        client = client[:start] + new + client[end:]
        apply_incremental_change(doc, change)
        assert doc.source == client
    assert [ln.rstrip("\r\n") for ln in doc.lines] == re.split(r"\r\n|\r|\n", client)[
        : len(doc.lines)]


def test_the_server_edits_its_own_documents_and_leaves_pygls_classes_alone() -> None:
    """The fast sync is the server instance's (its workspace makes its documents), not a
    patch of pygls's ``TextDocument`` for the whole process: a plain pygls document still
    breaks lines where pygls does, the server's document where LSP does."""
    from citelens.lsp.server import create_server

    pygls_methods = (TextDocument._apply_incremental_change, TextDocument.source, TextDocument.lines)
    server = create_server()
    steps = server.protocol.lsp_initialize(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri="file:///tmp/project"))
    for _ in steps:  # pygls's initialize, the server's handler called by hand
        pass
    assert (TextDocument._apply_incremental_change, TextDocument.source, TextDocument.lines) == pygls_methods
    text = "a\x0cb\nc"
    ours = server.workspace.get_text_document("file:///tmp/project/x.tex")
    assert isinstance(ours, Document)
    ours._source = text
    assert list(ours.lines) == ["a\x0cb\n", "c"]
    assert len(TextDocument("file:///x.tex", text).lines) == 3  # pygls's own, untouched
