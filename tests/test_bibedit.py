"""Unit tests of the quick-fix edits (citelens.documents.bibtex.edit): exact before/after text."""

from __future__ import annotations

from citelens.core.model import Span
from citelens.documents.bibtex.edit import (
    apply_edits,
    delete_entry,
    merge_entries,
    remove_field,
    replace_entry,
    replace_field,
)
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.render import bibtex_author
from citelens.documents.bibtex.style import detect_style
from citelens.sources.records import PaperRecord
from citelens.workspace.rename import rename_citation

ALIGNED = """% my refs
@Article{vaswani,
  Title     = {Attention is all you need},
  Author    = {Vaswani, Ashish and Shazeer, Noam},
  Year      = 2016,
  Journal   = {arXiv preprint arXiv:1706.03762},
  DOI       = {10.1109/mcse.2007.55},
  Note      = {my note}
}

@misc{other, title="X", year="2020", doi="10.1/2"}
"""

ATTENTION = PaperRecord(
    "s2", "Attention is All you Need",
    ["Ashish Vaswani", "Noam M. Shazeer", "Ludwig van Beethoven"], 2017,
    "Advances in Neural Information Processing Systems", arxiv_id="1706.03762",
    pages="5998-6008", publication_types=["JournalArticle", "Conference"])


def _edit(text: str, index: int, fn: object, *args: object, **kw: object) -> str:
    entry = parse_bib(text).entries[index]
    edit = fn(text, entry, *args, **kw)  # type: ignore[operator]
    assert (edit.start, edit.end) == (entry.span.start, entry.span.end)
    return apply_edits(text, [edit])


def test_style_is_read_from_the_entry() -> None:
    style = detect_style(ALIGNED, parse_bib(ALIGNED).entries[0])
    assert (style.indent, style.name_case, style.eq_column, style.bare_numbers,
            style.trailing_comma, style.quotes) == ("  ", "title", 10, True, False, False)
    one = detect_style(ALIGNED, parse_bib(ALIGNED).entries[1])
    assert one.one_line and one.quotes


def test_replace_entry_keeps_key_user_fields_and_style() -> None:
    out = _edit(ALIGNED, 0, replace_entry, ATTENTION, drop=["doi"])
    assert out == """% my refs
@Inproceedings{vaswani,
  Title     = {Attention is all you need},
  Author    = {Vaswani, Ashish and Shazeer, Noam M. and van Beethoven, Ludwig},
  Year      = 2017,
  Note      = {my note},
  Booktitle = {Advances in Neural Information Processing Systems},
  Pages     = {5998--6008},
  Eprint    = {1706.03762},
  ArchivePrefix = {arXiv}
}

@misc{other, title="X", year="2020", doi="10.1/2"}
"""


def test_fix_and_remove_doi() -> None:
    fixed = _edit(ALIGNED, 0, replace_field, "doi", "10.5555/right")
    assert "  DOI       = {10.5555/right},\n  Note" in fixed
    removed = _edit(ALIGNED, 0, remove_field, "doi")
    assert "DOI" not in removed and "  Journal   = {arXiv preprint arXiv:1706.03762},\n  Note" \
        in removed
    last = _edit(ALIGNED, 0, remove_field, "note")  # the last one: no dangling comma
    assert "  DOI       = {10.1109/mcse.2007.55}\n}" in last
    inline = _edit(ALIGNED, 1, remove_field, "doi")
    assert '@misc{other, title="X", year="2020"}' in inline
    middle = _edit(ALIGNED, 1, remove_field, "title")
    assert '@misc{other, year="2020", doi="10.1/2"}' in middle
    added = _edit(ALIGNED, 1, replace_field, "doi", "10.5555/x_y")
    assert '@misc{other, title="X", year="2020", doi="10.5555/x_y"}' in added


def test_quotes_and_tabs_and_trailing_comma() -> None:
    text = '@book{b,\n\ttitle = "{T}",\n\tyear = "1997",\n}\n'
    out = _edit(text, 0, replace_field, "doi", "10.1/2")
    assert out == '@book{b,\n\ttitle = "{T}",\n\tyear = "1997",\n\tdoi = "10.1/2",\n}\n'


def test_merge_and_delete_duplicate() -> None:
    text = ("@article{a,\n  title = {T},\n  doi = {10.1/x}\n}\n\n"
            "@article{b,\n  title = {T},\n  keywords = {k},\n  year = 2020\n}\n\n"
            "@misc{c, title={C}}\n")
    bib = parse_bib(text)
    a, b = bib.entries[0], bib.entries[1]
    out = apply_edits(text, [merge_entries(text, a, b), delete_entry(text, b)])
    assert out == ("@article{a,\n  title = {T},\n  doi = {10.1/x},\n  keywords = {k},\n"
                   "  year = {2020}\n}\n\n@misc{c, title={C}}\n")


def test_rename_citation_without_citing_twice() -> None:
    text = r"\cite{a, b} and \cite{b}"
    spans = {"a": Span(6, 7), "b": Span(9, 10)}
    e = rename_citation(text, spans["b"], "a", [("a", spans["a"])])
    assert apply_edits(text, [e]) == r"\cite{a} and \cite{b}"
    last = text.rindex("b")
    e = rename_citation(text, Span(last, last + 1), "a")
    assert apply_edits(text, [e]) == r"\cite{a, b} and \cite{a}"


def test_author_names() -> None:
    assert bibtex_author("Ashish Vaswani") == "Vaswani, Ashish"
    assert bibtex_author("Noam M. Shazeer") == "Shazeer, Noam M."
    assert bibtex_author("Ludwig van Beethoven") == "van Beethoven, Ludwig"
    assert bibtex_author("Martin Luther King Jr.") == "King, Jr., Martin Luther"
    assert bibtex_author("Astropy Collaboration and Friends") == \
        "{Astropy Collaboration and Friends}"
    assert bibtex_author("Kyriacos, Athanasiou") == "{Kyriacos, Athanasiou}"


def test_replacing_with_another_paper_drops_its_old_bibliographic_fields() -> None:
    text = ("@article{x,\n  title = {Fake},\n  author = {Doe, J.},\n  volume = {9},\n"
            "  doi = {10.9999/fake},\n  note = {keep me}\n}\n")
    rec = PaperRecord("crossref", "Real & True: 100% _sure_", ["Ann Lee"], 2001, "J. Real",
                      doi="10.1/real", publication_types=["journal-article"])
    out = _edit(text, 0, replace_entry, rec, same_paper=False)
    e = parse_bib(out).entries[0]
    assert {n: f.value for n, f in e.fields.items()} == {
        "title": r"Real \& True: 100\% \_sure\_", "author": "Lee, Ann", "year": "2001",
        "journal": "J. Real", "doi": "10.1/real", "note": "keep me"}
