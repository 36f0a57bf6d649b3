"""The language server: an adapter around one :class:`~citelens.workspace.engine.Engine`.

It turns what the client sends, its own timers and the background run into events, hands
each to the engine's one entry point (:meth:`CiteLensServer.apply`), and renders the
:class:`~citelens.workspace.changes.Changes` it gets back (:meth:`CiteLensServer.send`:
diagnostics, a run to start or cancel, when to retry, lines to show), with no other engine
call. Otherwise feature modules (hover, completion, actions, ...) only read the engine,
through :attr:`CiteLensServer.session` (typed :class:`~citelens.workspace.queries.Queries`).
Its own state is LSP-only: the client's flags (``lsp/flags.py``), what the client was sent
(``lsp/publisher.py``), the background run's task, debounce and timers
(``lsp/verification.py``), the lines already logged, the timer that gathers edits.

A keystroke is two events: ``Changed`` at once (:meth:`CiteLensServer.edited`: the store has
the text), then ``Gathered`` for the edits that arrived together (:meth:`CiteLensServer.flush`).
A request first flushes, so it answers from the latest text.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from citelens import __version__
from citelens.core.settings import from_sources
from citelens.lsp.convert import path_of
from citelens.lsp.flags import ClientFlags
from citelens.lsp.protocol import CiteLensProtocol
from citelens.lsp.publisher import Publisher
from citelens.lsp.verification import Progress, Verifier
from citelens.workspace.changes import Changes, Edit
from citelens.workspace.engine import Engine
from citelens.workspace.events import (
    Changed,
    Event,
    FoldersChanged,
    Gathered,
    Opened,
    ReportDue,
    Saved,
    SettingsChanged,
)
from citelens.workspace.queries import Queries

log = logging.getLogger("citelens")
#: Edits arriving within this many seconds are analysed together.
GATHER_S = 0.004

F = TypeVar("F", bound=Callable[..., Any])


class CiteLensServer(LanguageServer):
    """The editor session: the engine (read through ``session``, changed through
    :meth:`apply`) and the LSP side of it."""

    def __init__(self) -> None:
        super().__init__("citelens", __version__, protocol_cls=CiteLensProtocol)
        self._engine = Engine(
            from_sources(), log=self.log_once, on_news=lambda delay: self.publisher.soon(delay, limit=False)
        )
        #: The engine as the handlers read it: queries only (changes go through :meth:`apply`).
        self.session: Queries = self._engine
        self.flags = ClientFlags()
        self.publisher = Publisher(self.text_document_publish_diagnostics, due=self.publish)
        self.verifier = Verifier(
            self.session,
            self.handle,
            log_line=self.log_line,
            progress=lambda total: Progress(self.work_done_progress, self.flags.work_done_progress, total),
            show=self.show_message,
        )
        #: Called with the changes of every event (lsp/papers.py adds the paper a
        #: completion item offered when its key is typed in and undefined).
        self.after_changes: list[Callable[[Changes], None]] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._pending = False  # edits the engine has and has not analysed yet
        self._logged: set[str] = set()

    # ------------------------------------------------------------------ the engine
    def apply(self, event: Event) -> Changes:
        """The one way the editor changes the engine."""
        return self._engine.apply(event)

    def handle(self, event: Event) -> None:
        """Apply ``event`` and send what it changed."""
        self.send(self.apply(event))

    def send(self, changes: Changes) -> None:
        """Diagnostics of the files that changed (a report soon, for a stream of verdicts),
        the run to start, cancel or hurry, the retry timer, the lines to show and log, the
        typed offered papers' entries: from ``changes`` alone, no engine call (but
        ``ReportDue`` when the client's position encoding changed, which moves every position)."""
        if changes.reported:
            self.publisher.encoding = self.encoding
            shown = self.apply(ReportDue(every=True)) if self.publisher.encoding_changed() else changes
            self.publisher.publish_changes(shown)
        if changes.news:
            self.publisher.soon()
        self.verifier.follow(changes)
        for line in changes.said:
            self.log_line(line)
        for hook in self.after_changes:
            hook(changes)

    # ------------------------------------------------------------------ the client
    def initialized_with(self, params: lsp.InitializeParams) -> None:
        """What ``initialize`` tells: the client's flags, settings and workspace folders."""
        self.flags = ClientFlags.from_capabilities(params.capabilities)
        self.publisher.related_information = self.flags.related_information
        opts = params.initialization_options
        self.handle(SettingsChanged(opts if isinstance(opts, dict) else {}))
        folders = params.workspace_folders or []
        roots = [p for f in folders if (p := path_of(f.uri))]
        if not roots and params.root_uri and (p := path_of(params.root_uri)):
            roots = [p]
        self.handle(FoldersChanged(added=tuple(roots)))

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        if isinstance(enc, lsp.PositionEncodingKind):
            return str(enc.value)
        return str(enc or "utf-16")

    def log_once(self, message: str, level: lsp.MessageType = lsp.MessageType.Warning) -> None:
        """A line in the client's log (never a pop-up), once per distinct message."""
        if message in self._logged:
            return
        self._logged.add(message)
        self.log_line(message, level)

    def show_message(self, message: str) -> None:
        """A notification the user should act on (a source out, and its fix): a pop-up
        (``window/showMessage``); its line is in the log already."""
        try:
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"CiteLens: {message}")
            )
        except Exception:  # no client attached (tests of the engine)
            pass

    def log_line(self, message: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        log.info(message)
        try:
            self.window_log_message(lsp.LogMessageParams(type=level, message=message))
        except Exception:  # no client attached (tests of the engine)
            pass

    def offset(self, path: str, pos: lsp.Position) -> int | None:
        """The character offset of an LSP position in ``path`` (None: no such document)."""
        index = self.session.store.line_index(path)
        if index is None:
            return None
        return index.offset(pos.line, pos.character, self.encoding)

    # ------------------------------------------------------------------ documents
    def publish(self) -> None:
        """Send what changed since the last send (background results)."""
        self.handle(ReportDue())

    def edited(self, edit: Edit) -> None:
        """An edit of an open document (``Changed``: the store has the text at once); one
        :meth:`flush` follows a burst of edits (queued edits are not analysed one by one).
        Request handlers call :meth:`flush` first."""
        self.apply(Changed(edit))
        self._pending = True
        if self._flush_handle is None:
            try:
                self._flush_handle = asyncio.get_running_loop().call_later(GATHER_S, self.flush)
            except RuntimeError:  # no loop (tests of the engine): do it now
                self.flush()

    def dirty(self, kind: Callable[[str], bool]) -> bool:
        """Whether a pending edit is of a document ``kind`` accepts."""
        return self._pending and any(kind(p) for p in self.session.projects.edited)

    def flush(self) -> None:
        """Analyse the pending edits (``Gathered``) and send the changes."""
        self._cancel_flush()
        if self._pending:
            self._pending = False
            self.handle(Gathered())

    def _cancel_flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None

    def opened(self, edit: Edit) -> None:
        """``didOpen``: its project found, analysed and verified now (with pending edits)."""
        self._cancel_flush()
        self._pending = False
        self.handle(Opened(edit))

    def check_now(self, path: str) -> None:
        """On save: the project found again, analysed, verified without the debounce."""
        self._cancel_flush()
        self._pending = False
        self.handle(Saved(path))


def guarded(fn: F) -> F:
    """Nothing raises out of a handler: log it and answer nothing."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("handler %s failed", fn.__name__)
                return None

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception:
            log.exception("handler %s failed", fn.__name__)
            return None

    return wrapper  # type: ignore[return-value]
