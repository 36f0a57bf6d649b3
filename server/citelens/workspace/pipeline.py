"""The verification stage every driver shares, with one set of resources per process.

Four drivers run analyse → verify → findings: the editor (:class:`~citelens.workspace.engine.Engine`
and its background run), ``citelens check`` and the ``citelens.report`` command
(:func:`citelens.workspace.check.run_check`), and the venue check (``venue/run.py``).
Each verifies through one :class:`Pipeline`: the scholarly clients (each host's rate
limiter, retries, circuit breaker), the verification cache and the snapshot are built once,
when first needed, and shared by every run of the process. ``run_check`` takes a pipeline
and has no way to build clients of its own, so the ``citelens.report`` command cannot ask
Semantic Scholar from a second limiter while the editor's background run asks from the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from citelens.core.model import EntryView
from citelens.core.settings import Settings

if TYPE_CHECKING:  # (imported when first used: ``citelens check --no-verify`` needs none)
    from citelens.snapshot.store import Snapshot
    from citelens.sources.transport import Sources
    from citelens.verify.cache import VerificationCache
    from citelens.verify.scheduler import VerifyStream
    from citelens.verify.status import Verification

Log = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


class Pipeline:
    """One process's verification: its clients, cache and snapshot, and :meth:`verify`."""

    def __init__(self, settings: Settings, log: Log = _quiet) -> None:
        self.settings = settings
        self.log = log
        self._sources: Sources | None = None
        self._cache: VerificationCache | None = None
        self._snapshot: Snapshot | None = None
        self._snapshot_opened = False
        self._pdf_readers: asyncio.Semaphore | None = None

    def pdf_readers(self) -> asyncio.Semaphore:
        """How many PDFs the process reads at once (setting ``pdfReaders``; 0: as many as the
        machine has cores): one limit for every check and every paper of a venue, each
        reader a child process of up to 1.5 GB."""
        if self._pdf_readers is None:
            n = self.settings.pdf_readers if self.settings.pdf_readers > 0 else (os.cpu_count() or 1)
            self._pdf_readers = asyncio.Semaphore(max(1, n))
        return self._pdf_readers

    def configure(self, settings: Settings) -> None:
        """New settings: the cache and snapshot are opened again when next needed (the
        clients are handed over with :meth:`take_sources`, to close once their users stopped)."""
        self.settings = settings
        self._cache = None
        if self._snapshot is not None:
            self._snapshot.close()
        self._snapshot, self._snapshot_opened = None, False

    # ------------------------------------------------------------------ resources

    def sources(self) -> Sources:
        """The rate-limited scholarly clients, shared by every run and the claim checks."""
        from citelens.sources.transport import Sources
        from citelens.verify.cache import default_cache_dir

        if self._sources is None:  # a refusal that names its end is remembered in the cache folder
            self._sources = Sources.from_settings(
                self.settings, self.log, state_dir=default_cache_dir(self.settings)
            )
            cache = self.cache()
            if cache.remote:  # machines sharing a database cache share the hosts' pace too
                pace = _shared_pace(cache)
                for host in self._sources.hosts().values():
                    host.shared_pacer = pace
        return self._sources

    @property
    def built_sources(self) -> Sources | None:
        """The clients if they were built (None: nothing asked a source yet)."""
        return self._sources

    def take_sources(self) -> Sources | None:
        """Hand over the current clients (to close once their users stopped); the next
        call of :meth:`sources` builds new ones, with the current settings."""
        sources, self._sources = self._sources, None
        return sources

    def source_outs(self) -> list[tuple[str, str]]:
        """The sources not asked now (a refusal, the circuit breaker), in the hosts' order:
        (what identifies the refusal: source, kind and the day it ends; the line that says it
        with the fix). The editor shows each once."""
        if self._sources is None:
            return []
        return [
            (f"{o.source}:{o.refusal}:{int(o.until // 86400) if o.until else ''}", o.message)
            for o in self._sources.outs()
        ]

    def reset_sources(self) -> None:
        """Forget outages and tripped circuit breakers: ask every source again."""
        if self._sources is not None:
            self._sources.reset_availability()

    def cache(self) -> VerificationCache:
        """The verification cache, opened when first needed (a database's connection and
        tables: :meth:`opened_cache` opens it off the event loop)."""
        from citelens.verify.cache import open_cache

        if self._cache is None:
            self._cache = open_cache(self.settings, self.log)
        return self._cache

    def clear_cache(self) -> str:
        """Drop every cached answer (the editor's ``citelens.clearCache``) and say where: the
        disk cache now, a database's in a thread (opening it and its statement are round
        trips the event loop does not wait for)."""
        from citelens.verify.pgcache import display, is_postgres_url

        url = self.settings.cache
        if is_postgres_url(url):
            with contextlib.suppress(RuntimeError):  # (no loop: a test applying events)
                asyncio.get_running_loop().run_in_executor(None, lambda: self.cache().clear())
                return display(str(url))
        cache = self.cache()
        cache.clear()
        return str(getattr(cache, "directory", "") or "cache")

    async def opened_cache(self) -> VerificationCache:
        """:meth:`cache`, opened in a thread the first time (connecting to a database and
        making its tables are round trips the event loop does not wait for)."""
        if self._cache is None:
            return await asyncio.to_thread(self.cache)
        return self._cache

    def snapshot(self) -> Snapshot | None:
        """The local snapshot the ``snapshot`` setting names (opened once), or None."""
        from citelens.verify.snapshot import open_snapshot

        if not self._snapshot_opened:
            self._snapshot = open_snapshot(self.settings, self.log)
            self._snapshot_opened = True
        return self._snapshot

    # ------------------------------------------------------------------ the stage

    async def verify(
        self,
        views: Sequence[EntryView],
        *,
        settings: Settings | None = None,
        log: Log | None = None,
        progress: Callable[[int, int], None] | None = None,
        info: Log | None = None,
        on_verdict: Callable[[Verification], None] | None = None,
    ) -> dict[str, Verification]:
        """A verdict per entry key (cited entries first), through this process's clients,
        cache and snapshot. ``settings``: a run's own (a venue paper's extra bibliographies,
        the CLI's severities), the pipeline's by default."""
        from citelens.verify.scheduler import verify_entries

        cache = await self.opened_cache()
        return await verify_entries(
            views,
            settings if settings is not None else self.settings,
            sources=self.sources(),
            cache=cache,
            snapshot=self.snapshot(),
            log=log if log is not None else self.log,
            progress=progress,
            info=info,
            on_verdict=on_verdict,
        )

    async def stream(self, *, log: Log | None = None, expected: int = 0) -> VerifyStream:
        """A verification stream through this process's clients, cache and snapshot: entries
        join as they come (a venue's papers), each call returns its own verdicts."""
        from citelens.verify.scheduler import VerifyStream

        cache = await self.opened_cache()
        return VerifyStream(
            self.settings,
            sources=self.sources(),
            cache=cache,
            snapshot=self.snapshot(),
            log=log if log is not None else self.log,
            expected=expected,
        )

    async def aclose(self) -> None:
        """Close the clients, the cache and the snapshot (a driver that ends: the CLI, a
        venue run, a Ray task)."""
        sources = self.take_sources()
        if sources is not None:
            await sources.aclose()
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()
            self._cache = None
        if self._snapshot is not None:
            self._snapshot.close()
        self._snapshot, self._snapshot_opened = None, False


async def close_later(sources: Sources, task: asyncio.Task[None] | None) -> None:
    """Close ``sources`` once ``task`` (a run still using them) has stopped."""
    try:
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=30)
        await sources.aclose()
    except Exception:  # pragma: no cover
        pass


def _shared_pace(cache: VerificationCache) -> Callable[[str, float], Awaitable[None]]:
    """A host client's ``shared_pacer`` from the cache's database (``PgStore.slot``): N
    machines sharing it keep the rate one machine would, so none of them is answered 429
    for the others' requests (issue 41 #12). A database that fails paces nobody."""

    async def pace(host: str, interval: float) -> None:
        delay = await asyncio.to_thread(cache.shared_slot, host, interval)
        if delay:
            await asyncio.sleep(delay)

    return pace
