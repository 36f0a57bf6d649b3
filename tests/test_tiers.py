"""Which title tiers an entry gets (PubMed's only for biomedical ones)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citelens.core.model import EntryView
from citelens.sources.records import Lookup, Outcome
from citelens.verify import plan

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


def _view(title: str, venue: str = "", pmid: str | None = None) -> EntryView:
    return EntryView("k", "article", title, (), False, 2020, venue, None, None, pmid, None, None)


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


def _walk(view: EntryView, answers: dict[plan.Tier, Outcome], settle_on: plan.Tier | None = None
          ) -> plan.TitleStep:
    return plan.next_title_step(view, {t: _answer(t, o) for t, o in answers.items()},
                                lambda read: read[-1] is settle_on)


def test_the_title_tiers_are_read_in_plan_order_whatever_answered_first() -> None:
    view = _view("Percolation on lattices", "Phys. Rev. E")
    nf, failed = Outcome.NOT_FOUND, Outcome.FAILED
    assert _walk(view, {}).ask is plan.OPENALEX_TITLE
    # Crossref's early answer is not read while OpenAlex has not answered
    step = _walk(view, {plan.CROSSREF_TITLE: Outcome.FOUND}, settle_on=plan.CROSSREF_TITLE)
    assert step.ask is plan.OPENALEX_TITLE and step.read == () and not step.settled
    step = _walk(view, {plan.OPENALEX_TITLE: nf, plan.CROSSREF_TITLE: Outcome.FOUND},
                 settle_on=plan.CROSSREF_TITLE)
    assert step.read == (plan.OPENALEX_TITLE, plan.CROSSREF_TITLE) and step.settled
    # S2's keyword search: only when its match failed, or both other searches did
    step = _walk(view, {plan.OPENALEX_TITLE: nf, plan.CROSSREF_TITLE: nf, plan.S2_MATCH: nf})
    assert step.ask is None and not step.settled
    step = _walk(view, {plan.OPENALEX_TITLE: failed, plan.CROSSREF_TITLE: failed, plan.S2_MATCH: nf})
    assert step.ask is plan.S2_SEARCH
    step = _walk(view, {plan.OPENALEX_TITLE: nf, plan.CROSSREF_TITLE: nf, plan.S2_MATCH: failed})
    assert step.ask is plan.S2_SEARCH
    # a biomedical entry ends with PubMed's search
    bio = _view("Tumour suppressor genes", "Oncogene")
    assert _walk(bio, {plan.OPENALEX_TITLE: nf, plan.CROSSREF_TITLE: nf, plan.S2_MATCH: nf}
                 ).ask is plan.PUBMED_TITLE


def test_an_identifier_chain_reads_only_its_own_answers_and_the_batch() -> None:
    assert plan.chain_needs(has_value=True, same=False, conflicts=0, found_by_batch=False)
    assert not plan.chain_needs(has_value=True, same=False, conflicts=0, found_by_batch=True)
    assert not plan.chain_needs(has_value=True, same=True, conflicts=0, found_by_batch=False)
    assert plan.chain_needs(has_value=True, same=False, conflicts=1, found_by_batch=False)
    assert not plan.chain_needs(has_value=True, same=False, conflicts=2, found_by_batch=False)
    assert not plan.chain_needs(has_value=False, same=False, conflicts=0, found_by_batch=False)
