"""The pure parts of rename, symbols, links and hover text."""

from __future__ import annotations

import pytest

from citelens.core.mdplain import plain
from citelens.documents.bibtex.edit import apply_edits
from citelens.documents.bibtex.parse import parse_bib
from citelens.workspace.bibsearch import haystacks, search_entries
from citelens.workspace.links import bib_links
from citelens.workspace.rename import RenameError, check_new_key, rename_edits
from citelens.workspace.store import DocumentStore

BIB = (
    '@article{smith2020,\n  author = {M{\\"u}ller, Anna and Smith, Bob},\n'
    "  title = {Deep {Learning} of Things},\n  year = 2020,\n}\n"
    "@inproceedings{child,\n  crossref = {smith2020},\n  title = {Child},\n}\n"
)


@pytest.mark.parametrize(
    ("new", "why"),
    [
        ("", "not a valid"),
        ("a b", "not a valid"),
        ("a,b", "not a valid"),
        ("a{b", "not a valid"),
        ("key-", "not a valid"),
        ("@x", "not a valid"),
        ("child", "already exists"),
        ("CHILD", "only in case"),
        ("smith2020", "already"),
    ],
)
def test_refused_names(new: str, why: str) -> None:
    with pytest.raises(RenameError, match=why):
        check_new_key("smith2020", new, ["smith2020", "child"])


@pytest.mark.parametrize("new", ["smith:2020", "Smith2020", "s.2020-a+b/c", "müller_2020"])
def test_accepted_names(new: str) -> None:
    check_new_key("smith2020", new, ["smith2020", "child"])


def test_rename_edits_touch_key_crossref_and_citations_not_comments(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    tex = tmp_path / "a.tex"
    tex.write_text("\\cite{x,smith2020} % \\cite{smith2020}\n\\nocite{smith2020}\n", encoding="utf-8")
    store = DocumentStore(())
    edits = rename_edits(store, "smith2020", "mueller2020", [str(bib)], [str(tex)])
    new_bib = apply_edits(BIB, edits[str(bib)])
    assert "@article{mueller2020," in new_bib and "crossref = {mueller2020}" in new_bib
    new_tex = apply_edits(tex.read_text(), edits[str(tex)])
    assert new_tex == "\\cite{x,mueller2020} % \\cite{smith2020}\n\\nocite{mueller2020}\n"


def test_search_by_key_title_word_first_author_with_accents() -> None:
    bib = parse_bib(BIB)
    hay = haystacks(BIB, bib.entries)
    keys = lambda q: [m.entry.key for m in search_entries(bib.entries, q, hay=hay)]  # noqa: E731
    assert keys("smith") == ["smith2020"]  # the key (Smith is the second author)
    assert keys("müller") == ["smith2020"] and keys("muller learn") == ["smith2020"]
    assert keys("things") == ["smith2020"]
    assert keys("bob") == []
    assert keys("") == ["child", "smith2020"]
    assert keys("learn") == keys("learn") == [m.entry.key for m in search_entries(bib.entries, "learn")]


def test_bib_links_spans_are_the_values() -> None:
    text = (
        '@misc{a,\n  doi = "https://doi.org/10.1000/X(Y)",\n  url = {https://e.org/a\\_b},\n'
        "  eprint = {arXiv:2101.00001v2}, archiveprefix = {arXiv},\n}\n"
    )
    links = {text[s.start : s.end]: t for s, t in bib_links(parse_bib(text), text)}
    assert links == {
        "https://doi.org/10.1000/X(Y)": "https://doi.org/10.1000/x(y)",
        "https://e.org/a\\_b": "https://e.org/a_b",
        "arXiv:2101.00001v2": "https://arxiv.org/abs/2101.00001",
    }


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("set CITELENS_LLM_BASE_URL and arxiv_id", "set CITELENS_LLM_BASE_URL and arxiv_id"),
        ("the *best* model", "the `*best*` model"),
        ("__init__ here", "`__init__` here"),
        ("a `tick", "a 'tick"),
        ("# not a heading", "`#` not a heading"),
        ("C:\\path", "`C:\\path`"),
    ],
)
def test_plain_needs_no_escapes(text: str, shown: str) -> None:
    assert plain(text) == shown
