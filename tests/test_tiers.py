"""Which title tiers an entry gets (PubMed's only for biomedical ones)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citelens.core.model import EntryView
from citelens.sources.records import Lookup, Outcome
from citelens.verify import plan
from citelens.verify.identity import identifiers

_WORDS = [
    "Cancer",
    "cancers",
    "tumour",
    "tumor",
    "neural",
    "tissue",
    "neural tissue",
    "Pharmacology",
    "pharma",
    "diagnosis",
    "gene",
    "genes_x",
    "2gene",
    "cell",
    "cells",
    "Physics",
    "review",
    "é",
    "Lancet",
    "JAMA",
    "rats",
    "ratio",
    "cellular",
    "biomedicine",
    "-",
    ",",
    "  ",
]


def _view(title: str, venue: str = "", pmid: str | None = None, doi: str | None = None,
          entry_type: str = "article") -> EntryView:
    return EntryView("k", entry_type, title, (), False, 2020, venue, doi, None, pmid, None, None)


@given(st.lists(st.sampled_from(_WORDS), max_size=8), st.lists(st.sampled_from(_WORDS), max_size=3))
def test_the_word_lookup_decides_as_the_pattern(title: list[str], venue: list[str]) -> None:
    view = _view(" ".join(title), " ".join(venue))
    expected = bool(plan._BIOMED.search(f"{view.title} {view.venue}"))
    assert plan.looks_biomedical(view) is expected


def test_a_biomedical_entry_is_also_searched_in_pubmed() -> None:
    assert plan.PUBMED_TITLE in plan.title_tiers(_view("Tumour suppressor genes", "Oncogene"))
    assert plan.PUBMED_TITLE in plan.title_tiers(_view("Anything", pmid="12345678"))
    assert plan.PUBMED_TITLE not in plan.title_tiers(_view("Percolation on lattices", "Phys. Rev. E"))


def test_every_word_of_the_pattern_is_looked_up() -> None:
    words = sorted(plan._BIOMED_WORDS) + [s + "ical" for s in plan._BIOMED_STEMS]
    for w in words:
        for text in (f"On {w} today", f"{w.upper()}", f"x-{w.capitalize()}: y"):
            assert plan.looks_biomedical(_view(text)) is True, text
            assert plan._BIOMED.search(text), text
        assert plan.looks_biomedical(_view(f"On {w}x today")) is bool(plan._BIOMED.search(f"On {w}x today"))


def _answer(tier: plan.Tier, outcome: Outcome) -> Lookup:
    return Lookup(tier.host, tier.name, outcome, [], "")


def _walk(view: EntryView, answers: dict[plan.Tier, Outcome], settle_on: plan.Tier | None = None,
          found_at: plan.Tier | None = None) -> plan.TitleStep:
    return plan.next_title_step(view, {t: _answer(t, o) for t, o in answers.items()},
                                lambda read: read[-1] is settle_on,
                                lambda read: found_at in read)


def test_the_title_tiers_are_read_in_plan_order_whatever_answered_first() -> None:
    """Crossref first (free), OpenAlex's priced search only for a paper Crossref did not
    find, then S2's match; S2's keyword search only when its match or Crossref's search
    failed; PubMed last for a biomedical entry."""
    view = _view("Percolation on lattices", "Phys. Rev. E")
    nf, failed, found = Outcome.NOT_FOUND, Outcome.FAILED, Outcome.FOUND
    assert _walk(view, {}).ask is plan.CROSSREF_TITLE
    # S2's early answer is not read while Crossref and OpenAlex have not answered
    step = _walk(view, {plan.S2_MATCH: found}, settle_on=plan.S2_MATCH)
    assert step.ask is plan.CROSSREF_TITLE and step.read == () and not step.settled
    step = _walk(view, {plan.CROSSREF_TITLE: nf, plan.S2_MATCH: found}, settle_on=plan.S2_MATCH)
    assert step.ask is plan.OPENALEX_TITLE and step.read == (plan.CROSSREF_TITLE,)
    step = _walk(view, {plan.CROSSREF_TITLE: nf, plan.OPENALEX_TITLE: nf, plan.S2_MATCH: found},
                 settle_on=plan.S2_MATCH)
    assert step.read == (plan.CROSSREF_TITLE, plan.OPENALEX_TITLE, plan.S2_MATCH) and step.settled
    # OpenAlex out (its budget spent): the entry goes on to S2's match at once
    step = _walk(view, {plan.CROSSREF_TITLE: nf, plan.OPENALEX_TITLE: failed})
    assert step.ask is plan.S2_MATCH
    step = _walk(view, {plan.CROSSREF_TITLE: nf, plan.OPENALEX_TITLE: failed, plan.S2_MATCH: nf})
    assert step.ask is None and not step.settled
    # found by Crossref but not settled (its other versions are wanted): the free tiers first,
    # OpenAlex's priced search last
    step = _walk(view, {plan.CROSSREF_TITLE: found}, found_at=plan.CROSSREF_TITLE)
    assert step.ask is plan.S2_MATCH and step.read == (plan.CROSSREF_TITLE,)
    step = _walk(view, {plan.CROSSREF_TITLE: found, plan.S2_MATCH: found}, found_at=plan.CROSSREF_TITLE)
    assert step.ask is plan.OPENALEX_TITLE and step.read == (plan.CROSSREF_TITLE, plan.S2_MATCH)
    assert plan.title_tiers_read(view) == (plan.CROSSREF_TITLE, plan.S2_MATCH, plan.OPENALEX_TITLE)
    # S2's keyword search: only when its match or Crossref's search failed
    step = _walk(view, {plan.CROSSREF_TITLE: failed, plan.OPENALEX_TITLE: nf, plan.S2_MATCH: nf})
    assert step.ask is plan.S2_SEARCH
    step = _walk(view, {plan.CROSSREF_TITLE: nf, plan.OPENALEX_TITLE: nf, plan.S2_MATCH: failed})
    assert step.ask is plan.S2_SEARCH
    # a biomedical entry ends with PubMed's search
    bio = _view("Tumour suppressor genes", "Oncogene")
    assert _walk(bio, {plan.CROSSREF_TITLE: nf, plan.OPENALEX_TITLE: nf, plan.S2_MATCH: nf}
                 ).ask is plan.PUBMED_TITLE


def test_an_entry_crossref_seldom_holds_asks_openalex_first_and_crossref_only_when_unsettled() -> None:
    """Issue 45: a conference paper, report or misc entry with no DOI (NeurIPS, ICLR, PMLR,
    a workshop) asks OpenAlex's title search first, then S2's match, and Crossref's search
    (one at a time, 5/s in its public pool) only when they did not settle it: "not found"
    still reads it. A journal article, a book chapter, an entry with a Crossref DOI: Crossref
    first, as before."""
    nf, failed, found = Outcome.NOT_FOUND, Outcome.FAILED, Outcome.FOUND
    neurips = _view("Attention is all you need", "Advances in Neural Information Processing Systems",
                    entry_type="inproceedings")
    assert _walk(neurips, {}).ask is plan.OPENALEX_TITLE
    step = _walk(neurips, {plan.OPENALEX_TITLE: found}, settle_on=plan.OPENALEX_TITLE)
    assert step.read == (plan.OPENALEX_TITLE,) and step.settled  # Crossref never asked
    step = _walk(neurips, {plan.OPENALEX_TITLE: nf})
    assert step.ask is plan.S2_MATCH and step.read == (plan.OPENALEX_TITLE,)
    step = _walk(neurips, {plan.OPENALEX_TITLE: nf, plan.S2_MATCH: nf})
    assert step.ask is plan.CROSSREF_TITLE  # "not found" needs a keyword search
    step = _walk(neurips, {plan.OPENALEX_TITLE: failed, plan.S2_MATCH: nf, plan.CROSSREF_TITLE: nf})
    assert step.ask is None and step.read == (plan.OPENALEX_TITLE, plan.S2_MATCH, plan.CROSSREF_TITLE)
    step = _walk(neurips, {plan.OPENALEX_TITLE: nf, plan.S2_MATCH: nf, plan.CROSSREF_TITLE: failed})
    assert step.ask is plan.S2_SEARCH
    journal = _view("A title", "Phys. Rev. E")
    needs = {n.what for n in plan.not_found_needs(journal, identifiers(journal))}
    assert {n.what for n in plan.not_found_needs(neurips, identifiers(neurips))} == needs
    for entry_type, venue in (("misc", ""), ("techreport", "MIT"), ("phdthesis", "Stanford"),
                              ("article", "Journal of Machine Learning Research"),
                              ("article", "Advances in Neural Information Processing Systems")):
        view = _view("A title", venue, entry_type=entry_type)
        assert _walk(view, {}).ask is plan.OPENALEX_TITLE, entry_type
    # what Crossref registers, or a paper already found (its versions wanted): Crossref first
    for view in (journal, _view("A title", "Homology Modeling", entry_type="incollection"),
                 _view("A title", "MIT Press", entry_type="book"),
                 _view("A title", "CVPR", doi="10.1109/cvpr.2016.308", entry_type="inproceedings")):
        assert _walk(view, {}).ask is plan.CROSSREF_TITLE, view.entry_type
    assert plan.title_tiers_read(neurips) == (plan.CROSSREF_TITLE, plan.S2_MATCH, plan.OPENALEX_TITLE)


def test_not_found_needs_the_sources_a_check_can_afford_never_openalex() -> None:
    """What must have answered before an entry is "not found" while another source failed:
    S2's title tiers, a keyword search, PubMed's for a biomedical entry, each identifier's
    registry; OpenAlex (priced against a daily budget) never."""
    title_only = _view("Percolation on lattices", "Phys. Rev. E")
    needs = plan.not_found_needs(title_only, identifiers(title_only))
    assert [n.field for n in needs] == [None, None]
    assert not any(m.startswith("openalex") for n in needs for m in n.methods)
    doi = _view("Percolation on lattices", "Phys. Rev. E", doi="10.1103/PhysRevE.1.1")
    assert [n.what for n in plan.not_found_needs(doi, identifiers(doi))][-1].startswith("doi.org")
    bio = _view("Tumour suppressor genes", "Oncogene", pmid="12345678")
    assert {n.field for n in plan.not_found_needs(bio, identifiers(bio))} == {None, "pmid"}
    assert len(plan.not_found_needs(bio, identifiers(bio))) == 4
    answered = [(None, "s2_title_match", Outcome.NOT_FOUND), (None, "crossref_search", Outcome.FAILED)]
    assert [n.what for n in plan.unmet_needs(title_only, identifiers(title_only), answered)] == [
        plan.not_found_needs(title_only, identifiers(title_only))[1].what]
    assert plan.evidence_only("openalex") and not plan.evidence_only("crossref")


def test_an_identifier_chain_reads_only_its_own_answers_and_the_batch() -> None:
    assert plan.chain_needs(has_value=True, same=False, conflicts=0, found_by_batch=False)
    assert not plan.chain_needs(has_value=True, same=False, conflicts=0, found_by_batch=True)
    assert not plan.chain_needs(has_value=True, same=True, conflicts=0, found_by_batch=False)
    assert plan.chain_needs(has_value=True, same=False, conflicts=1, found_by_batch=False)
    assert not plan.chain_needs(has_value=True, same=False, conflicts=2, found_by_batch=False)
    assert not plan.chain_needs(has_value=False, same=False, conflicts=0, found_by_batch=False)
