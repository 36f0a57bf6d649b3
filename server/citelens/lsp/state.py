"""The language server's state: one :class:`~citelens.workspace.session.Session` plus what
only an LSP server has (the client's flags, what it was sent, the background run).

Feature modules (hover, completion, actions, ...) get a :class:`CiteLensServer` and read the
session through it; ``lsp/server.py`` wires them together. Edits that arrive together are
analysed once (:meth:`CiteLensServer.mark_dirty`); a request first applies pending edits
(:meth:`CiteLensServer.flush`), so it answers from the latest text.
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
        )
        self.session.on_change = lambda delay: self.publisher.soon(delay, limit=False)
        self._dirty: set[str] = set()
        #: Called with the paths analysed by each :meth:`flush` (lsp/papers.py adds the
        #: paper a completion item offered when its key is typed in and undefined).
        self.after_flush: list[Callable[[set[str]], None]] = []
        self._flush_handle: asyncio.TimerHandle | None = None
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
            self.verifier.settings_changed()

    def publish(self) -> None:
        self.publisher.encoding = self.encoding
        self.publisher.publish()

    def mark_dirty(self, path: str) -> None:
        """Note a changed document; one refresh follows a burst of changes (queued edits
        are not analysed one by one). Request handlers call :meth:`flush` first."""
        self._dirty.add(path)
        if self._flush_handle is None:
            try:
                self._flush_handle = asyncio.get_running_loop().call_later(GATHER_S, self.flush)
            except RuntimeError:  # no loop (tests of the engine): do it now
                self.flush()

    def dirty(self, kind: Callable[[str], bool]) -> bool:
        """Whether a pending edit is of a document ``kind`` accepts."""
        return any(kind(p) for p in self._dirty)

    def flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._dirty:
            return
        paths, self._dirty = self._dirty, set()
        for path in paths:
            self.session.reanalyse(path)
        self.publish()
        self.verifier.schedule()
        for hook in self.after_flush:
            hook(paths)

    def check_now(self, path: str) -> None:
        """On open and save: find the project again, analyse, verify without the debounce."""
        self.session.roots.pop(path, None)
        self._dirty.discard(path)
        self.session.reanalyse(path)
        self.publish()
        self.verifier.schedule(delay=0.0)

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
