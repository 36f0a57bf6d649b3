"""The one renderer (workspace/render.py): a paper's first author is read by one rule in the
hover's one-line record and in completion's detail."""

from __future__ import annotations

from citelens.sources.records import PaperRecord
from citelens.workspace import render


def test_a_record_in_one_line_names_its_first_author_by_family_name_however_written() -> None:
    """The hover's brief line once took the last word ("Ashish" of "Vaswani, Ashish") while
    completion's detail took the family name: both now say "Vaswani"."""
    for written in ("Ashish Vaswani", "Vaswani, Ashish"):
        r = PaperRecord(source="crossref", title="Attention Is All You Need",
                        authors=[written, "Noam Shazeer"], year=2017, doi="10.5555/3295222.3295349")
        assert render.record_brief(r) == (
            "*Attention Is All You Need* (Vaswani et al., 2017)"
            " · DOI [10.5555/3295222.3295349](https://doi.org/10.5555/3295222.3295349)"
        )
        assert render.paper_detail(r) == "Vaswani et al., 2017"


def test_completion_documentation_of_a_paper_is_plain_lines() -> None:
    r = PaperRecord(source="s2", title="A *bold* title", authors=["A. Author"], year=2020,
                    venue="Venue", arxiv_id="2001.00001", abstract="First one. Second one. Third one.")
    assert render.paper_documentation(r, None, "refs.bib", "author2020bold") == "\n\n".join([
        "A `*bold*` title", "A. Author", "Venue, 2020", "arXiv:2001.00001",
        "First one. Second one.", "Accepting inserts author2020bold and adds this entry to refs.bib.",
    ])
