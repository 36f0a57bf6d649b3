"""Background verification for the editor.

One task at a time verifies the entries whose content is not verified yet,
cited entries of open documents first. Results are kept by content hash, so an
edit re-checks only the entries it changed; an edit that changes which entries
need checking supersedes (cancels) the running task. No request handler waits
on it. Each verdict is stored as soon as the engine decides it, and diagnostics are
published at most once per second while the run lasts (and once at its end), so a
long run shows a steady stream and a cancelled run keeps what it reached. Nothing polls.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from citelens.core.findings import Finding
from citelens.core.model import BibEntry, EntryView
from citelens.workspace.index import Analysis

if TYPE_CHECKING:
    from citelens.lsp.server import CiteLensServer
    from citelens.verify.status import Verification

log = logging.getLogger("citelens")
_tokens = itertools.count(1)
#: Bibliographies larger than this have only their cited entries verified in the editor.
MAX_UNCITED = 2000
#: Entries left UNVERIFIED by an outage are retried after this, doubling up to the maximum.
RETRY_FIRST_S = 60.0
RETRY_MAX_S = 960.0
#: Verdicts reached during a run are published at most this often (seconds).
PUBLISH_EVERY_S = 1.0


def view_hash(view: EntryView) -> str:
    try:
        from citelens.verify.run import content_hash

        return str(content_hash(view))
    except ImportError:  # pragma: no cover - the engine is part of the package
        return hashlib.sha256(repr(view).encode("utf-8", "replace")).hexdigest()[:24]


class Verifier:
    def __init__(self, server: CiteLensServer) -> None:
        self.server = server
        self.results: dict[str, Verification] = {}  # content hash -> verification
        self._hashes: dict[tuple[str, str, str], str] = {}
        self._task: asyncio.Task[None] | None = None
        self._wanted: frozenset[str] = frozenset()
        self._sleeping = False  # the current task is still in its debounce
        self._retry: asyncio.TimerHandle | None = None
        self._retry_delay = RETRY_FIRST_S
        self._sources: Any = None
        self._cache: Any = None
        self._findings: dict[str, tuple[object, tuple[Any, ...], list[Finding]]] = {}
        self._closing: asyncio.Future[None] | None = None
        self._generation = 0  # bumps when results change
        self._publish_at: asyncio.TimerHandle | None = None  # a coalesced publish is due
        self._last_publish = 0.0
        self.runs = 0

    # ------------------------------------------------------------------ state
    def settings_changed(self) -> None:
        """Stop the running check (it uses the old settings' clients), close those clients
        once it has stopped, and forget verdicts: the next check runs with the new
        settings (answers come from the cache)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        if self._sources is not None:
            sources, self._sources = self._sources, None
            self._closing = asyncio.ensure_future(_close(sources, task))
        self._cache = None
        self._findings.clear()
        self.results.clear()
        self._generation += 1

    def reset(self) -> None:
        """Forget results (``citelens.verifyNow``): everything is checked again."""
        self.results.clear()
        self._findings.clear()
        self._generation += 1
        if self._sources is not None:
            self._sources.reset_availability()

    def sources(self) -> Any:
        """The rate-limited scholarly clients, shared with the claim checker."""
        if self._sources is None:
            from citelens.sources.transport import Sources

            self._sources = Sources.from_settings(self.server.settings, self.server.log_once)
        return self._sources

    def clear_cache(self) -> str:
        from citelens.verify.cache import open_cache

        cache = self._cache or open_cache(self.server.settings, self.server.log_once)
        cache.clear()
        self.reset()
        return str(getattr(cache, "directory", "") or "cache")

    def _hash(self, entry: BibEntry, analysis: Analysis | None) -> str | None:
        k = self.server.entry_key(entry)
        h = self._hashes.get(k)
        if h is None:
            view = self.server.entry_view(entry, analysis)
            if view is None:
                return None
            h = view_hash(view)
            if len(self._hashes) > 200_000:
                self._hashes.clear()
            self._hashes[k] = h
        return h

    def result(self, entry: BibEntry, analysis: Analysis | None) -> Verification | None:
        h = self._hash(entry, analysis)
        return self.results.get(h) if h else None

    def pending(self, entry: BibEntry) -> bool:
        h = self._hashes.get(self.server.entry_key(entry))
        return bool(h and h in self._wanted and self._task and not self._task.done())

    def findings(self, analysis: Analysis) -> list[Finding]:
        """Verification findings of one project. The .bib part (entries, duplicates) is
        cached while the bibliographies and the results are unchanged; the part at the
        citations is cheap and follows every keystroke."""
        if not self.results or not self.server.settings.verification_enabled:
            return []
        from citelens.checks.verification import citation_findings, entry_level_findings

        by_key: dict[str, Verification] = {}
        # In a whole library only cited entries are verified: look at those, not at 68,000.
        library = len(analysis.definitions) > MAX_UNCITED
        keys = analysis.cited_keys() if library else analysis.definitions
        for key in keys:
            defs = analysis.definitions.get(key)
            v = self.result(defs[0], analysis) if defs else None
            if v is not None:
                by_key[key] = v
        settings = self.server.settings
        bibs = tuple(analysis.bibs)
        sig = (self._generation, settings, tuple(id(b) for b in bibs))
        cached = self._findings.get(analysis.project.root)
        try:
            if cached is not None and cached[0] == sig:
                entry_level = cached[2]
            else:
                entry_level = entry_level_findings(
                    bibs, by_key, settings, lambda e: self.server.entry_view(e, analysis),
                    only=set(by_key) if library else None)
                # keep the BibFiles alive with the signature, so their ids stay theirs
                self._findings[analysis.project.root] = (sig, bibs, entry_level)
            return entry_level + citation_findings(analysis.citations, analysis.bibs, by_key,
                                                   settings)
        except Exception:
            log.exception("placing verification findings failed")
            return []

    # ------------------------------------------------------------------ work
    def _needed(self) -> list[EntryView]:
        """Unverified entries of the analysed projects: cited ones first."""
        cited: list[tuple[BibEntry, Analysis]] = []
        rest: list[tuple[BibEntry, Analysis]] = []
        open_paths = set(self.server.store.open_paths())
        for a in self.server.analyses.values():
            is_open = bool(open_paths & (set(a.project.files) | set(a.project.bib_paths)))
            keys = set(a.cited_keys())
            # A whole library (thousands of entries) is not checked: only what is cited.
            whole = len(a.definitions) <= MAX_UNCITED
            for key, defs in a.definitions.items():
                if key in keys and is_open:
                    cited.append((defs[0], a))
                elif whole:
                    rest.append((defs[0], a))
        out: list[EntryView] = []
        seen: set[str] = set()
        for entry, a in cited + rest:
            h = self._hash(entry, a)
            if h is None or (h in self.results and self._fresh(self.results[h])) or h in seen:
                continue
            view = self.server.entry_view(entry, a)
            if view is None:
                continue
            seen.add(h)
            out.append(view)
        return out

    def _fresh(self, v: Verification) -> bool:
        """A verdict younger than ``verifiedMaxAgeDays``: an older one is checked again at
        the next open, save or edit (the paper may have been retracted since)."""
        try:
            when = datetime.datetime.fromisoformat(v.checked_at).timestamp()
        except (TypeError, ValueError):
            return True
        return time.time() - when <= self.server.settings.verified_max_age_days * 86400.0

    def schedule(self, delay: float | None = None, force: bool = False) -> None:
        settings = self.server.settings
        if not settings.verification_enabled:
            return
        views = self._needed()
        if not views:
            return
        wanted = frozenset(view_hash(v) for v in views)
        running = self._task is not None and not self._task.done()
        hurry = delay == 0.0 and self._sleeping  # open/save while a debounce is waiting
        if running and not force and not hurry and wanted <= self._wanted:
            return  # the running check already covers these
        if running and self._task is not None:
            self._task.cancel()  # superseded: its entries changed
        if delay is None:
            delay = settings.verify_debounce_ms / 1000.0
        self._wanted = wanted
        try:
            self._task = asyncio.get_running_loop().create_task(self._run(views, delay))
        except RuntimeError:  # no loop (not serving)
            self._task = None

    def _retry_later(self, results: Any) -> None:
        """Entries left UNVERIFIED because a source failed are checked again later (1, 2, 4…
        up to 16 minutes while the outage lasts); one timer, nothing polls."""
        from citelens.verify.status import Status

        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        failed = [v for v in results if v.status is Status.UNVERIFIED
                  and not self.server.settings.offline and "no title" not in v.summary.lower()]
        if not failed:
            self._retry_delay = RETRY_FIRST_S
            return
        hashes = {v.content_hash for v in failed}

        def retry() -> None:
            self._retry = None
            for h, v in list(self.results.items()):
                if v.content_hash in hashes and v.status is Status.UNVERIFIED:
                    del self.results[h]
            if self._sources is not None:
                self._sources.reset_availability()
            self.schedule(delay=0.0)

        try:
            self._retry = asyncio.get_running_loop().call_later(self._retry_delay, retry)
        except RuntimeError:
            return
        self._retry_delay = min(self._retry_delay * 2, RETRY_MAX_S)

    async def wait(self) -> None:
        """For tests and benchmarks: until the current check has finished."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    def _reached(self, views: dict[str, EntryView], progress: _Progress) -> Any:
        """The engine's per-verdict hook: keep the verdict now (a cancelled run keeps what
        it reached), count it for the progress, and publish soon (coalesced)."""

        def on_verdict(ver: Verification) -> None:
            view = views.get(ver.key)
            if view is None:
                return
            self.results[view_hash(view)] = ver
            self._generation += 1
            progress.count(ver)
            self._publish_soon()

        return on_verdict

    def _publish_soon(self) -> None:
        """At most one publish per :data:`PUBLISH_EVERY_S`; the first one at once."""
        if self._publish_at is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        wait = max(0.0, self._last_publish + PUBLISH_EVERY_S - loop.time())
        self._publish_at = loop.call_later(wait, self._publish_now)

    def _publish_now(self) -> None:
        if self._publish_at is not None:
            self._publish_at.cancel()
            self._publish_at = None
        try:
            self._last_publish = asyncio.get_running_loop().time()
        except RuntimeError:
            pass
        try:
            self.server.publish()
        except Exception:
            log.exception("publishing verification diagnostics failed")

    async def _run(self, views: list[EntryView], delay: float) -> None:
        if delay > 0:
            self._sleeping = True
            try:
                await asyncio.sleep(delay)
            finally:
                self._sleeping = False
        server = self.server
        by_key: dict[str, EntryView] = {}
        for v in views:
            by_key.setdefault(v.key, v)  # one entry per key per run
        progress = _Progress(server, len(by_key))
        await progress.begin()
        self.runs += 1
        try:
            from citelens.verify.cache import open_cache
            from citelens.verify.run import verify_entries

            sources = self.sources()
            if self._cache is None:
                self._cache = open_cache(server.settings, server.log_once)
            results = await verify_entries(
                list(by_key.values()), server.settings, sources=sources,
                cache=self._cache, log=server.log_once, progress=progress.report,
                info=lambda m: server.log_line(m, lsp.MessageType.Info),  # the summary
                on_verdict=self._reached(by_key, progress),
            )
            for key, ver in results.items():
                view = by_key.get(key)
                if view is not None:
                    self.results[view_hash(view)] = ver
            self._generation += 1
            self._publish_now()
            self._retry_later(results.values())
        except asyncio.CancelledError:
            progress.end("superseded by an edit")
            if self._publish_at is not None:
                self._publish_now()  # the verdicts reached so far are kept: show them
            raise
        except Exception as exc:
            log.exception("verification failed")
            server.log_once(f"verification failed: {type(exc).__name__}: {exc}",
                            lsp.MessageType.Error)
        finally:
            progress.end()
            self._wanted = frozenset()
        # Entries that changed while this ran.
        if self._needed():
            self.schedule()


async def _close(sources: Any, task: asyncio.Task[None] | None) -> None:
    try:
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=30)
        await sources.aclose()
    except Exception:  # pragma: no cover
        pass


#: Statuses counted in the progress message, in this order.
_PROGRESS_LABELS = (("NOT_FOUND", "not found"), ("DOI_MISMATCH", "wrong identifier"),
                    ("PARTIAL", "with discrepancies"), ("UNVERIFIED", "unverified"))


class _Progress:
    """``$/progress`` "Verifying citations n/N" when the client supports it."""

    def __init__(self, server: CiteLensServer, total: int) -> None:
        self.server = server
        self.total = total
        self.token: str | None = None
        self.done = False
        self.by_status: dict[str, int] = {}  # verdicts reached so far

    def count(self, ver: Verification) -> None:
        status = str(getattr(ver.status, "value", ver.status))
        self.by_status[status] = self.by_status.get(status, 0) + 1

    def message(self, done: int, total: int) -> str:
        """"42/150 entries · 3 not found · 1 unverified": problems found so far."""
        parts = [f"{done}/{total} entries"]
        for status, label in _PROGRESS_LABELS:
            n = self.by_status.get(status, 0)
            if n:
                parts.append(f"{n} {label}")
        return " · ".join(parts)

    async def begin(self) -> None:
        if not self.server._client_flag("window.work_done_progress"):
            return
        token = f"citelens-verify-{next(_tokens)}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), 5)
        except Exception:
            return
        self.token = token
        self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title="Verifying citations", message=self.message(0, self.total), percentage=0,
            cancellable=True))
        fut = self.server.work_done_progress.tokens.get(token)
        task = asyncio.current_task()
        if fut is not None and task is not None:
            fut.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)

    def report(self, done: int, total: int) -> None:
        if self.token is None or self.done:
            return
        pct = int(100 * done / total) if total else 100
        self.server.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(
            message=self.message(done, total), percentage=pct))

    def end(self, message: str = "done") -> None:
        if self.token is None or self.done:
            return
        self.done = True
        self.server.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)
