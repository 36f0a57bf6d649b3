"""The same bibliography gets the same verdicts whatever source answers first.

The real scheduler runs against the fake APIs with a random latency per source and the
entries in a random priority order; every verdict (its JSON: status, summary, match,
discrepancies, audit) must equal the one of a run where every source answers at once.
Two entries are written so that answer order used to decide them: a title two sources
know as different versions (Crossref the 2020 journal paper, OpenAlex the 2019 preprint),
and an entry whose DOI only Crossref knows while arXiv knows its arXiv id (when arXiv
answered before OpenAlex's miss, Crossref was never asked and the DOI "resolved nowhere").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status
from tests.fakes.scholarly import ScholarlyFake, fast_rates

TITLE = "Scheduling Scholarly Answers in Plan Order for Citation Checks"
AUTHORS = ["Mara Lindqvist", "Tobias Renner"]
#: The journal paper, only Crossref (and doi.org) know it.
JOURNAL = {"title": TITLE, "authors": AUTHORS, "year": 2020, "venue": "Journal of Reproducible Tooling",
           "doi": "10.5555/planorder.2020", "sources": ["crossref", "doi"], "type": "journal-article"}
#: Its preprint, a year earlier, only OpenAlex knows it.
PREPRINT = {"title": TITLE, "authors": AUTHORS, "year": 2019, "venue": "arXiv",
            "sources": ["openalex"], "type": "posted-content", "doi": "10.5555/planorder.preprint"}
#: A paper whose DOI only Crossref knows, and arXiv its arXiv id.
CHAIN = {"title": "Identifier Chains That Do Not Read Each Other", "authors": ["Ines Okafor"],
         "year": 2021, "venue": "Journal of Reproducible Tooling", "doi": "10.5555/chainrace.2021",
         "arxiv": "2101.00002", "sources": ["crossref", "doi", "arxiv"], "type": "journal-article"}

BIB = r"""
@article{versions, title = {Scheduling Scholarly Answers in Plan Order for Citation Checks},
  author = {Lindqvist, Mara and Renner, Tobias}, journal = {Journal of Reproducible Tooling},
  year = {2020}}
@article{chains, title = {Identifier Chains That Do Not Read Each Other}, author = {Okafor, Ines},
  journal = {Journal of Reproducible Tooling}, year = {2021}, doi = {10.5555/chainrace.2021},
  eprint = {2101.00002}}
@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others}, journal = {Nature Methods}, year = {2020},
  doi = {10.1038/s41592-019-0686-2}}
@inproceedings{vaswani2017, title = {Attention is All you Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and
            Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems}, year = {2017},
  eprint = {1706.03762}}
@article{hunter2007, title = {Matplotlib: A {2D} Graphics Environment}, author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering}, year = {2007}}
@article{makris2014,
  title = {Developing functional musculoskeletal tissues through hypoxia and lysyl
           oxidase-induced collagen cross-linking},
  author = {Makris, Eleftherios A. and Responte, Donald J. and Paschos, Nikolaos K. and
            Hu, Jerry C. and Athanasiou, Kyriacos A.},
  journal = {Proceedings of the National Academy of Sciences}, year = {2014}, pmid = {25349395}}
@article{invented, title = {Quantum Gradient Descent for Citation Graph Entanglement},
  author = {Moreau, Lucien and Patel, Anika}, journal = {Nature Methods}, year = {2022},
  doi = {10.1038/s41592-022-99999-9}}
"""
SOURCES = ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi")
LATENCIES = (0.0, 0.02, 0.08)


def _views() -> list[Any]:
    return [entry_view(e) for e in parse_bib(BIB, "refs.bib").entries]


def _verdicts(fake: ScholarlyFake, order: list[int], cache_dir: Path | None = None,
              *, cached: bool = True, **settings: Any) -> dict[str, dict[str, Any]]:
    """Each entry's verdict JSON (``cached`` False: without the audit's cached flags)."""
    views = _views()

    async def run() -> dict[str, dict[str, Any]]:
        s = fake.settings(**settings)
        cache = VerificationCache(cache_dir)
        try:
            async with Sources.from_settings(s, lambda _m: None, rates=fast_rates()) as sources:
                got = await verify_entries([views[i] for i in order], s, sources=sources, cache=cache)
        finally:
            cache.close()
        out = {}
        for key, v in got.items():
            data = v.to_json()
            data.pop("checked_at", None)
            if not cached:
                for step in data.get("audit", []):
                    step.pop("cached", None)
            out[key] = data
        return out

    return asyncio.run(run())


@pytest.fixture(scope="module")
def fake() -> Iterator[ScholarlyFake]:
    with ScholarlyFake() as f:
        for paper in (JOURNAL, PREPRINT, CHAIN):
            f.add_paper(paper)
        yield f


@pytest.fixture(scope="module")
def reference(fake: ScholarlyFake) -> dict[str, dict[str, Any]]:
    return _verdicts(fake, list(range(len(_views()))))


def test_the_reference_run_reads_the_plan(reference: dict[str, dict[str, Any]]) -> None:
    # Crossref's journal record is read before OpenAlex's preprint: no year warning.
    assert reference["versions"]["status"] == Status.VERIFIED.value, reference["versions"]["summary"]
    # The DOI went down its own chain to Crossref, whatever arXiv said meanwhile.
    assert reference["chains"]["status"] == Status.VERIFIED.value, reference["chains"]["summary"]
    assert reference["invented"]["status"] == Status.NOT_FOUND.value


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(latency=st.tuples(*(st.sampled_from(LATENCIES) for _ in SOURCES)),
       order=st.permutations(range(len(_views()))))
def test_the_verdicts_do_not_depend_on_who_answers_first(
        fake: ScholarlyFake, reference: dict[str, dict[str, Any]],
        latency: tuple[float, ...], order: list[int]) -> None:
    for source, seconds in zip(SOURCES, latency, strict=True):
        fake.set_latency(source, seconds)
    try:
        got = _verdicts(fake, list(order))
    finally:
        for source in SOURCES:
            fake.set_latency(source, 0.0)
    for key, want in reference.items():
        assert got[key] == want, (key, dict(zip(SOURCES, latency, strict=True)))


def test_a_verdict_read_back_from_the_cache_is_the_one_its_answers_give(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    """The cache holds answers, and a warm run reads them in plan order: online or offline,
    its verdicts are the cold run's, whatever order the cold run's answers came in."""
    for source, seconds in zip(SOURCES, (0.08, 0.0, 0.02, 0.0, 0.08, 0.0), strict=True):
        fake.set_latency(source, seconds)
    order = list(reversed(range(len(_views()))))
    try:
        cold = _verdicts(fake, order, tmp_path / "cache", cached=False)
    finally:
        for source in SOURCES:
            fake.set_latency(source, 0.0)
    fake.clear_log()
    warm = _verdicts(fake, list(range(len(order))), tmp_path / "cache", cached=False)
    offline = _verdicts(fake, order, tmp_path / "cache", cached=False, offline=True)
    assert fake.count() == 0  # every answer came from the cache
    for key, want in cold.items():
        assert warm[key] == want, key
        assert offline[key] == want, key
