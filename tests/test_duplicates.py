"""Entries with different keys that describe one paper."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from citelens.checks.duplicates import DuplicatePair, find_duplicates
from citelens.core.model import EntryView, Name


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


def test_scales_without_comparing_all_pairs() -> None:
    """3,000 generated titles from a small vocabulary, plus two planted duplicates."""
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
    start = time.perf_counter()
    found = pairs(views)
    elapsed = time.perf_counter() - start
    assert ("dupA", "dupB") in found
    assert all(a.startswith("dup") for a, _ in found), found
    assert elapsed < 5.0
