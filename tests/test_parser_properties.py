"""Property tests: the parsers and the position index never raise, and spans are exact."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelens.core.model import SourceDocument
from citelens.core.text import UTF8, UTF16, UTF32, LineIndex
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.latex import parse_latex
from citelens.documents.markdown import parse_markdown
from citelens.documents.read import read_text
from tests.harness import needs_bigbib

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any code point, including NUL, controls and lone surrogates.
ANY_TEXT = st.text(alphabet=st.characters(codec=None, min_codepoint=0), max_size=400)
# Text built from the pieces that matter to the parsers, so the interesting paths are hit.
PIECES = st.sampled_from([
    "\\cite", "\\citep", "\\Citet*", "\\parencites", "\\nocite", "\\mycite", "\\newcommand",
    "\\renewcommand", "\\def", "\\verb|", "\\begin{verbatim}", "\\end{verbatim}",
    "\\begin{comment}", "\\end{comment}", "\\input", "\\bibliography", "\\addbibresource",
    "\\bibitem", "\\documentclass", "% !TEX root = ", "{", "}", "[", "]", "(", ")", ",", "%",
    "\\%", "\\\\", "#1", "*", " ", "\n", "\r\n", "\r", "\t", "key", "ü", "中", "🙂", "\x00",
    "\ud800", "@", "[@", "-@", "@{", "; @", "`", "```", "~~~", "```{r}", "<!--", "-->",
    "---\n", "bibliography: ", "  - ", "...", ".", ":", "\\@",
])
STRUCTURED = st.lists(st.one_of(PIECES, st.text(max_size=5)), max_size=60).map("".join)
TEXTS = st.one_of(ANY_TEXT, STRUCTURED)


def check_doc(doc: SourceDocument, text: str) -> None:
    n = len(text)
    for c in doc.citations:
        assert 0 <= c.span.start < c.span.end <= n, c
        assert text[c.span.start : c.span.end] == c.key, c
        assert 0 <= c.command_span.start <= c.span.start <= c.span.end <= c.command_span.end <= n
    for ref in (*doc.bibliographies, *doc.includes):
        assert 0 <= ref.span.start <= ref.span.end <= n, ref
    for key, span in doc.bibitems.items():
        assert text[span.start : span.end] == key


@FAST
@given(TEXTS)
def test_parse_latex_never_raises_and_spans_are_exact(text: str) -> None:
    check_doc(parse_latex(text, "x.tex", ("mycite",)), text)


@FAST
@given(TEXTS)
def test_parse_markdown_never_raises_and_spans_are_exact(text: str) -> None:
    check_doc(parse_markdown(text, "x.md"), text)


@FAST
@given(TEXTS, st.integers(min_value=-5, max_value=500), st.integers(-5, 100))
def test_line_index_never_raises(text: str, offset: int, line: int) -> None:
    index = LineIndex(text)
    for enc in (UTF8, UTF16, UTF32):
        pos = index.position(offset, enc)
        assert 0 <= pos.line < index.line_count
        back = index.offset(pos.line, pos.character, enc)
        assert 0 <= back <= len(text)
        assert 0 <= index.offset(line, offset, enc) <= len(text)
        if 0 <= offset <= len(text) and not (
            0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"
        ):
            assert back == offset
    index.line_text(line)


# Regression (fixed in fa4de63): LineIndex("").line_text(-2) raised IndexError.
@FAST
@given(TEXTS, st.integers(-50, -1))
def test_line_text_of_a_negative_line_never_raises(text: str, line: int) -> None:
    LineIndex(text).line_text(line)


@FAST
@given(st.binary(max_size=600))
def test_arbitrary_bytes_read_back_and_parse(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("x.tex", "x.md", "x.bib"):
            p = Path(tmp) / name
            p.write_bytes(data)
            text = read_text(p)
            assert isinstance(text, str)
            if name == "x.tex":
                check_doc(parse_latex(text, str(p)), text)
            elif name == "x.md":
                check_doc(parse_markdown(text, str(p)), text)
            else:
                parse_bib(text, str(p))
            LineIndex(text).position(len(text))


def test_read_text_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_text(tmp_path / "nope.tex") == ""


def test_deeply_nested_braces() -> None:
    for text in (
        "{" * 5000,
        "}" * 5000,
        "\\cite" + "{" * 5000 + "a" + "}" * 5000,
        "\\cites" + "[" * 3000 + "{a}" * 3000,
        "\\parencites" + "(" * 3000,
        "\\cite[" + "{" * 5000,
        "\\newcommand" + "{" * 5000,
        "\\bibliography" + "{" * 5000,
        "\\input" + "{" * 5000 + "x",
        "[@" + "[" * 5000 + "a" + "]" * 5000,
        "<!--" * 3000 + "@a",
        "`" * 5000 + "@a",
        "---\n" + "bibliography:\n" + "  - x\n" * 3000,
    ):
        check_doc(parse_latex(text, "x.tex"), text)
        check_doc(parse_markdown(text, "x.md"), text)
        LineIndex(text).position(len(text) // 2)


def one_unclosed_citation() -> str:
    """An unclosed ``\\cite{`` before 2,000 lines of citations (its time:
    ``benchmarks/bench_pathological.py``)."""
    body = "".join(f"Sentence {i} \\cite{{key{i}, other{i}}}.\n" for i in range(2000))
    return "\\cite{unclosed, \n" + body


def many_unclosed_citations() -> str:
    """2,000 lines of ``\\cite{a,a,...,a`` never closed (206 KB): each unclosed one scanned up
    to 20,000 characters until fa4de63, about 6 s, blocking the server (the time it takes
    now: ``benchmarks/bench_pathological.py``)."""
    return ("\\cite{" + "a," * 50 + "\n") * 2000


def test_one_unclosed_citation_keeps_the_citations_after_it() -> None:
    doc = parse_latex(one_unclosed_citation(), "x.tex")
    assert len(doc.citations) >= 4000


def test_many_unclosed_citations_parse() -> None:
    text = many_unclosed_citations()
    check_doc(parse_latex(text, "x.tex"), text)


_FIELD_TEXT = st.lists(
    st.sampled_from([*'ab {}"#,=%@\\\n', "title", "year", "2020", "x = {y}, ", "n = 3,"]), max_size=25
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_FIELD_TEXT, min_size=1, max_size=4))
def test_an_entry_views_values_are_its_fields_values(bodies: list[str]) -> None:
    """Entry views read a big file's values without building fields: the values must be
    exactly those of the fields, and the file's problems the same as a full parse's."""
    from citelens.documents.bibtex.parse import field_values

    text = "".join(f"@article{{k{i}, title = {{T{i}}}, {b}}}\n" for i, b in enumerate(bodies))
    lazy = parse_bib(text, "x.bib", eager=False)
    values = [field_values(e) for e in lazy.entries]
    full = parse_bib(text, "x.bib", eager=True)
    assert values == [{n: f.value for n, f in e.fields.items()} for e in full.entries]
    _ = [e.fields for e in lazy.entries]
    assert lazy.problems == full.problems


@pytest.mark.parametrize("which", ["papers", pytest.param("bigbib", marks=needs_bigbib)])
def test_every_corpus_entry_view_reads_the_values_of_its_fields(which: str) -> None:
    from citelens.documents.bibtex.parse import field_values
    from tests.harness import BIGBIB_FILES, CORPUS, bigbib

    bibs = (sorted(CORPUS.rglob("*.bib")) if which == "papers"
            else [bigbib(name) for name in BIGBIB_FILES])
    assert bibs
    for path in bibs:
        text = path.read_text(encoding="utf-8", errors="replace")
        lazy = parse_bib(text, str(path), eager=False)
        for e in lazy.entries[:3000]:
            assert field_values(e) == {n: f.value for n, f in e.fields.items()}, (path, e.key)
