"""Politeness towards the scholarly hosts: circuit breaker, adaptive spacing, one S2 request
per title that nobody has."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources import crossref, s2
from citelens.sources.records import Outcome
from citelens.sources.transport import BREAKER_THRESHOLD, Rate, Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

DOI = "DOI:10.1073/pnas.1414271111"
KEY = "s2-secret-key-0123456789"


def _sources(fake: ScholarlyFake, log: list[str], **settings: object) -> Sources:
    return Sources.from_settings(fake.settings(**settings), log.append, rates=fast_rates())


async def test_breaker_stops_asking_a_host_after_refusals_in_a_row(scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    log: list[str] = []
    fake.set_mode("s2", "429")
    async with _sources(fake, log, max_retries=3, s2_api_key=KEY) as src:
        first = await s2.get_paper(src.s2, DOI)  # 4 answers of 429
        second = await s2.get_paper(src.s2, DOI)  # the 5th trips the breaker
        sent = fake.count("s2")
        third = await s2.get_paper(src.s2, DOI)
        assert first.outcome is Outcome.FAILED
        assert second.outcome in (Outcome.FAILED, Outcome.UNAVAILABLE)
        assert sent == BREAKER_THRESHOLD
        assert third.outcome is Outcome.UNAVAILABLE
        assert fake.count("s2") == sent  # no request once the breaker is open
        assert "in a row" in third.detail and KEY not in third.detail
        said = [line for line in log if "in a row" in line]
        assert said == [
            "Semantic Scholar answered HTTP 429 or 5xx 5 times in a row; not asked again in this run"
        ]
        # A user's retry (or the editor's outage retry) closes it again.
        fake.set_mode("s2", "ok")
        src.reset_availability()
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FOUND
    assert not any(KEY in line for line in log)


async def test_a_good_answer_in_between_keeps_the_breaker_closed(scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    log: list[str] = []
    async with _sources(fake, log, max_retries=0) as src:
        for _ in range(3):
            fake.set_mode("crossref", "5xx", count=BREAKER_THRESHOLD - 1)
            for _ in range(BREAKER_THRESHOLD - 1):
                lk = await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
                assert lk.outcome is Outcome.FAILED and "503" in lk.detail
            lk = await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
            assert lk.outcome is Outcome.FOUND
        fake.set_mode("crossref", "5xx")
        for _ in range(BREAKER_THRESHOLD + 3):
            await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
    assert fake.count("crossref") == 3 * BREAKER_THRESHOLD + BREAKER_THRESHOLD
    assert [line for line in log if "in a row" in line] == [
        "Crossref answered HTTP 429 or 5xx 5 times in a row; not asked again in this run"
    ]


async def test_a_429_widens_the_spacing_of_later_requests(
        scholarly_server: ScholarlyFake, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a 429 the spacing of later request starts widens to 1.5x the 0.1 s interval.
    The starts are read where the client takes its slots (the fake's clock, in its own
    thread, saw them bunched on a loaded machine)."""
    fake = scholarly_server
    fake.set_mode("crossref", "429", count=1, retry_after="0")
    rates = {**fast_rates(), "crossref": Rate(0.1, 1)}
    slots: list[float] = []
    async with Sources.from_settings(fake.settings(), rates=rates) as src:
        take_slot = src.crossref._wait_for_slot

        async def recorded() -> None:
            await take_slot()
            slots.append(time.monotonic())

        monkeypatch.setattr(src.crossref, "_wait_for_slot", recorded)
        for _ in range(3):
            lk = await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
            assert lk.outcome is Outcome.FOUND
    assert fake.count("crossref") == 4  # the 429, its retry, two more
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    # the requests after the 429 wait 1.5x the 0.1 s spacing (narrowed 5% by each answer)
    assert len(gaps) == 3 and gaps[0] >= 0.099, gaps
    assert gaps[1] >= 0.149 and gaps[2] >= 0.15 / 1.05 - 0.001, gaps


TITLE_ONLY = r"""@article{llama2021,
  title = {Hyperbolic Entanglement of Quantum Llamas in Gravitational Pastures},
  author = {Doe, Jane and Roe, Richard}, journal = {Nature}, year = {2021}}
"""


async def _s2_title_requests(fake: ScholarlyFake, tmp: Path) -> tuple[Status, list[str]]:
    views = [entry_view(e) for e in parse_bib(TITLE_ONLY, "refs.bib").entries]
    settings = fake.settings()
    cache = VerificationCache(tmp)
    try:
        async with Sources.from_settings(settings, rates=fast_rates()) as src:
            result = await verify_entries(views, settings, sources=src, cache=cache)
    finally:
        cache.close()
    return result["llama2021"].status, [r["path"] for r in fake.requests("s2")]


async def test_a_title_nobody_has_costs_one_s2_request(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    status, paths = await _s2_title_requests(scholarly_server, tmp_path)
    assert status is Status.NOT_FOUND
    assert paths == ["/paper/search/match"]


async def test_s2_search_is_the_fallback_when_other_searches_fail(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    scholarly_server.set_mode("crossref", "5xx")
    scholarly_server.set_mode("openalex", "5xx")
    status, paths = await _s2_title_requests(scholarly_server, tmp_path)
    assert status is Status.UNVERIFIED  # a source failed: never NOT_FOUND
    assert sorted(paths) == ["/paper/search", "/paper/search/match"]
