"""A transient failure is retried: only an answer still failed after the retries makes an
entry UNVERIFIED. Twelve preprints only arXiv knows go to arXiv in one batch request."""

from __future__ import annotations

import asyncio
from typing import Any

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Verification
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

_WORDS = ("Lattice", "Spectral", "Sparse", "Bayesian", "Robust", "Adaptive", "Stochastic",
          "Quantized", "Federated", "Causal", "Implicit", "Hierarchical")
PAPERS = [
    {"title": f"{w} Estimators for Reference Graph Consistency", "authors": ["Noor Haddad"],
     "year": 2021, "arxiv": f"2103.{i + 10:05d}", "sources": ["arxiv"], "type": "posted-content"}
    for i, w in enumerate(_WORDS)
]


def _bib() -> str:
    return "\n".join(
        f"@misc{{p{i}, title = {{{p['title']}}}, author = {{Haddad, Noor}}, year = {{2021}},"
        f" eprint = {{{p['arxiv']}}}, archivePrefix = {{arXiv}}}}"
        for i, p in enumerate(PAPERS))


async def _check(fake: ScholarlyFake, **settings: Any) -> dict[str, Verification]:
    for p in PAPERS:
        fake.add_paper(p)
    s = fake.settings(**settings)
    views = [entry_view(e) for e in parse_bib(_bib(), "refs.bib").entries]
    async with Sources.from_settings(s, rates=fast_rates()) as sources:
        return await verify_entries(views, s, sources=sources, cache=VerificationCache(None))


async def test_one_503_from_arxiv_does_not_leave_the_batch_unverified(
        scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("arxiv", "5xx", count=1)
    got = await asyncio.wait_for(_check(scholarly_server), 30)
    assert {v.status for v in got.values()} == {Status.VERIFIED}, {k: v.summary for k, v in got.items()}
    statuses = [r["status"] for r in scholarly_server.requests("arxiv")]
    assert statuses == [503, 200]  # the same batch of twelve, asked again


async def test_a_batch_that_keeps_failing_is_split_not_dropped(scholarly_server: ScholarlyFake) -> None:
    # the batch and its one retry fail: its two halves are asked on their own
    scholarly_server.set_mode("arxiv", "5xx", count=2)
    got = await asyncio.wait_for(_check(scholarly_server, max_retries=1), 30)
    assert {v.status for v in got.values()} == {Status.VERIFIED}, {k: v.summary for k, v in got.items()}
    asked = [r["query"].get("id_list", "").count(",") + 1 for r in scholarly_server.requests("arxiv")]
    assert asked == [12, 12, 6, 6]


async def test_an_answer_still_failed_after_the_retries_is_unverified(
        scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_mode("arxiv", "5xx")
    got = await asyncio.wait_for(_check(scholarly_server, max_retries=1), 30)
    assert {v.status for v in got.values()} == {Status.UNVERIFIED}
    for v in got.values():  # 503 after the retries (or the breaker it tripped): "could not ask"
        assert any(a.source == "arxiv" and a.outcome in ("failed", "unavailable") for a in v.audit)
        assert "could not ask" in v.summary, v.summary
