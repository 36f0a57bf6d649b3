"""A source's refusal is a state of the source, said once, and no verdict waits on it.

Against the fake APIs with their 2026 limits (``tests/fakes/scholarly.py``): OpenAlex's
daily budget spent mid-run (the same verdicts as without it, one message with the fix, no
wait, the state remembered by the next run), a challenge page served as HTTP 200 HTML, a 202
with no content, Semantic Scholar's shared pool answering 429 in bursts, and a Retry-After
longer than a run waits. The rules that read one answer are tested on their own at the end.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources import refusal as refusals
from citelens.sources import transport
from citelens.sources.refusal import Refusal, refusal_of
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Verification
from tests.fakes.scholarly import ScholarlyFake, fast_rates

#: Real papers the sources a check can afford hold, and fabrications no source holds.
BIB = r"""
@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others}, journal = {Nature Methods}, year = {2020},
  doi = {10.1038/s41592-019-0686-2}}
@article{hunter2007, title = {Matplotlib: A {2D} Graphics Environment}, author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering}, year = {2007}}
@inproceedings{vaswani2017, title = {Attention is All you Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and
            Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems}, year = {2017}}
@article{fake1, title = {Quantum Gravitational Lensing of Recommender System Embeddings},
  author = {Doe, Jane}, journal = {Journal of Imaginary Results}, year = {2021}}
@article{fake2, title = {A Unified Theory of Cheese Fermentation Dynamics in Transformer Models},
  author = {Roe, Richard}, journal = {Proceedings of Nothing}, year = {2022}}
@article{fake3, title = {Self-Supervised Tax Accounting with Hyperbolic Graph Kernels},
  author = {Poe, Edgar}, journal = {Annals of Fiction}, year = {2020}}
@article{fakedoi, title = {Stochastic Origami Folding of Citation Graphs},
  author = {Moe, Anna}, journal = {Letters in Invention}, year = {2019}, doi = {10.5555/nosuch.2019.42}}
"""
REAL = ("scipy2020", "hunter2007", "vaswani2017")
#: Requests to one host at once (``fast_rates``): those in flight when it refuses are answered.
IN_FLIGHT = 4
FABRICATED = ("fake1", "fake2", "fake3", "fakedoi")


def _views() -> list:
    return [entry_view(e) for e in parse_bib(BIB, "refs.bib").entries]


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Every wait the transport asks for (its pacing, its retries), in seconds."""
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: object) -> object:
        asked.append(delay)
        return await real_sleep(delay, *args)

    monkeypatch.setattr(transport.asyncio, "sleep", sleep)
    yield asked


async def _check(fake: ScholarlyFake, tmp: Path, *, state: Path | None = None, limit: float = 20.0,
                 **settings: object) -> tuple[dict[str, Verification], list[str], Sources]:
    """One verification of BIB against ``fake`` (fresh cache under ``tmp``), bounded in time."""
    logs: list[str] = []
    s = fake.settings(**{"request_timeout_s": 2.0, "retry_backoff_s": 0.01, **settings})
    sources = Sources.from_settings(s, logs.append, rates=fast_rates(), state_dir=state)
    cache = VerificationCache(tmp, logs.append)
    try:
        res = await asyncio.wait_for(
            verify_entries(_views(), s, sources=sources, cache=cache, log=logs.append), limit)
    finally:
        cache.close()
        await sources.aclose()
    return res, [m for m in logs if "requests so far" not in m], sources


def _verdicts(res: dict[str, Verification]) -> dict[str, tuple[Status, str | None]]:
    return {k: (v.status, v.klass) for k, v in res.items()}


async def test_openalex_budget_spent_mid_run_changes_no_verdict_said_once_and_remembered(
        scholarly_server: ScholarlyFake, tmp_path: Path, waits: list[float]) -> None:
    fake = scholarly_server
    unmetered, _, _ = await _check(fake, tmp_path / "c0")
    assert {k: unmetered[k].status for k in REAL} == dict.fromkeys(REAL, Status.VERIFIED)
    assert {k: unmetered[k].status for k in FABRICATED} == dict.fromkeys(FABRICATED, Status.NOT_FOUND)
    # the keyless budget, all but one search spent by others on this IP address
    fake.set_openalex_budget(0.10, 1.0)
    fake.spend_openalex(0.0985)
    fake.clear_log()
    waits.clear()
    state = tmp_path / "state"
    started = time.monotonic()
    metered, said, sources = await _check(fake, tmp_path / "c1", state=state)
    assert _verdicts(metered) == _verdicts(unmetered)
    for v in metered.values():  # "not found in" names the sources that answered
        if v.status is Status.NOT_FOUND and not any(a.source == "openalex" and a.answered
                                                    for a in v.audit):
            assert "OpenAlex" not in v.summary, v.summary
    refused = [r for r in fake.requests("openalex") if r["status"] == 429]
    assert refused, "the budget was not spent mid-run"
    budget_lines = [m for m in said if "OpenAlex" in m]
    assert len(budget_lines) == 1, said
    assert "daily budget is spent (no API key): set `openalexApiKey` / " \
           "`CITELENS_OPENALEX_API_KEY`, free at openalex.org" in budget_lines[0]
    assert sum(waits) <= 1.0, waits  # no Retry-After (hours) waited for
    assert time.monotonic() - started < 15
    assert [o.refusal for o in sources.outs()] == [Refusal.BUDGET]
    # remembered in the cache folder: the next run asks OpenAlex nothing priced
    stored = json.loads((state / "sources.json").read_text())
    assert stored["sources"]["openalex"]["out"]["refusal"] == "budget"
    assert stored["sources"]["openalex"]["budget"]["remaining_usd"] < 0.001  # not a search
    fake.clear_log()
    again, said_again, _ = await _check(fake, tmp_path / "c2", state=state)
    assert _verdicts(again) == _verdicts(unmetered)
    assert [r for r in fake.requests("openalex") if r["cost_usd"] or r["status"] == 429] == []
    assert len([m for m in said_again if "OpenAlex" in m]) == 1, said_again


async def test_a_key_budget_is_remembered_without_the_key(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    fake = scholarly_server
    key = "oa-SECRET-key-4242"
    fake.set_openalex_budget(0.10, 0.0015)  # a key with about one search left
    state = tmp_path / "state"
    res, said, _ = await _check(fake, tmp_path / "c1", state=state, openalex_api_key=key)
    assert {k: res[k].status for k in FABRICATED} == dict.fromkeys(FABRICATED, Status.NOT_FOUND)
    lines = [m for m in said if "OpenAlex" in m]
    assert len(lines) == 1 and "with your API key" in lines[0], said
    text = (state / "sources.json").read_text()
    assert key not in text and "SECRET" not in text
    assert all(key not in m for m in said)
    # another key is not held back by what the first one spent
    fake.clear_log()
    await _check(fake, tmp_path / "c2", state=state, openalex_api_key="oa-other-key-777")
    assert any(r["cost_usd"] for r in fake.requests("openalex"))


async def test_a_challenge_page_as_http_200_is_never_a_miss(
        scholarly_server: ScholarlyFake, tmp_path: Path, waits: list[float]) -> None:
    """Crossref (which "not found" needs) serves dblp's proof-of-work page: asked once, said
    once, the real papers verified by the others, the fabrications unverified, never not found."""
    fake = scholarly_server
    fake.set_mode("crossref", "challenge", kind="anubis")
    res, said, sources = await _check(fake, tmp_path)
    assert {k: res[k].status for k in REAL} == dict.fromkeys(REAL, Status.VERIFIED)
    assert {k: res[k].status for k in FABRICATED} == dict.fromkeys(FABRICATED, Status.UNVERIFIED)
    assert "could not ask Crossref" in res["fake1"].summary
    assert fake.count("crossref") <= IN_FLIGHT  # then never asked again
    lines = [m for m in said if "Crossref" in m]
    assert len(lines) == 1 and "challenge page" in lines[0] and "not a bot" in lines[0], said
    assert [o.refusal for o in sources.outs()] == [Refusal.CHALLENGE]
    assert sum(waits) <= 1.0, waits


async def test_a_challenge_page_where_xml_belongs_is_never_an_empty_feed(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    fake = scholarly_server
    fake.add_paper({"title": "Only arXiv Knows This Preprint About Citation Checkers",
                    "authors": ["Ana Sousa"], "year": 2023, "arxiv": "2301.99999",
                    "sources": ["arxiv"]})
    fake.set_mode("arxiv", "challenge", kind="cloudflare")
    logs: list[str] = []
    s = fake.settings(request_timeout_s=2.0, retry_backoff_s=0.01)
    bib = parse_bib("@misc{ax, title={Only arXiv Knows This Preprint About Citation Checkers}, "
                    "author={Sousa, Ana}, year={2023}, eprint={2301.99999}}", "x.bib")
    async with Sources.from_settings(s, logs.append, rates=fast_rates()) as sources:
        res = await verify_entries([entry_view(e) for e in bib.entries], s, sources=sources,
                                   cache=VerificationCache(tmp_path), log=logs.append)
    assert res["ax"].status is Status.UNVERIFIED, res["ax"].summary
    assert "arXiv" in res["ax"].summary and "challenge page" in res["ax"].summary


async def test_a_202_with_no_content_puts_the_source_out_once(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """doi.org answering 202 (a bot check): out after one request, said once; a DOI only it
    could resolve is unverified, never not found."""
    fake = scholarly_server
    fake.add_paper({"title": "Reference Measurements of Citation Checker Faults",
                    "authors": ["Ingrid Halvorsen"], "year": 2021, "doi": "10.5281/zenodo.7654321",
                    "sources": ["doi"], "type": "dataset"})
    fake.set_mode("doi", "accepted")
    logs: list[str] = []
    s = fake.settings(request_timeout_s=2.0, retry_backoff_s=0.01)
    bib = parse_bib("@misc{z1, title={Reference Measurements of Citation Checker Faults}, author="
                    "{Halvorsen, Ingrid}, year={2021}, doi={10.5281/zenodo.7654321}}\n"
                    "@misc{z2, title={Another Dataset Nobody Has Heard Of At All}, author={X, Y},"
                    " year={2021}, doi={10.5281/zenodo.1111111}}", "x.bib")
    async with Sources.from_settings(s, logs.append, rates=fast_rates()) as sources:
        res = await verify_entries([entry_view(e) for e in bib.entries], s, sources=sources,
                                   cache=VerificationCache(tmp_path), log=logs.append)
        outs = sources.outs()
    assert {k: v.status for k, v in res.items()} == {"z1": Status.UNVERIFIED, "z2": Status.UNVERIFIED}
    assert fake.count("doi") <= IN_FLIGHT
    assert [o.refusal for o in outs] == [Refusal.BOT_CHECK]
    assert len([m for m in logs if "doi.org" in m and "202" in m]) == 1, logs


async def test_a_publisher_page_answering_202_fails_that_doi_only(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """doi.org sends one DOI to a publisher's page that answers 202: that lookup fails (said
    once, naming the site); doi.org stays in and resolves the next DOI."""
    from citelens.sources import doi

    fake = scholarly_server
    fake.add_paper({"title": "A Paper Behind a Bot Check", "authors": ["Ada Lovelace"],
                    "year": 2021, "doi": "10.1109/bot.2021.1", "landing_status": 202})
    logs: list[str] = []
    async with Sources.from_settings(fake.settings(), logs.append, rates=fast_rates()) as src:
        blocked = await doi.resolve_csl(src.doi, "10.1109/bot.2021.1")
        again = await doi.resolve_csl(src.doi, "10.1109/bot.2021.1")
        fine = await doi.resolve_csl(src.doi, "10.1038/s41592-019-0686-2")
        assert src.outs() == []
    assert blocked.outcome.value == "failed" and "202" in blocked.detail
    assert again.outcome.value == "failed" and fine.outcome.value == "found"
    assert len([m for m in logs if "202" in m]) == 1, logs


async def test_semantic_scholar_shared_pool_bursts_are_ridden_out(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    fake = scholarly_server
    plain, _, _ = await _check(fake, tmp_path / "c0")
    fake.set_s2_pool(2, 5)  # keyless: 2 of every 5 calls answer 429
    bursty, said, sources = await _check(fake, tmp_path / "c1")
    assert _verdicts(bursty) == _verdicts(plain)
    assert any(r["status"] == 429 for r in fake.requests("s2"))
    assert sources.outs() == [] and not [m for m in said if "Semantic Scholar" in m]


async def test_semantic_scholar_shared_pool_refusing_everything_is_said_once_with_the_fix(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    fake = scholarly_server
    fake.set_s2_pool(1000, 1000)  # the shared pool refuses every keyless call
    res, said, sources = await _check(fake, tmp_path, max_retries=2)
    assert {k: res[k].status for k in ("scipy2020", "hunter2007")} == {
        "scipy2020": Status.VERIFIED, "hunter2007": Status.VERIFIED}
    assert all(res[k].status is Status.UNVERIFIED for k in FABRICATED)  # S2 is needed
    lines = [m for m in said if "Semantic Scholar" in m]
    assert len(lines) == 1 and "`s2ApiKey` / `S2_API_KEY`" in lines[0], said
    assert [o.refusal for o in sources.outs()] == [Refusal.BREAKER]


async def test_a_long_retry_after_is_not_waited_for(
        scholarly_server: ScholarlyFake, tmp_path: Path, waits: list[float]) -> None:
    """Crossref asks to wait two minutes: out until then (no wait), said once; the entries
    it would have answered go on to the other sources."""
    fake = scholarly_server
    fake.set_mode("crossref", "429", retry_after=120)
    res, said, sources = await _check(fake, tmp_path)
    assert {k: res[k].status for k in REAL} == dict.fromkeys(REAL, Status.VERIFIED)
    assert all(res[k].status is Status.UNVERIFIED for k in FABRICATED)
    assert fake.count("crossref") <= IN_FLIGHT
    assert sum(waits) <= 1.0, waits
    [out] = sources.outs()
    assert out.refusal is Refusal.WAIT and out.until is not None and out.until - time.time() > 100
    assert len([m for m in said if "Crossref" in m]) == 1, said


# ---------------------------------------------------------------------- citelens sources


async def test_citelens_sources_says_each_sources_state_never_a_key(
        scholarly_server: ScholarlyFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from citelens.cli.main import main

    fake = scholarly_server
    fake.set_openalex_budget(0.10, 1.0)
    fake.spend_openalex(0.10)
    cache = tmp_path / "cache"
    await _check(fake, tmp_path / "c1", state=cache)  # learns the budget is spent
    for name, value in fake.env(cache=cache).items():
        monkeypatch.setenv(name, value)
    key = "s2-SECRET-key-31337"
    monkeypatch.setenv("S2_API_KEY", key)
    assert await asyncio.to_thread(main, ["sources", "--json"]) == 0
    states = {s["source"]: s for s in json.loads(capsys.readouterr().out)}
    assert states["openalex"]["out"] and states["openalex"]["key"] == "not set"
    assert states["openalex"]["last_refusal"]["refusal"] == "budget"
    assert states["openalex"]["budget"]["remaining_usd"] == 0
    assert states["s2"]["key"] == "set" and not states["s2"]["out"]
    assert await asyncio.to_thread(main, ["sources", "--check"]) == 0
    text = capsys.readouterr().out
    assert key not in text and "SECRET" not in text
    assert "OpenAlex's daily budget is spent (no API key)" in text
    assert "checked now: answers (HTTP 200" in text  # a free lookup still answers
    assert len(fake.requests("s2")) >= 1 and fake.requests("s2")[-1]["headers"]["x-api-key"] == key


# ---------------------------------------------------------------------- the editor


@pytest.mark.parametrize("preset", ["visual-studio-code"])
async def test_the_editor_shows_a_spent_budget_once_and_still_says_not_found(
        preset: str, scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    from tests.lsp_session import diagnostics, open_doc, session, uri, wait_for

    fake = scholarly_server
    fake.set_openalex_budget(0.10, 1.0)
    fake.spend_openalex(0.10)  # others on this IP address spent today's keyless budget
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    tex = folder / "paper.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\n"
                   "Plots \\cite{hunter2007}, lensing \\cite{fake1} and cheese \\cite{fake2}.\n"
                   "\\bibliography{refs}\\end{document}\n", encoding="utf-8")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    async with session(preset, folder, env=fake.env(cache=tmp_path / "cache"),
                       settings=settings) as client:
        open_doc(client, tex)
        bib_uri = uri(folder / "refs.bib")
        found = await diagnostics(client, bib_uri, lambda ds: {"fake1", "fake2"} <= {
            (d.data or {}).get("key") for d in ds if d.code == "NOT_FOUND" and isinstance(d.data, dict)},
            timeout=30)
        assert not [d for d in found if d.code == "UNVERIFIED"]
        await wait_for(lambda: any("OpenAlex" in m.message for m in client.messages), 10, "a notice")
        await asyncio.sleep(0.5)
        shown = [m.message for m in client.messages if "OpenAlex" in m.message]
        logged = [m.message for m in client.log_messages if "daily budget" in m.message]
    assert len(shown) == 1 and "`openalexApiKey`" in shown[0], shown
    assert len(logged) == 1, logged


# ---------------------------------------------------------------------- one answer


def _h(**headers: str) -> dict[str, str]:
    return {k.replace("_", "-").lower(): v for k, v in headers.items()}


def test_what_one_answer_says_about_its_source() -> None:
    now = 1_800_000_000.0
    budget = json.dumps({"error": "Rate limit exceeded", "message": "Insufficient budget. This "
                         "request costs $0.001 but you only have $0 remaining."}).encode()
    spent = refusal_of(429, _h(content_type="application/json", retry_after="36000",
                               x_ratelimit_remaining_usd="0", x_ratelimit_cost_required_usd="0.001",
                               x_ratelimit_limit_usd="0.1", x_ratelimit_reset="36000"),
                       budget, expects="json", keyed=False, now=now)
    assert spent is not None and spent.refusal is Refusal.BUDGET and spent.until == now + 36000
    assert "$0 of $0.1 left" in spent.detail
    # OpenAlex's per-second limit and S2's pool are throttling, retried, not refusals
    per_second = json.dumps({"error": "Rate limit exceeded", "message": "Rate limit exceeded: 100 "
                             "requests per second. Please slow down."}).encode()
    assert refusal_of(429, _h(retry_after="1"), per_second, expects="json", keyed=False, now=now) is None
    assert refusal_of(429, {}, b'{"message": "Too Many Requests.", "code": "429"}', expects="json",
                      keyed=False, now=now) is None
    wait = refusal_of(429, _h(retry_after="120"), b"", expects="json", keyed=False, now=now)
    assert wait is not None and wait.refusal is Refusal.WAIT and wait.until == now + 120
    key = refusal_of(403, {}, b'{"message":"Forbidden"}', expects="json", keyed=True, now=now)
    assert key is not None and key.refusal is Refusal.KEY
    assert refusal_of(403, {}, b'{"message":"Forbidden"}', expects="json", keyed=False, now=now) is None
    assert refusal_of(403, {}, b'{"error":"Rate limit exceeded"}', expects="json", keyed=True,
                      now=now) is None  # OpenAlex's "slow down", not a refused key
    cf = refusal_of(403, _h(content_type="text/html"), b"<html><title>Just a moment...</title>",
                    expects="json", keyed=False, now=now)
    assert cf is not None and cf.refusal is Refusal.CHALLENGE
    assert refusal_of(503, _h(content_type="text/html"), b"<h1>503 Service Unavailable</h1>",
                      expects="json", keyed=False, now=now) is None  # a server error: retried
    bot = refusal_of(202, {}, b"", expects="json", keyed=False, now=now)
    assert bot is not None and bot.refusal is Refusal.BOT_CHECK
    page = refusal_of(200, _h(content_type="text/html"), b"<!doctype html><title>Hi</title>",
                      expects="xml", keyed=False, now=now)
    assert page is not None and page.refusal is Refusal.CHALLENGE and "not XML" not in page.detail
    assert refusal_of(200, _h(content_type="text/html"), b"<html>", expects="any", keyed=False,
                      now=now) is None  # arXiv's site serves HTML
    assert refusal_of(404, _h(content_type="text/html"), b"<title>404 Not Found</title>",
                      expects="json", keyed=False, now=now) is None  # OpenAlex's "not found"


def test_rate_headers_state_the_budget() -> None:
    b = refusals.budget_of(_h(x_ratelimit_limit_usd="1", x_ratelimit_remaining_usd="0.9731",
                              x_ratelimit_cost_usd="0.001", x_ratelimit_reset="3600"), 100.0)
    assert b is not None and (b.limit_usd, b.remaining_usd, b.resets_at) == (1.0, 0.9731, 3700.0)
    assert not b.spent and refusals.budget_of({}, 0.0) is None


# ---------------------------------------------------------------------- a venue


def _venue_behind_a_spent_budget(tmp_path: Path, fake: ScholarlyFake, *how: str) -> None:
    """A venue of three papers whose keyless OpenAlex budget runs out during the run
    (``how``: more options of ``citelens check``): its header says so once, its verdicts
    stand."""
    import os
    import subprocess
    import sys

    fake.set_openalex_budget(0.10, 1.0)
    fake.spend_openalex(0.0995)  # the keyless budget runs out during the venue
    v = tmp_path / "venue"
    for name, keys in (("paper-a", "fake1,hunter2007"), ("paper-b", "fake2,fake3"), ("paper-c", "fakedoi")):
        (v / name).mkdir(parents=True)
        (v / name / "refs.bib").write_text(BIB, encoding="utf-8")
        (v / name / "main.tex").write_text(
            f"\\documentclass{{article}}\\begin{{document}}\\cite{{{keys}}}\\bibliography{{refs}}"
            "\\end{document}\n", encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", str(v), "--venue", str(out), *how],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    run = json.loads((out / "run.json").read_text())
    [said] = run["sources_out"]
    assert said.startswith("OpenAlex's daily budget is spent (no API key): set `openalexApiKey`")
    page = (out / "summary.html").read_text()
    assert page.count("OpenAlex&#x27;s daily budget is spent") == 1
    assert proc.stderr.count("daily budget is spent") == 1
    statuses = {e["key"]: e["status"] for p in ("paper-a", "paper-b", "paper-c")
                for e in json.loads((out / "papers" / f"{p}.json").read_text())["entries"]}
    assert {k: statuses[k] for k in FABRICATED} == dict.fromkeys(FABRICATED, "NOT_FOUND")
    assert not run["health"]["problems"]


def test_a_venue_header_says_a_spent_budget_once_and_its_verdicts_stand(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    _venue_behind_a_spent_budget(tmp_path, scholarly_server)


def test_a_venue_on_ray_says_a_refusal_its_tasks_met_in_the_header_once(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """Each Ray task has its own clients: the driver gathers the refusals they met and says
    each once (the CLI's log, run.json, the report's header), as one machine does."""
    pytest.importorskip("ray", reason="pip install 'citelens[scale]' (the test extra pulls it in)")
    _venue_behind_a_spent_budget(tmp_path, scholarly_server, "--ray", "--workers", "1", "--batch", "1")
