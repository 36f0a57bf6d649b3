"""The claim checker the language server holds: in-flight tasks plus the result cache.

checker = ClaimChecker(settings)              # once, and again on a settings change
hit = checker.cached(claim, view)             # instant: cache only, no network
task = checker.ensure(claim, view, record)    # starts at most one check per claim/paper
result = await checker.check(claim, view, record)
await checker.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import TYPE_CHECKING

import httpx

from citelens.claims import cache as claim_cache
from citelens.claims.pipeline import check_claim
from citelens.claims.result import ClaimResult
from citelens.claims.signals import paper_identity
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.sources.records import PaperRecord

if TYPE_CHECKING:
    from citelens.sources.transport import Sources


class ClaimChecker:
    def __init__(
        self,
        settings: Settings,
        *,
        sources: Sources | None = None,
        client: httpx.AsyncClient | None = None,
        cache_dir: str | None = None,
    ) -> None:
        self.settings = settings
        self._sources = sources
        self._own_sources = False
        self._client = client
        self._own_client = client is None
        self._cache: claim_cache.ClaimCache | None = claim_cache.open_cache(settings, cache_dir)
        self._tasks: dict[str, asyncio.Task[ClaimResult]] = {}
        #: The verifier's clients this checker was built with (None: its own).
        self.shared_sources: object | None = sources
        #: Results of running checks as they are filled in (the evidence found so far).
        self.live: dict[str, ClaimResult] = {}
        #: Finished results that were not cached (errors), until one hover showed them.
        self.uncached: dict[str, ClaimResult] = {}
        #: Claim texts by paragraph (see claims.hover.claim_at), bounded.
        self.claim_memo: dict[tuple[str, str, int, int], str] = {}
        #: Why a citation has no claim to check ("" for a claim), by paragraph, bounded.
        self.no_claim_memo: dict[tuple[str, str, int, int], str] = {}

    # ------------------------------------------------------------------ keys

    def key(self, claim: str, view: EntryView | None, record: PaperRecord | None = None) -> str:
        return claim_cache.cache_key(claim, paper_identity(view, record), self.settings)

    # ------------------------------------------------------------------ queries

    def cached(
        self, claim: str, view: EntryView | None, record: PaperRecord | None = None
    ) -> ClaimResult | None:
        """The stored result for this claim and paper, or ``None`` (no network, no waiting)."""
        return claim_cache.load(self._cache, self.key(claim, view, record))

    def running(self, claim: str, view: EntryView | None, record: PaperRecord | None = None) -> bool:
        task = self._tasks.get(self.key(claim, view, record))
        return task is not None and not task.done()

    def in_flight(
        self, claim: str, view: EntryView | None, record: PaperRecord | None = None
    ) -> asyncio.Task[ClaimResult] | None:
        """The running check of this claim against this paper, if any."""
        task = self._tasks.get(self.key(claim, view, record))
        return task if task is not None and not task.done() else None

    def ensure(
        self, claim: str, view: EntryView | None, record: PaperRecord | None = None
    ) -> asyncio.Task[ClaimResult]:
        """The task checking this claim against this paper, started if not yet running."""
        key = self.key(claim, view, record)
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._run(key, claim, view, record))
            self._tasks[key] = task
            task.add_done_callback(functools.partial(self._forget, key))
        return task

    async def check(
        self, claim: str, view: EntryView | None, record: PaperRecord | None = None
    ) -> ClaimResult:
        """The result from the cache, or from a (shared) fresh check."""
        hit = self.cached(claim, view, record)
        if hit is not None:
            return hit
        return await asyncio.shield(self.ensure(claim, view, record))

    # ------------------------------------------------------------------ internals

    def _forget(self, key: str, task: asyncio.Task[ClaimResult]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
            self.live.pop(key, None)

    def _sources_for_run(self) -> Sources | None:
        if self._sources is None and not self.settings.offline:
            try:
                from citelens.sources.transport import Sources as _Sources

                self._sources = _Sources.from_settings(self.settings)
                self._own_sources = True
            except Exception:  # scholarly clients unavailable: the cascade logs it
                return None
        return self._sources

    async def _run(
        self, key: str, claim: str, view: EntryView | None, record: PaperRecord | None
    ) -> ClaimResult:
        hit = claim_cache.load(self._cache, key)
        if hit is not None:
            return hit
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.settings.request_timeout_s)
        result = await check_claim(
            claim,
            view,
            record,
            settings=self.settings,
            client=self._client,
            sources=self._sources_for_run(),
            live=functools.partial(self.live.__setitem__, key),
        )
        claim_cache.store(self._cache, key, result)
        return result

    async def aclose(self) -> None:
        """Cancel running checks and close what this checker opened."""
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(BaseException):
                await task
        if self._own_sources and self._sources is not None:
            await self._sources.aclose()
        if self._own_client and self._client is not None:
            await self._client.aclose()
        if self._cache is not None:
            self._cache.close()
