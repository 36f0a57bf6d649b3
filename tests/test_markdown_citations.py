"""Pandoc citations and YAML bibliographies found by :func:`citelens.documents.markdown.parse_markdown`."""

from __future__ import annotations

import pytest

from citelens.core.model import SourceDocument
from citelens.documents.markdown import parse_markdown


def parse(text: str) -> SourceDocument:
    doc = parse_markdown(text, "paper.md")
    for c in doc.citations:
        assert text[c.span.start : c.span.end] == c.key, (text, c)
        assert c.command_span.start <= c.span.start and c.span.end <= c.command_span.end
    starts = [c.span.start for c in doc.citations]
    assert starts == sorted(starts)
    return doc


def cites(text: str) -> list[tuple[str, str, str]]:
    """(key, command, text of the command span) for each citation."""
    return [
        (c.key, c.command, text[c.command_span.start : c.command_span.end])
        for c in parse(text).citations
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[@a; @b]", [("a", "pandoc", "[@a; @b]"), ("b", "pandoc", "[@a; @b]")]),
        ("Text [see @doe99, pp. 33-35].",
         [("doe99", "pandoc", "[see @doe99, pp. 33-35]")]),
        ("[see @doe99, pp. 33-35; also @smith04, chap. 1]",
         [("doe99", "pandoc", "[see @doe99, pp. 33-35; also @smith04, chap. 1]"),
          ("smith04", "pandoc", "[see @doe99, pp. 33-35; also @smith04, chap. 1]")]),
        ("Smith says blah [-@smith04].", [("smith04", "pandoc", "[-@smith04]")]),
        ("@smith04 [p. 33] says blah.", [("smith04", "pandoc-intext", "@smith04 [p. 33]")]),
        ("@smith04 says blah.", [("smith04", "pandoc-intext", "@smith04")]),
        ("As -@smith04 says.", [("smith04", "pandoc-intext", "-@smith04")]),
        ("@{odd:key} wrote", [("odd:key", "pandoc-intext", "@{odd:key}")]),
        ("[@{https://doi.org/10.1/x}]", [("https://doi.org/10.1/x", "pandoc", "[@{https://doi.org/10.1/x}]")]),
        ("[@Doe:2019.x]", [("Doe:2019.x", "pandoc", "[@Doe:2019.x]")]),
        ("[@key-with-dash_and_underscore]",
         [("key-with-dash_and_underscore", "pandoc", "[@key-with-dash_and_underscore]")]),
        ("(@a)", [("a", "pandoc-intext", "@a")]),
        ("@a's work", [("a", "pandoc-intext", "@a")]),
        ("[**@a**]", [("a", "pandoc", "[**@a**]")]),
        ("@Müller2020 and [@李2019]",
         [("Müller2020", "pandoc-intext", "@Müller2020"), ("李2019", "pandoc", "[@李2019]")]),
        ("Ünïcode 🙂 title then [@after_emoji]", [("after_emoji", "pandoc", "[@after_emoji]")]),
    ],
)
def test_citation_forms(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert cites(text) == expected


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[@last.]", "last"),
        ("see @last.", "last"),
        ("see @last,", "last"),
        ("see @last;", "last"),
        ("see @last:", "last"),
        ("see @last!", "last"),
        ("see @last?", "last"),
        ("(see @last)", "last"),
        ("[@last;]", "last"),
        ("see @doe.2019.", "doe.2019"),
        ("see @a:b:", "a:b"),
    ],
)
def test_trailing_punctuation_is_not_part_of_the_key(text: str, key: str) -> None:
    assert [c.key for c in parse(text).citations] == [key]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("`@code` @real", ["real"]),
        ("``a ` @code`` @real", ["real"]),
        ("```\n@fenced [@f2]\n```\n@after", ["after"]),
        ("```python\n@decorator\ndef f(): pass\n```\n", []),
        ("~~~\n@tilde\n~~~\n[@after]", ["after"]),
        ("```{r setup, include=FALSE}\nx <- 1 # @rchunk [@r2]\n```\n@x", ["x"]),
        ("````\n```\n@in\n```\n````\n@out", ["out"]),
        ("<!-- [@hidden] and @Figueredo:2009dg -->\n[@shown]", ["shown"]),
        ("<!--\nmultiline [@h1;\n@h2]\n-->\n@shown", ["shown"]),
        ("mail me at john@example.com", []),
        ("foo@bar.com [@x]", ["x"]),
        ("user.name+tag@example.org", []),
        ("[link](http://x.org/@foo)", []),
    ],
)
def test_not_citations(text: str, expected: list[str]) -> None:
    assert [c.key for c in parse(text).citations] == expected


def test_yaml_front_matter_is_not_cited() -> None:
    text = (
        "---\ntitle: 'On @notacite'\nauthor: x@y.org\nabstract: |\n  see [@fm_cite]\n"
        "bibliography: refs.bib\n---\n\n[@a]\n"
    )
    doc = parse(text)
    assert [c.key for c in doc.citations] == ["a"]


def test_spans_are_exact_after_front_matter_and_code() -> None:
    text = (
        "---\ntitle: Ünïcode 🙂\nbibliography: refs.bib\n---\n"
        "```{r}\nplot(x) # @no\n```\n"
        "Some text [@first; see @second, p. 4] and @third [p. 5].\n"
    )
    doc = parse(text)
    assert [(c.key, c.span.start) for c in doc.citations] == [
        ("first", text.index("first")),
        ("second", text.index("second")),
        ("third", text.index("third")),
    ]


# --------------------------------------------------------------------------- bibliography


def bibs(text: str) -> list[tuple[str, str]]:
    doc = parse_markdown(text, "paper.md")
    assert all(r.kind == "yaml" for r in doc.bibliographies)
    return [(r.target, text[r.span.start : r.span.end]) for r in doc.bibliographies]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nbibliography: refs.bib\n---\n", [("refs.bib", "refs.bib")]),
        ('---\nbibliography: "refs.bib"\n---\n', [("refs.bib", "refs.bib")]),
        ("---\nbibliography: 'my refs.bib'\n---\n", [("my refs.bib", "my refs.bib")]),
        ("---\nbibliography: refs.bib # a comment\n---\n", [("refs.bib", "refs.bib")]),
        ("---\ntitle: x\nbibliography: paper.bib\nauthor: y\n---\n", [("paper.bib", "paper.bib")]),
        ("---\r\nbibliography: refs.bib\r\n---\r\n", [("refs.bib", "refs.bib")]),
        ("\ufeff---\nbibliography: refs.bib\n---\n", [("refs.bib", "refs.bib")]),
        ("---\nbibliography: refs.bib\n...\n", [("refs.bib", "refs.bib")]),
        ("---\nbibliography: [a.bib, \"b.bib\", 'c.bib']\n---\n",
         [("a.bib", "a.bib"), ("b.bib", "b.bib"), ("c.bib", "c.bib")]),
        ("---\nbibliography: [ a.bib , b.bib ]\n---\n", [("a.bib", "a.bib"), ("b.bib", "b.bib")]),
        ("---\nbibliography:\n  - a.bib\n  - \"b.bib\"\n  - 'c.bib'\ntitle: x\n---\n",
         [("a.bib", "a.bib"), ("b.bib", "b.bib"), ("c.bib", "c.bib")]),
        ("---\nbibliography:\n    - refs/one.bib\n    - refs/two.bib\n---\n",
         [("refs/one.bib", "refs/one.bib"), ("refs/two.bib", "refs/two.bib")]),
        ("no front matter\nbibliography: refs.bib\n", []),
        ("---\ntitle: x\n---\n", []),
    ],
)
def test_yaml_bibliography(text: str, expected: list[tuple[str, str]]) -> None:
    assert bibs(text) == expected


# Regression (fixed in fa4de63): a YAML block list at the key's own indentation (valid YAML,
# as yaml.dump and many R Markdown templates write it) was ignored.
def test_yaml_bibliography_block_list_without_indentation() -> None:
    text = "---\nbibliography:\n- a.bib\n- b.bib\n---\n"
    assert bibs(text) == [("a.bib", "a.bib"), ("b.bib", "b.bib")]


# Regression (fixed in fa4de63): pandoc reads "\@" as a literal "@", not a citation.
def test_escaped_at_sign_is_not_a_citation() -> None:
    assert parse(r"write \@name here").citations == []
