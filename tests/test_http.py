"""Scheduling behaviour of the host clients against the fake scholarly server."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from citelens.sources import crossref, openalex, s2, transport
from citelens.sources.records import Outcome
from citelens.sources.transport import Rate, Sources, redact_url
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture
from tests.harness import free_port

DOI = "DOI:10.1073/pnas.1414271111"


def sources(fake: ScholarlyFake, log: list[str] | None = None, **settings: object) -> Sources:
    return Sources.from_settings(fake.settings(**settings), (log if log is not None else []).append,
                                 rates=fast_rates())


async def test_429_twice_then_success_is_found(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "429", count=2)
    async with sources(scholarly_server) as src:
        lookup = await s2.get_paper(src.s2, DOI)
    assert lookup.outcome is Outcome.FOUND
    assert scholarly_server.count("s2") == 3
    assert src.s2.requests == 3


async def test_429_storm_fails_after_max_retries(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "429")
    async with sources(scholarly_server, max_retries=3) as src:
        lookup = await s2.get_paper(src.s2, DOI)
        assert lookup.outcome is Outcome.FAILED
        assert "429" in lookup.detail
        assert scholarly_server.count("s2") == 4  # first try + 3 retries
        # a 429 storm is not an outage: the next call asks again
        scholarly_server.set_mode("s2", "ok")
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FOUND


async def test_retry_after_header_is_honoured(
        scholarly_server: ScholarlyFake, monkeypatch: pytest.MonkeyPatch) -> None:
    """The retry waits what Retry-After asks (0.3 s), not the 5 s default: the waits the
    transport asks for are recorded (how long it took is benchmarks/bench_waits.py's)."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: object) -> object:
        waits.append(delay)
        return await real_sleep(delay, *args)

    monkeypatch.setattr(transport.asyncio, "sleep", sleep)
    scholarly_server.set_mode("crossref", "429", count=1, retry_after="0.3")
    async with sources(scholarly_server, retry_backoff_s=5.0) as src:
        lookup = await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
    assert lookup.outcome is Outcome.FOUND
    assert [r["status"] for r in scholarly_server.requests("crossref")] == [429, 200]
    assert waits and 0 < max(waits) <= 0.3, waits  # what was left of 0.3 s, never 5 s


async def test_5xx_is_retried_then_fails(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "5xx")
    log: list[str] = []
    async with sources(scholarly_server, log, max_retries=2) as src:
        lookup = await s2.get_paper(src.s2, DOI)
        assert lookup.outcome is Outcome.FAILED
        assert "503 after 2 retries" in lookup.detail
        assert scholarly_server.count("s2") == 3  # first try + 2 retries
        assert log == []  # a server error is not an outage
        scholarly_server.set_mode("s2", "ok")
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FOUND


async def test_one_5xx_is_cured_by_a_retry(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("crossref", "5xx", count=1, retry_after="0.05")
    async with sources(scholarly_server, retry_backoff_s=5.0) as src:
        lookup = await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
    assert lookup.outcome is Outcome.FOUND
    assert [r["status"] for r in scholarly_server.requests("crossref")] == [503, 200]


async def test_a_connection_reset_is_retried_and_said_once(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("openalex", "reset", count=1)
    log: list[str] = []
    async with sources(scholarly_server, log) as src:
        lookup = await openalex.get_by_doi(src.openalex, "10.1073/pnas.1414271111")
        assert lookup.outcome is Outcome.FOUND
        assert src.openalex.available  # not an outage: the retry answered
    assert len(log) == 1 and "answered on a retry" in log[0], log


async def test_stall_fails_within_the_timeout(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "stall", stall_s=10)
    log: list[str] = []
    async with sources(scholarly_server, log, request_timeout_s=0.3) as src:
        lookup = await s2.get_paper(src.s2, DOI)
    assert lookup.outcome is Outcome.FAILED  # the fake stalls 10 s: the 0.3 s timeout ended it
    assert log == ["Semantic Scholar unavailable: no answer within 0.3 s"]


async def test_connection_refused_makes_source_unavailable_once() -> None:
    port = free_port()  # nothing listens there
    log: list[str] = []
    from citelens.core.settings import Settings

    settings = Settings(source_urls={"s2_api_url": f"http://127.0.0.1:{port}/s2"}, request_timeout_s=2.0,
                        retry_backoff_s=0.01)
    async with Sources.from_settings(settings, log.append, rates=fast_rates()) as src:
        first = await s2.get_paper(src.s2, DOI)
        later = await asyncio.gather(*(s2.get_paper(src.s2, DOI) for _ in range(3)))
        batch = await s2.get_batch(src.s2, [DOI, "ARXIV:1706.03762"])
    assert first.outcome is Outcome.FAILED
    assert [x.outcome for x in later] == [Outcome.UNAVAILABLE] * 3
    assert {x.outcome for x in batch.values()} == {Outcome.UNAVAILABLE}
    assert src.s2.requests == 2  # a refused connection is retried once, quickly
    assert len(log) == 1 and log[0].startswith("Semantic Scholar unavailable: ")


async def test_down_source_comes_back_after_reset(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "down")
    log: list[str] = []
    async with sources(scholarly_server, log) as src:
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FAILED
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.UNAVAILABLE
        assert scholarly_server.count("s2") == 4  # first try + 3 retries, then no more
        scholarly_server.set_mode("s2", "up")
        src.reset_availability()
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FOUND
        # other hosts were never affected
        assert (await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")).outcome \
            is Outcome.FOUND
    assert len(log) == 1


async def test_unavailability_expires(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "reset", count=4)  # the first try and its 3 retries
    settings = scholarly_server.settings()
    async with Sources.from_settings(settings, rates=fast_rates(), unavailable_for_s=0.2) as src:
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FAILED
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.UNAVAILABLE
        await asyncio.sleep(0.25)
        assert (await s2.get_paper(src.s2, DOI)).outcome is Outcome.FOUND


async def test_rate_limiter_spaces_request_starts(
        scholarly_server: ScholarlyFake, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request starts when the limiter gives it a slot, and slots are 0.1 s apart.
    The slots are read where the client takes them (the fake's clock, in its own thread,
    saw requests bunched on a loaded machine): a slot is given no earlier than the last
    one's start plus the interval, whatever the load."""
    rates = {**fast_rates(), "s2": Rate(0.1, 4)}
    slots: list[float] = []
    async with Sources.from_settings(scholarly_server.settings(), rates=rates) as src:
        take_slot = src.s2._wait_for_slot

        async def recorded() -> None:
            await take_slot()
            slots.append(time.monotonic())

        monkeypatch.setattr(src.s2, "_wait_for_slot", recorded)
        await asyncio.gather(*(s2.get_paper(src.s2, DOI) for _ in range(5)))
    assert scholarly_server.count("s2") == 5 and len(slots) == 5
    gaps = [b - a for a, b in itertools.pairwise(slots)]
    assert min(gaps) >= 0.099, gaps


async def test_default_rates_follow_settings(scholarly_server: ScholarlyFake) -> None:
    plain = Sources.from_settings(scholarly_server.settings(s2_requests_per_second=1.0))
    polite = Sources.from_settings(scholarly_server.settings(mailto="me@example.org"))
    try:
        # S2 is paced 10% below its nominal 1/s: requests do not arrive as evenly as they leave
        assert plain.s2.rate.min_interval_s == pytest.approx(1.1)
        # every host keeps the same margin under its documented rate (arXiv: 3 s -> 3.3 s)
        assert plain.crossref.rate.min_interval_s == pytest.approx(0.22)
        assert polite.crossref.rate.min_interval_s == pytest.approx(0.11)
        assert polite.crossref.rate.max_concurrency == 3
        assert plain.arxiv.rate.min_interval_s == pytest.approx(3.3)
    finally:
        await plain.aclose()
        await polite.aclose()


async def test_fake_rate_enforcement_is_respected_by_the_limiter(
    scholarly_server: ScholarlyFake,
) -> None:
    scholarly_server.set_rate_limit("openalex", per_second=10, max_concurrency=1)
    # the limiter's 0.15 s against the fake's 0.1 s: room for a request sent on time to be
    # delayed on a loaded machine (10 ms was not: the fake saw two starts 0.09 s apart)
    rates = {**fast_rates(), "openalex": Rate(0.15, 1)}
    async with Sources.from_settings(scholarly_server.settings(), rates=rates) as src:
        results = await asyncio.gather(
            *(openalex.get_by_doi(src.openalex, "10.1073/pnas.1414271111") for _ in range(4)))
    assert [r.outcome for r in results] == [Outcome.FOUND] * 4
    assert [r["status"] for r in scholarly_server.requests("openalex")] == [200] * 4


async def test_offline_makes_no_request(scholarly_server: ScholarlyFake) -> None:
    async with sources(scholarly_server, offline=True) as src:
        lookup = await s2.get_paper(src.s2, DOI)
    assert lookup.outcome is Outcome.UNAVAILABLE
    assert scholarly_server.count() == 0


async def test_garbage_body_is_failed_not_an_exception(scholarly_server: ScholarlyFake) -> None:
    async with sources(scholarly_server) as src:
        scholarly_server.set_mode("s2", "malformed", count=1)
        truncated = await s2.get_paper(src.s2, DOI)
        scholarly_server.set_mode("s2", "html", count=1)
        html = await s2.search_match(src.s2, "Attention is all you need")
    assert truncated.outcome is Outcome.FAILED and "not JSON" in truncated.detail
    assert html.outcome is Outcome.FAILED and "text/html" in html.detail


async def test_no_secret_in_details_or_logs_even_when_echoed(
    scholarly_server: ScholarlyFake,
) -> None:
    key, oa_key, mail = "s2-SECRET-key-123", "oa-SECRET-456", "secret.person@example.org"
    log: list[str] = []
    async with sources(scholarly_server, log, s2_api_key=key, openalex_api_key=oa_key,
                       mailto=mail) as src:
        for source in ("s2", "openalex", "crossref"):
            scholarly_server.set_mode(source, "echo", status=403)
        lookups = [
            await s2.get_paper(src.s2, DOI),
            await openalex.get_by_doi(src.openalex, "10.1073/pnas.1414271111"),
            await crossref.get_work(src.crossref, "10.1073/pnas.1414271111"),
        ]
        for source in ("s2", "openalex", "crossref"):
            scholarly_server.set_mode(source, "5xx", status=500)
        lookups.append(await s2.get_paper(src.s2, DOI))
        for source in ("s2", "openalex"):
            scholarly_server.set_mode(source, "down")
        lookups.append(await s2.get_paper(src.s2, DOI))
        lookups.append(await openalex.get_by_doi(src.openalex, "10.1073/pnas.1414271111"))
        lookups.append(await openalex.get_by_doi(src.openalex, "10.1073/pnas.1414271111"))
    # the keys did reach the server, in the header / parameters the APIs expect
    sent = scholarly_server.requests()
    assert sent[0]["headers"]["x-api-key"] == key and key not in sent[0]["raw_path"]
    assert sent[1]["query"]["api_key"] == oa_key
    texts = [lk.detail for lk in lookups] + log + [str(lk.to_json()) for lk in lookups]
    assert all(lk.outcome in (Outcome.FAILED, Outcome.UNAVAILABLE) for lk in lookups)
    assert len(log) == 2
    for secret in (key, oa_key, mail):
        assert not any(secret in t for t in texts), secret


def test_redact_url_drops_secret_parameters() -> None:
    url = "https://api.openalex.org/works?filter=doi:10.1/x&api_key=K&mailto=a@b.c&per-page=5"
    out = redact_url(url)
    assert "api_key" not in out and "mailto" not in out and "a@b.c" not in out
    assert "filter=doi" in out and "per-page=5" in out


async def test_concurrent_failures_log_the_outage_once(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("s2", "stall", stall_s=10)
    log: list[str] = []
    settings = scholarly_server.settings(request_timeout_s=0.3)
    rates = {**fast_rates(), "s2": Rate(0.0, 3)}
    async with Sources.from_settings(settings, log.append, rates=rates) as src:
        results = await asyncio.gather(*(s2.get_paper(src.s2, DOI) for _ in range(3)))
    assert [r.outcome for r in results] == [Outcome.FAILED] * 3
    # Each was sent once; on a loaded machine the fake may read a request only after the
    # client has given up on it, so wait a little for it to be counted.
    for _ in range(100):
        if scholarly_server.count("s2") >= 3:
            break
        await asyncio.sleep(0.05)
    assert scholarly_server.count("s2") == 3
    assert log == ["Semantic Scholar unavailable: no answer within 0.3 s"]


async def test_a_request_that_leaves_late_is_spaced_from_when_it_left(
    scholarly_server: ScholarlyFake,
) -> None:
    """Crossref's public pool counts the gap between requests: one that left late (the loop
    was busy between its slot and its headers) must not reach the host just before the next
    one, booked on time (a 429 in bench_verify on a quiet machine)."""
    rates = {**fast_rates(), "crossref": Rate(0.2, 1)}
    busy = []

    async def loop_busy_once(_host: str, _interval: float) -> None:
        if not busy:
            busy.append(True)
            time.sleep(0.15)  # noqa: ASYNC251 — the loop blocked right after the first slot

    async with Sources.from_settings(scholarly_server.settings(), lambda _m: None, rates=rates) as src:
        src.crossref.shared_pacer = loop_busy_once
        doi = "10.1073/pnas.1414271111"
        await asyncio.gather(crossref.get_work(src.crossref, doi), crossref.get_work(src.crossref, doi))
    t = [r["t"] for r in scholarly_server.requests("crossref")]
    assert len(t) >= 2
    assert t[1] - t[0] >= 0.19, f"the second request reached Crossref {t[1] - t[0]:.3f} s after the first"
