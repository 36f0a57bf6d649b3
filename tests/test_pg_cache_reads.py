"""The PostgreSQL cache is read in batches, not one round trip per key: a warm run over
entries with identifiers reads their answers in a few statements (each made in a thread,
off the event loop), and gets the cold run's verdicts."""

from __future__ import annotations

import asyncio
from typing import Any

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.pgcache import PgStore
from citelens.verify.scheduler import verify_entries
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

N = 30


def _bib() -> str:
    return "\n".join(
        f"@article{{p{i}, title = {{Batched Reads of a Shared Answer Cache, Part {i}}},"
        f" author = {{Ortega, Lucia}}, journal = {{Journal of Cache Studies}}, year = {{2020}},"
        f" doi = {{10.5555/batched.{i}}}}}"
        for i in range(N))


async def _run(fake: ScholarlyFake, cache: VerificationCache) -> dict[str, str]:
    settings = fake.settings()
    views = [entry_view(e) for e in parse_bib(_bib(), "refs.bib").entries]
    async with Sources.from_settings(settings, rates=fast_rates()) as sources:
        got = await verify_entries(views, settings, sources=sources, cache=cache)
    return {k: v.status.value for k, v in got.items()}


def test_a_warm_run_reads_the_postgres_cache_in_a_few_statements(
        scholarly_server: ScholarlyFake, postgres_url: str) -> None:
    for i in range(N):
        scholarly_server.add_paper({
            "title": f"Batched Reads of a Shared Answer Cache, Part {i}", "authors": ["Lucia Ortega"],
            "year": 2020, "venue": "Journal of Cache Studies", "doi": f"10.5555/batched.{i}"})
    store = PgStore(postgres_url)
    statements: list[str] = []
    run_sql = store._run

    def counted(sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        statements.append(sql.split()[0])
        return run_sql(sql, args)

    store._run = counted  # type: ignore[method-assign]
    cache = VerificationCache(None)
    cache.use_store(store, "postgresql://test", b"k" * 32)
    try:
        cold = asyncio.run(_run(scholarly_server, cache))
        assert set(cold.values()) == {"VERIFIED"}, cold
        scholarly_server.clear_log()
        statements.clear()
        warm = asyncio.run(_run(scholarly_server, cache))
    finally:
        cache.close()
    assert warm == cold
    assert scholarly_server.count() == 0
    reads = statements.count("SELECT")
    # 30 entries, one S2 batch of 30 DOIs: one statement, not 30 (and no write on a warm run)
    assert reads <= 3, statements
    assert "INSERT" not in statements
