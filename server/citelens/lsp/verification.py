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
import itertools
import logging
from collections.abc import Callable, Iterable

from lsprotocol import types as lsp
from pygls.progress import Progress as ProgressTracker

from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.verify.status import Verification, progress_counts
from citelens.workspace.pipeline import close_later
from citelens.workspace.session import Session

log = logging.getLogger("citelens")
_tokens = itertools.count(1)
#: Entries left UNVERIFIED by an outage are retried after this, doubling up to the maximum.
RETRY_FIRST_S = 60.0
RETRY_MAX_S = 960.0

LogLine = Callable[[str, lsp.MessageType], None]


class Verifier:
    """The background verification run of one session (at most one at a time)."""

    def __init__(
        self,
        session: Session,
        *,
        publish: Callable[[], None],
        publish_soon: Callable[[], None],
        log_line: LogLine,
        progress: Callable[[int], Progress],
        show: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.session = session
        self._show = show
        self._shown: set[str] = set()  # the sources' refusals already shown
        self._publish = publish
        self._publish_soon = publish_soon
        self._log_line = log_line
        self._progress = progress
        self._task: asyncio.Task[None] | None = None
        self._views: list[EntryView] = []  # what the current task checks
        self._sleeping = False  # the current task is still in its debounce
        self._debounce_s = session.settings.verify_debounce_ms / 1000.0
        self._retry: asyncio.TimerHandle | None = None
        self._retry_delay = RETRY_FIRST_S
        self._closing: asyncio.Future[None] | None = None
        self._stopped = False  # the client asked the server to shut down
        self.runs = 0

    # ------------------------------------------------------------------ state
    def settings_changed(self, settings: Settings) -> None:
        """Stop the running check (it uses the old settings' clients) and close those
        clients once it has stopped; the next check runs with the new settings (answers
        come from the cache)."""
        self._debounce_s = settings.verify_debounce_ms / 1000.0
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            # superseded now, not when the cancelled run gets to its end: the next plan
            # must not take the entries it covered as being checked (a snapshot set in
            # the editor during a check left everything unverified, issue 41 #8)
            self._task = None
            self.session.verification_ended()
        sources = self.session.pipeline.take_sources()
        if sources is not None:
            self._closing = asyncio.ensure_future(close_later(sources, task))

    def reset(self) -> None:
        """Forget verdicts (``citelens.verifyNow``): everything is checked again."""
        self.session.forget_verdicts()
        self.session.pipeline.reset_sources()

    def clear_cache(self) -> str:
        cache = self.session.pipeline.cache()
        cache.clear()
        self.reset()
        return str(getattr(cache, "directory", "") or "cache")

    # ------------------------------------------------------------------ work
    def schedule(self, delay: float | None = None, force: bool = False) -> None:
        """Verify what the session says has no verdict (``force``: even what the running
        check covers); ``delay`` 0: now, also for a check still in its debounce."""
        views = self.session.plan_verification(force=force)
        if views:
            self.start(views, delay)
        elif delay == 0.0:
            self.hurry()

    def stop(self) -> None:
        """The server shuts down: the running check is cancelled (its progress ended now)
        and no other starts."""
        self._stopped = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def start(self, views: list[EntryView], delay: float | None = None) -> None:
        """A new run for ``views`` (the session counts them as being checked), superseding
        (cancelling) the running one; after the debounce unless ``delay`` is given."""
        if self._stopped:
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()  # superseded: its entries changed
        self._views = views
        try:
            task = asyncio.get_running_loop().create_task(
                self._run(views, self._debounce_s if delay is None else delay)
            )
        except RuntimeError:  # no loop (not serving)
            self._task = None
            return
        self._task = task
        task.add_done_callback(self._ended)

    def hurry(self) -> None:
        """On open and save: a check still waiting for its debounce starts now."""
        if self._sleeping and self._task is not None and not self._task.done():
            self.start(self._views, 0.0)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The current run ended (also cancelled in its debounce): nothing is being checked."""
        if task is self._task:
            self.session.verification_ended()

    def _retry_later(self, results: Iterable[Verification]) -> None:
        """Entries left UNVERIFIED because a source failed are checked again later (1, 2, 4…
        up to 16 minutes while the outage lasts); one timer, nothing polls."""
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        failed = [v for v in results if v.worth_retrying and not self.session.settings.offline]
        if not failed:
            self._retry_delay = RETRY_FIRST_S
            return
        hashes = {v.content_hash for v in failed}

        def retry() -> None:
            self._retry = None
            self.session.forget_unverified(hashes)
            self.session.pipeline.reset_sources()
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

    def _reached(self, views: dict[str, EntryView], progress: Progress) -> Callable[[Verification], None]:
        """The engine's per-verdict hook: keep the verdict now (a cancelled run keeps what
        it reached), count it for the progress, and publish soon (coalesced)."""

        def on_verdict(ver: Verification) -> None:
            view = views.get(ver.key)
            if view is None:
                return
            self.session.keep_verdict(view, ver)
            progress.count(ver)
            self._publish_soon()
            self._show_outs()

        return on_verdict

    def _show_outs(self) -> None:
        """A source that went out (its budget spent, a challenge page, ...) is shown once, with
        its fix, as soon as a verdict follows: the run goes on without it."""
        for key, message in self.session.pipeline.source_outs():
            if key not in self._shown:
                self._shown.add(key)
                self._show(message)

    async def _run(self, views: list[EntryView], delay: float) -> None:
        if delay > 0:
            self._sleeping = True
            try:
                await asyncio.sleep(delay)
            finally:
                self._sleeping = False
        session = self.session
        by_key: dict[str, EntryView] = {}
        for v in views:
            by_key.setdefault(v.key, v)  # one entry per key per run
        progress = self._progress(len(by_key))
        await progress.begin()
        self.runs += 1
        try:
            results = await session.pipeline.verify(
                list(by_key.values()),
                progress=progress.report,
                info=lambda m: self._log_line(m, lsp.MessageType.Info),  # the summary
                on_verdict=self._reached(by_key, progress),
            )
            for key, ver in results.items():
                view = by_key.get(key)
                if view is not None:
                    session.keep_verdict(view, ver)
            self._publish()
            self._show_outs()
            self._retry_later(results.values())
        except asyncio.CancelledError:
            if self._stopped:
                progress.end("stopped")
                raise
            progress.end("superseded by an edit")
            self._publish_soon()  # the verdicts reached so far are kept: show them
            raise
        except Exception as exc:
            log.exception("verification failed")
            self._log_line(f"verification failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
        finally:
            progress.end()
            session.verification_ended()
        # Entries that changed while this ran.
        self.schedule()


class Progress:
    """``$/progress`` "Verifying citations n/N" when the client supports it."""

    def __init__(self, tracker: ProgressTracker, enabled: bool, total: int) -> None:
        self.tracker = tracker
        self.enabled = enabled
        self.total = total
        self.token: str | None = None
        self.done = False
        self.by_status: dict[str, int] = {}  # verdicts reached so far

    def count(self, ver: Verification) -> None:
        status = str(getattr(ver.status, "value", ver.status))
        self.by_status[status] = self.by_status.get(status, 0) + 1

    def message(self, done: int, total: int) -> str:
        """ "42/150 entries · 3 not found · 1 unverified": problems found so far."""
        return " · ".join([f"{done}/{total} entries", *progress_counts(self.by_status)])

    async def begin(self) -> None:
        if not self.enabled:
            return
        token = f"citelens-verify-{next(_tokens)}"
        try:
            # shielded: a run superseded while the editor creates its progress bar leaves
            # the request be (its answer then has a future to land in)
            await asyncio.wait_for(asyncio.shield(self.tracker.create_async(token)), 5)
        except Exception:
            return
        self.token = token
        self.tracker.begin(
            token,
            lsp.WorkDoneProgressBegin(
                title="Verifying citations",
                message=self.message(0, self.total),
                percentage=0,
                cancellable=True,
            ),
        )
        fut = self.tracker.tokens.get(token)
        task = asyncio.current_task()
        if fut is not None and task is not None:
            fut.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)

    def report(self, done: int, total: int) -> None:
        if self.token is None or self.done:
            return
        pct = int(100 * done / total) if total else 100
        self.tracker.report(
            self.token, lsp.WorkDoneProgressReport(message=self.message(done, total), percentage=pct)
        )

    def end(self, message: str = "done") -> None:
        if self.token is None or self.done:
            return
        self.done = True
        self.tracker.end(self.token, lsp.WorkDoneProgressEnd(message=message))
        self.tracker.tokens.pop(self.token, None)
