"""The language server: one :class:`~citelens.workspace.session.Session` (the engine and
its state) plus what only an LSP server has: the client's flags (``lsp/flags.py``), what the
client was sent (``lsp/publisher.py``), the background run's task and progress
(``lsp/verification.py``), the lines already logged, and the timer that gathers edits.

Feature modules (hover, completion, actions, ...) get a :class:`CiteLensServer` and read the
session through it; ``lsp/server.py`` wires them together. An edit reaches the engine at
once (:meth:`CiteLensServer.edited`: ``Session.apply_edit``); edits that arrive together are
analysed by one ``Session.update`` (:meth:`CiteLensServer.flush`), whose :class:`Changes`
are sent with no other engine call (:meth:`CiteLensServer.send`). A request first flushes,
so it answers from the latest text.
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
from citelens.workspace.session import Session

log = logging.getLogger("citelens")
#: Edits arriving within this many seconds are analysed together.
GATHER_S = 0.004

F = TypeVar("F", bound=Callable[..., Any])


class CiteLensServer(LanguageServer):
    """The editor session: its workspace (``session``) and the LSP side of it."""

    def __init__(self) -> None:
        super().__init__("citelens", __version__, protocol_cls=CiteLensProtocol)
        self.session = Session(from_sources(), log=self.log_once)
        self.flags = ClientFlags()
        self.publisher = Publisher(self.session, self.text_document_publish_diagnostics)
        self.verifier = Verifier(
            self.session,
            publish=self.publish,
            publish_soon=self.publisher.soon,
            log_line=self.log_line,
            progress=lambda total: Progress(self.work_done_progress, self.flags.work_done_progress, total),
            show=self.show_message,
        )
        self.session.on_change = lambda delay: self.publisher.soon(delay, limit=False)
        #: Called with the changes of each :meth:`flush` (lsp/papers.py adds the paper a
        #: completion item offered when its key is typed in and undefined).
        self.after_flush: list[Callable[[Changes], None]] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._pending = False  # edits the session has and has not analysed yet
        self._logged: set[str] = set()

    # ------------------------------------------------------------------ the client
    def initialized_with(self, params: lsp.InitializeParams) -> None:
        """What ``initialize`` tells: the client's flags, settings and workspace folders."""
        self.flags = ClientFlags.from_capabilities(params.capabilities)
        self.publisher.related_information = self.flags.related_information
        opts = params.initialization_options
        self.apply_settings(opts if isinstance(opts, dict) else {})
        folders = params.workspace_folders or []
        roots = [p for f in folders if (p := path_of(f.uri))]
        if not roots and params.root_uri and (p := path_of(params.root_uri)):
            roots = [p]
        self.session.workspace_roots = roots

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

    # ------------------------------------------------------------------ changes
    def apply_settings(self, values: dict[str, Any] | None) -> None:
        if self.session.apply_settings(values):
            self.verifier.settings_changed(self.session.settings)

    def publish(self) -> None:
        """Send what changed since the last send (background results, closed files)."""
        self.publisher.encoding = self.encoding
        self.publisher.publish()

    def edited(self, edit: Edit) -> None:
        """An edit of an open document (engine crossing 1 of a keystroke: the store has the
        text at once); one :meth:`flush` follows a burst of edits (queued edits are not
        analysed one by one). Request handlers call :meth:`flush` first."""
        self.session.apply_edit(edit)
        self._pending = True
        if self._flush_handle is None:
            try:
                self._flush_handle = asyncio.get_running_loop().call_later(GATHER_S, self.flush)
            except RuntimeError:  # no loop (tests of the engine): do it now
                self.flush()

    def dirty(self, kind: Callable[[str], bool]) -> bool:
        """Whether a pending edit is of a document ``kind`` accepts."""
        return self._pending and any(kind(p) for p in self.session.edited)

    def flush(self) -> None:
        """Analyse the pending edits (engine crossing 2 of a keystroke) and send the changes."""
        self._cancel_flush()
        if self._pending:
            self._pending = False
            self.send(self.session.update())

    def _cancel_flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None

    def send(self, changes: Changes, verify_delay: float | None = None) -> None:
        """Diagnostics of the files that changed, a verification run for new entries, and
        the typed offered papers' entries: from ``changes`` alone, no engine call."""
        self.publisher.encoding = self.encoding
        self.publisher.publish_changes(changes)
        if changes.to_verify:
            self.verifier.start(changes.to_verify, verify_delay)
        elif verify_delay == 0.0:
            self.verifier.hurry()
        for hook in self.after_flush:
            hook(changes)

    def check_now(self, path: str) -> None:
        """On open and save: find the project again, analyse, verify without the debounce."""
        self._cancel_flush()
        self._pending = False
        self.send(self.session.update(recheck=[path]), verify_delay=0.0)

    def reanalyse_all(self) -> None:
        self.session.reanalyse_all()
        self.publish()
        self.verifier.schedule()


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
