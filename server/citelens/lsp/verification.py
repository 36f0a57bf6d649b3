"""Background verification for the editor: the driver of the engine's runs.

The engine says which run to start (``Changes.run``: the entries with no verdict for their
current text, cited entries of open documents first), to cancel (new settings) or to hurry
(open, save), and when to retry what an outage left unverified (``Changes.retry``); this
module carries it out: one task at a time, after the debounce, a new run superseding
(cancelling) the running one, and one timer for the retry. Each verdict is handed to the
engine as soon as it is decided (``VerdictSettled``: one crossing per verdict), so a
cancelled run keeps what it reached; diagnostics are reported at most once per second while
the run lasts, and once at its end (``RunEnded``). No request handler waits on it; nothing
polls. ``$/progress`` says what was found so far.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable

from lsprotocol import types as lsp
from pygls.progress import Progress as ProgressTracker

from citelens.core.statuses import Status, progress_counts
from citelens.workspace.changes import Changes, Retry, Run
from citelens.workspace.events import Event, Outcome, RetryDue, RunEnded, VerdictSettled
from citelens.workspace.pipeline import close_later
from citelens.workspace.queries import Queries

log = logging.getLogger("citelens")
_tokens = itertools.count(1)

LogLine = Callable[[str, lsp.MessageType], None]


class Verifier:
    """The background runs of one engine (at most one at a time), and the retry timer."""

    def __init__(
        self,
        session: Queries,
        handle: Callable[[Event], None],
        *,
        log_line: LogLine,
        progress: Callable[[int], Progress],
        show: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.session = session
        self._handle = handle  # an event to the engine, and its changes sent
        self._show = show
        self._log_line = log_line
        self._progress = progress
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None  # set: the current run's debounce ends now
        self._retry: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Future[None]] = set()
        self._stopped = False  # the client asked the server to shut down
        self.runs = 0

    # ------------------------------------------------------------------ the engine's orders
    def follow(self, changes: Changes) -> None:
        """What ``changes`` asks of the background run: cancel it (new settings: its clients
        are closed once it has stopped), start a new one, hurry one in its debounce, set or
        cancel the retry timer, show the sources' refusals."""
        if changes.cancel_run:
            task = self._task
            if task is not None and not task.done():
                task.cancel()
            self._task = None
            if changes.retired is not None:
                closing = asyncio.ensure_future(close_later(changes.retired, task))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        if changes.run is not None:
            self.start(changes.run)
        elif changes.hurry:
            self.hurry()
        if changes.retry is not None:
            self._retry_at(changes.retry)
        for message in changes.shown:
            self._show(message)

    def start(self, run: Run) -> None:
        """A new task for ``run``, superseding (cancelling) the running one."""
        if self._stopped:
            return
        task = self._task
        if task is not None and not task.done() and task is not _current_task():
            task.cancel()  # superseded: its entries changed
        self._wake = asyncio.Event()
        try:
            self._task = asyncio.get_running_loop().create_task(self._run(run, self._wake))
        except RuntimeError:  # no loop (not serving)
            self._task = None

    def hurry(self) -> None:
        """On open and save: a run still waiting for its debounce starts now (one past it
        is not affected)."""
        if self._wake is not None:
            self._wake.set()

    def stop(self) -> None:
        """The server shuts down: the running check is cancelled (its progress ended now)
        and no other starts."""
        self._stopped = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _retry_at(self, retry: Retry) -> None:
        """The engine's retry of the entries an outage left UNVERIFIED: one timer (a new
        one replaces it); when it fires, ``RetryDue``."""
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if retry.after_s is None:
            return
        hashes = retry.hashes

        def due() -> None:
            self._retry = None
            self._handle(RetryDue(hashes))

        with contextlib.suppress(RuntimeError):  # no loop: nothing to retry in
            self._retry = asyncio.get_running_loop().call_later(retry.after_s, due)

    async def wait(self) -> None:
        """For tests and benchmarks: until the current check has finished."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    # ------------------------------------------------------------------ a run
    async def _run(self, run: Run, wake: asyncio.Event) -> None:
        outcome = Outcome.FAILED
        finished: RunEnded | None = None
        try:
            if run.delay_s > 0:  # the debounce, which hurry() ends
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), run.delay_s)
            progress = self._progress(len(run.views))
            await progress.begin()
            self.runs += 1
            try:
                verdicts = await self.session.verify(
                    run,
                    progress=progress.report,
                    info=lambda m: self._log_line(m, lsp.MessageType.Info),  # the summary
                    on_verdict=lambda v: self._settled(VerdictSettled(run.id, v), progress),
                )
                finished = RunEnded(run.id, Outcome.FINISHED, verdicts)
            except asyncio.CancelledError:
                progress.end("stopped" if self._stopped else "superseded by an edit")
                raise
            except Exception as exc:
                log.exception("verification failed")
                self._log_line(f"verification failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
            finally:
                progress.end()
        except asyncio.CancelledError:  # superseded (in its debounce too), or stopped
            outcome = Outcome.STOPPED if self._stopped else Outcome.CANCELLED
            raise
        finally:
            self._handle(finished or RunEnded(run.id, outcome))

    def _settled(self, event: VerdictSettled, progress: Progress) -> None:
        """One verdict decided: counted for the progress, and to the engine now."""
        progress.count(event.verdict.status)
        self._handle(event)


def _current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


class Progress:
    """``$/progress`` "Verifying citations n/N" when the client supports it."""

    def __init__(self, tracker: ProgressTracker, enabled: bool, total: int) -> None:
        self.tracker = tracker
        self.enabled = enabled
        self.total = total
        self.token: str | None = None
        self.done = False
        self.by_status: dict[Status, int] = {}  # verdicts reached so far

    def count(self, status: Status) -> None:
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
