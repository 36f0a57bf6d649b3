"""Offset <-> LSP position conversion (:class:`citelens.core.text.LineIndex`) in every encoding."""

from __future__ import annotations

import pytest

from citelens.core.model import Span
from citelens.core.text import UTF8, UTF16, UTF32, LineIndex, Position
from citelens.documents.latex import parse_latex
from citelens.documents.markdown import parse_markdown

ENCODINGS = (UTF8, UTF16, UTF32)


def units(s: str, encoding: str) -> int:
    """Reference width of ``s`` in code units of ``encoding``."""
    if encoding == UTF16:
        return len(s.encode("utf-16-le")) // 2
    if encoding == UTF8:
        return len(s.encode("utf-8"))
    return len(s)


def reference_position(text: str, offset: int, encoding: str) -> Position:
    """Slow but obviously right: split on \\r\\n, \\r and \\n and measure the prefix."""
    line = 0
    start = 0
    i = 0
    while i < offset:
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            if i + 1 >= offset:  # offset between \r and \n: still on this line
                break
            i += 2
            line += 1
            start = i
            continue
        if text[i] in "\r\n":
            i += 1
            line += 1
            start = i
            continue
        i += 1
    return Position(line, units(text[start:offset], encoding))


TITLES = {
    "ascii": "A plain title by Smith \\cite{smith2020} ok.",
    "latin": "Étude de Müller et Gödel sur l'ü \\cite{mueller2020} fin.",
    "cjk": "中文标题：作者 张伟 \\cite{zhang2019} 结束。",
    "emoji": "Title 🙂 with 🎉 emoji \\cite{emoji2021} and 👩‍🔬 after \\cite{b}.",
    "mixed": "Ærø — Ünïcode 𝔘𝔫𝔦 (math fraktur) \\citep[p.~3]{fraktur} 🙂",
}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", sorted(TITLES))
def test_round_trip_every_offset(name: str, encoding: str) -> None:
    title = TITLES[name]
    text = f"\\section{{{title}}}\n\n{title}\r\nAuthor: Zoë Ŝmith 李四 🙂\r{title}\n"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        pos = index.position(offset, encoding)
        assert pos == reference_position(text, offset, encoding), (offset, encoding)
        if offset < len(text) and text[offset] == "\n" and offset and text[offset - 1] == "\r":
            continue  # between \r and \n: not a position an editor can name
        assert index.offset(pos.line, pos.character, encoding) == offset, (offset, encoding)


@pytest.mark.parametrize(
    ("encoding", "character"),
    [(UTF16, 2), (UTF8, 4), (UTF32, 1)],
)
def test_emoji_width(encoding: str, character: int) -> None:
    index = LineIndex("🙂\\cite{k}")
    assert index.position(1, encoding) == Position(0, character)
    assert index.offset(0, character, encoding) == 1


@pytest.mark.parametrize(
    ("ch", "utf16", "utf8"),
    [("é", 1, 2), ("ü", 1, 2), ("中", 1, 3), ("🙂", 2, 4), ("𝔘", 2, 4), ("a", 1, 1)],
)
def test_citation_range_after_non_ascii(ch: str, utf16: int, utf8: int) -> None:
    prefix = f"Title {ch * 3} by {ch}uthor \\cite{{"
    text = f"line one\n{prefix}key}}\n"
    (c,) = parse_latex(text, "a.tex").citations
    index = LineIndex(text)
    ascii_len = len(prefix) - 4  # the prefix holds ``ch`` four times
    expected = {UTF16: ascii_len + 4 * utf16, UTF8: ascii_len + 4 * utf8, UTF32: len(prefix)}
    for enc, col in expected.items():
        assert col == units(prefix, enc)
        assert index.range(c.span, enc) == (Position(1, col), Position(1, col + 3))
        assert index.offset(1, col, enc) == c.span.start
        assert index.offset(1, col + 3, enc) == c.span.end


def test_markdown_citation_after_emoji_utf16() -> None:
    text = "# Title 🙂\nSee 👩‍🔬 [@doe99] now\n"
    (c,) = parse_markdown(text, "a.md").citations
    index = LineIndex(text)
    prefix = "See 👩‍🔬 [@"
    assert index.position(c.span.start) == Position(1, units(prefix, UTF16))
    assert index.position(c.span.start, UTF8) == Position(1, units(prefix, UTF8))
    assert index.position(c.span.start, UTF32) == Position(1, len(prefix))


@pytest.mark.parametrize(
    "text",
    ["a\r\nb\r\nc", "a\nb\rc\r\nd", "\r\n\r\n", "\r\r\n\n", "x\r", "é\r\n🙂\rü\n"],
)
def test_line_breaks(text: str) -> None:
    index = LineIndex(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert index.line_count == len(lines)
    for n, content in enumerate(lines):
        assert index.line_text(n) == content
        start = index.line_start(n)
        assert index.position(start) == Position(n, 0)
        for enc in ENCODINGS:
            # a position past the end of the line clamps to the end of its content
            end = index.offset(n, 10_000, enc)
            assert end == start + len(content)
            assert index.position(end, enc) == Position(n, units(content, enc))


def test_crlf_citation_ranges() -> None:
    text = "\\section{Intro}\r\nÜber \\cite{a}\r\n\r\nMore \\citep{b,\r\n  c}\r\n"
    doc = parse_latex(text, "a.tex")
    index = LineIndex(text)
    got = {c.key: index.range(c.span) for c in doc.citations}
    assert got == {
        "a": (Position(1, 11), Position(1, 12)),
        "b": (Position(3, 12), Position(3, 13)),
        "c": (Position(4, 2), Position(4, 3)),
    }


def test_clamping_out_of_range_positions_and_offsets() -> None:
    text = "ab🙂\ncd\n"
    index = LineIndex(text)
    assert index.offset(0, 99) == 3  # end of "ab🙂"
    assert index.offset(0, 99, UTF8) == 3
    assert index.offset(0, 99, UTF32) == 3
    assert index.offset(1, 99) == 6
    assert index.offset(2, 5) == len(text)  # last (empty) line
    assert index.offset(99, 0) == len(text)  # past the last line
    assert index.offset(-1, 3) == 0
    assert index.offset(0, -5) == 0
    assert index.position(-3) == Position(0, 0)
    assert index.position(10_000) == index.position(len(text)) == Position(2, 0)


def test_inside_a_surrogate_pair_rounds_forward() -> None:
    # UTF-16 character 3 in "ab🙂c" is between the two halves of the emoji
    index = LineIndex("ab🙂c")
    assert index.offset(0, 3) == 3
    assert index.offset(0, 4) == 3
    assert index.offset(0, 5) == 4


def test_empty_text() -> None:
    index = LineIndex("")
    for enc in ENCODINGS:
        assert index.position(0, enc) == Position(0, 0)
        assert index.offset(0, 0, enc) == 0
        assert index.offset(0, 7, enc) == 0
    assert index.range(Span(0, 0)) == (Position(0, 0), Position(0, 0))


def test_line_index_after_an_edit_of_a_big_text_equals_a_fresh_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A text over KEPT_INDEX_FROM keeps its line index across edits (lowered to 128 kB
    here: the same path as at 1 MB, a tenth of the time)."""
    import random

    from citelens.core import text as text_module
    from citelens.core.text import index_after_edit

    monkeypatch.setattr(text_module, "KEPT_INDEX_FROM", 1 << 17)
    rng = random.Random(5)
    text = "".join(rng.choice(["abc ", "é", "\n", "@article{k,\n", "}\n"]) for _ in range(40_000))
    assert len(text) > text_module.KEPT_INDEX_FROM
    index = LineIndex(text)
    for _ in range(30):
        i = rng.randrange(len(text))
        new = text[:i] + rng.choice(["x", "\n", "a\nb\n", "", "\r\n"]) + text[i + rng.choice([0, 1, 9]):]
        got, want = index_after_edit(index, new), LineIndex(new)
        assert [got.line_start(n) for n in range(got.line_count)] == [
            want.line_start(n) for n in range(want.line_count)]
        assert got.position(i) == want.position(i)
        text, index = new, got


def test_line_index_after_typing_in_one_line_of_a_big_text_equals_a_fresh_one() -> None:
    """Keystrokes within one line shift the lines after it without copying them; offsets
    and positions on both sides of the edit stay exact, also after an edit elsewhere."""
    import random

    from citelens.core.text import index_after_edit

    rng = random.Random(11)
    text = "".join(f"  title = {{Line {i} é}},\n" for i in range(60_000))
    index = LineIndex(text)
    at = text.index("Line 3000")
    for step in range(40):
        if step % 10 == 9:  # now and then somewhere else, with a line break
            at = rng.randrange(len(text))
            new = text[:at] + "\n" + text[at:]
        elif step % 3 == 2:
            new = text[:at] + text[at + 1:]  # a backspace
        else:
            new = text[:at] + "x" + text[at:]
        got, want = index_after_edit(index, new), LineIndex(new)
        probes = [0, at, at + 1, len(new)] + [rng.randrange(len(new)) for _ in range(40)]
        for o in probes:
            assert got.line_of(o) == want.line_of(o)
            assert got.position(o) == want.position(o)
        for n in [rng.randrange(want.line_count) for _ in range(20)] + [want.line_count - 1]:
            assert got.line_start(n) == want.line_start(n)
            assert got.line_text(n) == want.line_text(n)
            assert got.offset(n, 4) == want.offset(n, 4)
        text, index = new, got


def test_line_index_after_edits_all_over_a_big_edited_text_equals_a_fresh_one() -> None:
    """Edits on many different lines (each one a shifted segment), line breaks typed and
    deleted, pastes over several lines, of an EditedText: past MAX_SEGMENTS the starts are
    written out again; line_of, positions and offsets stay those of a fresh index."""
    import random

    from citelens.core.text import MAX_SEGMENTS, EditedText, index_after_edit

    rng = random.Random(17)
    plain = "".join(f"  title = {{Lïne {i} 😀}},\n" for i in range(50_000))
    text, index = EditedText(plain), LineIndex(plain)
    for step in range(3 * MAX_SEGMENTS):
        at = rng.randrange(len(plain))
        cut = rng.choice([0, 0, 0, 1, 1, 30, 200])
        new = rng.choice(["x", "é", "\n", "a\nb", "😀", ""])
        text = text.edit(at, at + cut, new)
        plain = plain[:at] + new + plain[at + cut:]
        index = index_after_edit(index, text, (at, len(plain) - at - len(new)))
        if step % 12:
            continue
        want = LineIndex(plain)
        assert index.line_count == want.line_count
        for o in [0, at, at + len(new), len(plain)] + [rng.randrange(len(plain)) for _ in range(60)]:
            assert index.line_of(o) == want.line_of(o)
            assert index.position(o, "utf-16") == want.position(o, "utf-16")
        for n in [rng.randrange(want.line_count) for _ in range(40)] + [want.line_count - 1]:
            assert index.line_start(n) == want.line_start(n)
            assert index.line_text(n) == want.line_text(n)
            assert index.offset(n, 14, "utf-8") == want.offset(n, 14, "utf-8")
