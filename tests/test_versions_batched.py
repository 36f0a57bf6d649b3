"""A found paper's other versions are asked in batches, with every other entry's.

A bibliography cites papers at their venues whose sources hold the preprints (Semantic Scholar
and arXiv: venue arXiv, a year earlier): each verdict waits for the paper's other versions
before a warning (``verdict.wants_versions``), and arXiv takes many ids in one ``id_list``.
So N such entries cost ⌈N/100⌉ arXiv requests, not N requests at arXiv's one per three
seconds (issue 45: 15 entries cost 25 s of a first check). Requests are counted on the fake.
"""

from __future__ import annotations

import asyncio
import math

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.plan import ARXIV_IDS
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

N = 7
WORDS = ("Sparse", "Spectral", "Tensor", "Lattice", "Manifold", "Graph", "Kernel")


def _paper(i: int) -> dict[str, object]:
    """A journal paper of 2021 the indexes know as its 2020 arXiv preprint."""
    preprint = {"venue": "arXiv", "year": 2020}
    return {
        "title": f"{WORDS[i]} Estimators for Versioned Citation Records",
        "authors": ["Hanna Okonkwo", "Piet de Vries"],
        "year": 2021,
        "venue": "Journal of Versioned Records",
        "arxiv": f"2007.{10001 + i}",
        "sources": ["s2", "arxiv"],
        "as": {"s2": preprint, "arxiv": preprint},
    }


def _bib() -> str:
    return "\n".join(
        f"@article{{v{i}, title = {{{WORDS[i]} Estimators for Versioned Citation Records}},"
        f" author = {{Okonkwo, Hanna and de Vries, Piet}}, journal = {{Journal of Versioned Records}},"
        f" year = {{2021}}, eprint = {{2007.{10001 + i}}}, archivePrefix = {{arXiv}}}}"
        for i in range(N)
    )


def test_entries_waiting_for_their_versions_ask_arxiv_in_one_batch(scholarly_server: ScholarlyFake) -> None:
    for i in range(N):
        scholarly_server.add_paper(_paper(i))
    views = [entry_view(e) for e in parse_bib(_bib(), "refs.bib").entries]

    async def run() -> dict[str, Status]:
        settings = scholarly_server.settings()
        async with Sources.from_settings(settings, rates=fast_rates()) as sources:
            got = await verify_entries(views, settings, sources=sources, cache=VerificationCache(None))
        return {k: v.status for k, v in got.items()}

    statuses = asyncio.run(run())
    # the verdicts waited for the versions: the year differs from every version the sources hold
    assert statuses == {f"v{i}": Status.PARTIAL for i in range(N)}
    arxiv = [r for r in scholarly_server.requests() if r["source"] == "arxiv"]
    assert len(arxiv) == math.ceil(N / ARXIV_IDS.batch)
    asked = {x for r in arxiv for x in str(r["query"].get("id_list", "")).split(",") if x}
    assert asked == {f"2007.{10001 + i}" for i in range(N)}
