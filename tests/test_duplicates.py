"""Entries with different keys that describe one paper."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from citelens.checks.duplicates import DuplicatePair, _may_be_similar, _similar_in_block, find_duplicates
from citelens.core.model import EntryView, Name
from citelens.verify.match.titles import _SUBTITLE, SEQUEL_TOKEN, is_typo, split_subtitle


def entry(key: str, title: str, **kw: object) -> EntryView:
    base = EntryView(
        key=key, entry_type="article", title=title,
        authors=(Name("Anders B.", "", "Eriksson", ""), Name("Per", "", "Dahlqvist", "")),
        authors_truncated=False, year=1993, venue="Phys. Rev. E", doi=None, arxiv_id=None,
        pmid=None, s2_id=None, url=None,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def pairs(views: list[EntryView], resolved: dict[str, str] | None = None) -> set[tuple[str, str]]:
    return {(p.key_a, p.key_b) for p in find_duplicates(views, resolved)}


DUPLICATES = [
    ("same DOI, different case",
     [entry("a", "Stability exchanges", doi="10.1103/PhysRevE.47.1002"),
      entry("b", "Something else entirely", doi="10.1103/physreve.47.1002")], "doi"),
    ("same title, other casing and braces",
     [entry("a", "Stability exchanges between periodic orbits in a Hamiltonian system"),
      entry("b", "Stability Exchanges between {P}eriodic Orbits in a {H}amiltonian System",
            authors=(), year=None)], "title"),
    ("dropped subtitle",
     [entry("a", "Shadowing instability in three dimensions: a numerical study"),
      entry("b", "Shadowing instability in three dimensions")], "title"),
    ("arXiv and published version (off by one year)",
     [entry("a", "Kinetics of the monomer-monomer surface reaction model", year=1992,
            venue="arXiv preprint"),
      entry("b", "Kinetics of the monomer–monomer surface reaction model", year=1993)], "title"),
    ("same first author and year, title with a typo and a dropped word",
     [entry("a", "Light scattering measurements of nonequilibrium fluctuations in a mixture"),
      entry("b", "Light-scattering measurments of nonequilibrium fluctuations in a liquid "
            "mixture")], "author_year_title"),
]


@pytest.mark.parametrize(("why", "views", "reason"), DUPLICATES, ids=[d[0] for d in DUPLICATES])
def test_duplicates_found(why: str, views: list[EntryView], reason: str) -> None:
    found = find_duplicates(views)
    assert [(p.key_a, p.key_b, p.reason) for p in found] == [("a", "b", reason)]
    assert "'a'" in found[0].message


def test_same_semantic_scholar_paper_after_resolution() -> None:
    views = [entry("a", "Attention is all you need"), entry("b", "Transformers (Vaswani)")]
    assert pairs(views, {"a": "204e3073870fae3d05bcbc2f6a8e263d9b72e776",
                         "b": "204e3073870fae3d05bcbc2f6a8e263d9b72e776"}) == {("a", "b")}
    assert pairs(views, {"a": "204e30", "b": "ffff00"}) == set()


NOT_DUPLICATES = [
    ("Part I / Part II",
     [entry("a", "Nonlinear waves in dispersive media. Part I"),
      entry("b", "Nonlinear waves in dispersive media. Part II")]),
    ("numbered sequels",
     [entry("a", "Lattice Boltzmann simulations of soft matter systems 1"),
      entry("b", "Lattice Boltzmann simulations of soft matter systems 2")]),
    ("A/B sequels",
     [entry("a", "Renormalization group theory of crossover phenomena A"),
      entry("b", "Renormalization group theory of crossover phenomena B")]),
    ("workshop and later journal version",
     [entry("a", "Graph neural networks for molecular property prediction", year=2019,
            venue="NeurIPS Workshop on Machine Learning for Molecules"),
      entry("b", "Graph neural networks for molecular property prediction", year=2021,
            venue="Journal of Chemical Information and Modeling")]),
    ("different arXiv ids",
     [entry("a", "Notes on the quantum Hall effect", arxiv_id="1606.06687"),
      entry("b", "Notes on the quantum Hall effect", arxiv_id="0902.1234")]),
    ("different DOIs",
     [entry("a", "Comment on stability", doi="10.1103/PhysRevE.50.100"),
      entry("b", "Comment on stability", doi="10.1103/PhysRevE.51.200")]),
    ("one word different",
     [entry("a", "Deep residual learning for image recognition", year=2016),
      entry("b", "Deep residual learning for video recognition", year=2017)]),
    ("same key twice is DUPLICATE_KEY, not ours",
     [entry("a", "Shadowing instability in three dimensions"),
      entry("a", "Shadowing instability in three dimensions")]),
]


@pytest.mark.parametrize(("why", "views"), NOT_DUPLICATES, ids=[d[0] for d in NOT_DUPLICATES])
def test_not_duplicates(why: str, views: list[EntryView]) -> None:
    assert find_duplicates(views) == []


def test_json_round_trip_and_bad_input() -> None:
    views = [entry("a", "X", doi="10.1000/x"), entry("b", "Y", doi="10.1000/X")]
    (p,) = find_duplicates(views)
    assert DuplicatePair.from_json(p.to_json()) == p
    broken = [entry("a", "", authors=(Name("", "", "", ""),), year=None), entry("b", "\x00{")]
    assert find_duplicates(broken) == []
    assert find_duplicates([]) == []


def many_views() -> list[EntryView]:
    """3,000 generated titles from a small vocabulary, plus two planted duplicates (the
    time ``find_duplicates`` takes on them: ``benchmarks/bench_pathological.py``)."""
    rng = random.Random(7)
    words = [a + b for a in ("quant", "chao", "latt", "kinet", "turb", "gran", "polym", "spin",
                             "glass", "perc", "diff", "plasm", "solit", "vort", "coll")
             for b in ("ic", "al", "on", "ity", "ization", "ous")]
    views = []
    for i in range(3000):
        t = " ".join(rng.sample(words, 6))
        views.append(entry(f"k{i}", f"{t} in model systems", year=1993 + i % 30,
                           authors=(Name("A.", "", f"Author{i % 97}", ""),)))
    views.append(entry("dupA", "Anomalous diffusion of tracer particles in crowded membranes"))
    views.append(entry("dupB", "Anomalous Diffusion of Tracer Particles in Crowded Membranes",
                       year=None))
    return views


def test_finds_the_planted_pair_among_many_titles() -> None:
    found = pairs(many_views())
    assert ("dupA", "dupB") in found
    assert all(a.startswith("dup") for a, _ in found), found


# --------------------------------------------------------------------------- the shortcuts are exact

_WORDS = st.text(alphabet="abcde", min_size=1, max_size=10) | st.sampled_from(["i", "ii", "2", "12345"])


def _may_be_similar_reference(a: frozenset[str], b: frozenset[str]) -> bool:
    """The rule spelled out: every word pair tried with is_typo, no shortcut."""
    if not a or not b:
        return False
    only_a, only_b = a - b, b - a
    if all(SEQUEL_TOKEN.match(t) for t in only_a | only_b):
        return not (only_a or only_b)
    changed = max(len(only_a), len(only_b))
    if changed <= 2:
        return True
    if not only_a or not only_b or abs(len(only_a) - len(only_b)) > 2:
        return False
    typos = sum(1 for x in only_a if any(is_typo(x, y) for y in only_b))
    return typos >= changed - 2


@settings(max_examples=400, deadline=None)
@given(st.frozensets(_WORDS, max_size=9), st.frozensets(_WORDS, max_size=9))
def test_content_word_prefilter_is_the_rule(a: frozenset[str], b: frozenset[str]) -> None:
    assert _may_be_similar(a, b) == _may_be_similar_reference(a, b)


def test_content_word_prefilter_counts_typos() -> None:
    a = frozenset({"stabilty", "exchnges", "betwen", "periodc", "hamiltonien"})
    b = frozenset({"stability", "exchanges", "between", "periodic", "hamiltonian"})
    assert _may_be_similar(a, b) and _may_be_similar_reference(a, b)
    assert not _may_be_similar(a, frozenset({"quantum", "chaos", "billiard", "spectra", "orbit"}))
    # two long words two edits apart each (a swapped pair of letters) make up for two others
    a = frozenset({"exchnages", "hamiltonain", "orbits", "quantum"})
    b = frozenset({"exchanges", "hamiltonian", "chaos", "spectra"})
    assert _may_be_similar(a, b) and _may_be_similar_reference(a, b)
    assert not _may_be_similar(a, b - {"hamiltonian"} | {"hamburger"})


def _scored_pairs(titles: list[str]) -> set[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    _similar_in_block(titles, list(range(len(titles))), pairs)
    return pairs


def _all_pairs(titles: list[str]) -> set[tuple[int, int]]:
    n = len(titles)
    return {(i, j) for i in range(n) for j in range(i + 1, n) if fuzz.ratio(titles[i], titles[j]) >= 75}


def test_length_window_keeps_pairs_at_the_bound() -> None:
    """ "a"*30 and "a"*50 score exactly 75: the longest a title can be next to a shorter one."""
    titles = ["a" * 50, "a" * 30, "a" * 51, "a" * 29, "a" * 18, "ab" * 15]
    assert _scored_pairs(titles) == _all_pairs(titles)
    assert (0, 1) in _scored_pairs(titles)
    for k in range(1, 60):  # 3k and 5k characters: 75 exactly
        titles = ["a" * (5 * k), "b" * k, "a" * (3 * k)]
        assert _scored_pairs(titles) == {(0, 2)}, k


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab ", min_size=1, max_size=40), min_size=2, max_size=12))
def test_length_window_finds_every_pair_scored_in_full(titles: list[str]) -> None:
    assert _scored_pairs(titles) == _all_pairs(titles)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab :.?!-\u2013\u2014\t")), max_size=16))
def test_subtitle_split_without_the_quick_no_is_the_same(text: str) -> None:
    m = _SUBTITLE.search(text.strip())
    expected = None if m is None or m.start() == 0 else (text[: m.start()], text[m.end() :])
    assert split_subtitle(text) == expected


def test_equal_titles_are_paired_even_when_their_only_words_are_in_thousands_of_titles() -> None:
    """A word in thousands of short titles ("Paper k17") makes a block too big to score
    pair by pair (it took hours): it is skipped, and equal titles are still paired."""
    views = [entry(f"k{i}", f"Paper k{i}", authors=(Name("A.", "", f"Author{i}", ""),)) for i in range(2500)]
    views += [entry("x", "Paper", year=1990), entry("y", "paper.", year=2001)]
    assert pairs(views) == {("x", "y")}


def test_a_resolved_paper_is_the_reason_over_a_title_but_not_over_a_doi() -> None:
    """The editor keeps the pairs the entries' text gives and adds the verdicts' (they
    arrive one by one): the reasons must be those of one whole computation."""
    from citelens.checks.duplicates import text_duplicates

    s2 = "204e3073870fae3d05bcbc2f6a8e263d9b72e776"
    views = [
        entry("a", "Attention is all you need"), entry("b", "Attention is all you need."),
        entry("c", "Deep residual learning", doi="10.1109/CVPR.2016.90"),
        entry("d", "Something else", doi="10.1109/cvpr.2016.90"),
    ]
    resolved = {"a": s2, "b": s2, "c": "x" * 40, "d": "x" * 40}
    got = find_duplicates(views, resolved)
    assert [(p.key_a, p.key_b, p.reason) for p in got] == [("a", "b", "s2"), ("c", "d", "doi")]
    assert find_duplicates(views, resolved, text_duplicates(views)) == got
    assert [(p.key_a, p.key_b, p.reason) for p in find_duplicates(views)] == [
        ("a", "b", "title"), ("c", "d", "doi")]
