"""Which title tiers an entry gets (PubMed's only for biomedical ones)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citelens.core.model import EntryView
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
