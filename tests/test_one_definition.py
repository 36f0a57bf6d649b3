"""One definition of each verdict concept, held by behaviour (the architecture test holds
the names): the DOI fix offers only the verdict's own papers, and the plan and the
comparison agree on which entries the indexes cover badly."""

from __future__ import annotations

import dataclasses

from citelens.core.findings import Severity
from citelens.core.model import EntryView, Name
from citelens.core.settings import Settings
from citelens.fixes.metadata import right_papers
from citelens.sources.records import PaperRecord
from citelens.verify import plan
from citelens.verify.match.compare import compare
from citelens.verify.status import Status, Verification

TITLE = "Attention is all you need for neural machine translation"


def _view(entry_type: str = "article", **kw: object) -> EntryView:
    fields: dict[str, object] = dict(
        key="k", entry_type=entry_type, title=TITLE, authors=(Name("Ashish", "", "Vaswani", ""),),
        authors_truncated=False, year=2017, venue="NeurIPS", doi=None, arxiv_id="1706.03762",
        pmid=None, s2_id=None, url=None,
    )
    fields.update(kw)
    return EntryView(**fields)  # type: ignore[arg-type]


def test_the_doi_fix_offers_no_paper_the_verdict_did_not_count() -> None:
    """A candidate sharing the entry's arXiv id with a title only at the candidate level is
    not the entry's paper for the verdict (right_papers empty), so the fix has none either
    (its own rule once accepted it: a shared identifier was enough)."""
    view = _view(doi="10.1/wrong")
    near = PaperRecord("crossref", "Attention is all you need for speech recognition", ["A. Vaswani"], 2017,
                       doi="10.1/near", arxiv_id="1706.03762")
    right = PaperRecord("crossref", TITLE, ["Ashish Vaswani"], 2017, doi="10.1/right")
    wrong = PaperRecord("crossref", "Another paper", doi="10.1/wrong")
    v = Verification("k", Status.DOI_MISMATCH, "", match=wrong, candidates=[near, right])
    assert [r.doi for r in right_papers(v, view, Settings())] == ["10.1/right"]
    v = dataclasses.replace(v, candidates=[near])  # (a verdict is frozen)
    assert right_papers(v, view, Settings()) == []


def test_a_misc_with_a_doi_and_a_url_is_a_paper_for_the_plan_and_the_comparison() -> None:
    """plan.is_informational said a paper (it has a DOI), the comparison said a web page (it
    has a URL) and made its wrong year information: one rule now, the identifier decides."""
    misc = _view("misc", doi="10.1/right", url="https://example.org/paper", year=2015)
    record = PaperRecord("crossref", TITLE, ["Ashish Vaswani"], 2017, venue="NeurIPS", doi="10.1/right")
    assert plan.is_informational(misc) is False
    years = [d for d in compare(misc, [record]).discrepancies if d.field == "year"]
    assert years and years[0].severity is Severity.WARNING
    web_page = _view("misc", doi=None, arxiv_id=None, url="https://example.org/page", year=2015)
    assert plan.is_informational(web_page) is True
    years = [d for d in compare(web_page, [record]).discrepancies if d.field == "year"]
    assert all(d.severity is not Severity.WARNING for d in years)


def test_the_same_paper_is_one_rule_with_its_reason() -> None:
    """The verdict's "is this the paper" and the safe field fix's are one rule: the fix
    needs a title or an identifier, the verdict also takes authors and year agreeing."""
    from citelens.verify.match.compare import MatchReason, is_confident_match, is_same_paper, match_reason

    view = _view()
    same = PaperRecord("crossref", TITLE, ["Ashish Vaswani"], 2017)
    by_id = PaperRecord("arxiv", "Attention is all you need for neural translation", ["A. Vaswani"], 2017,
                        arxiv_id="1706.03762")
    near = "Attention is all you need for neural translation"
    by_people = PaperRecord("s2", near, ["Ashish Vaswani"], 2017)
    other = PaperRecord("s2", "A survey of graph neural networks", ["Jie Zhou"], 2020)
    reasons = [match_reason(view, r) for r in (same, by_id, by_people, other)]
    assert reasons == [MatchReason.TITLE, MatchReason.IDENTIFIER, MatchReason.AUTHORS_YEAR, None]
    assert [is_confident_match(view, r) for r in (same, by_id, by_people, other)] == [True, True, True, False]
    assert [is_same_paper(view, r) for r in (same, by_id, by_people, other)] == [True, True, False, False]
