"""Publishing diagnostics: the engine's findings as ``textDocument/publishDiagnostics``.

:meth:`Publisher.publish_changes` sends, for every file whose findings changed (the engine's
:class:`~citelens.workspace.changes.Changes`: a file whose findings and texts did not
change since the last report is not in it), its whole list (LSP has no partial update),
and an empty list to a file that no longer has any; positions come from the line indexes
the changes carry. :meth:`Publisher.soon` coalesces the reports asked for by background
work (verdicts, claim checks) to one per :data:`EVERY_S`: when it is due, the server
applies ``ReportDue`` and sends its changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types as lsp

from citelens.core.text import LineIndex
from citelens.lsp.convert import RelatedMemo, to_diagnostic, uri_of
from citelens.workspace.changes import Changes

log = logging.getLogger("citelens")
#: Background results are published at most this often (seconds).
EVERY_S = 1.0

Send = Callable[[lsp.PublishDiagnosticsParams], None]


class Publisher:
    def __init__(self, send: Send, due: Callable[[], None]) -> None:
        self.send = send
        self._due_report = due  # a report is due (the server applies ReportDue)
        self.published: dict[str, list[lsp.Diagnostic]] = {}  # uri -> what the client has
        self._related: RelatedMemo = {}
        self._encoding_sent = "utf-16"
        self._due: asyncio.TimerHandle | None = None
        self._last = 0.0
        self.encoding = "utf-16"
        self.related_information = False

    def encoding_changed(self) -> bool:
        """Whether every position the client has moved (its position encoding changed
        since the last send, and it has diagnostics): every file is to be reported again."""
        changed = self.encoding != self._encoding_sent
        self._encoding_sent = self.encoding
        return changed and bool(self.published)

    def publish_changes(self, changes: Changes) -> None:
        """Diagnostics for the files ``changes`` names, converted from it alone (their line
        indexes travel with it): a file whose diagnostics the client has already is skipped."""
        self._cancel_due()
        positions = _Positions(changes)
        for ff in changes.files:
            uri = uri_of(ff.path)
            if ff.cleared:  # a file that no longer has any
                if self.published.get(uri):
                    self.send(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
                self.published.pop(uri, None)
                continue
            diags = [
                to_diagnostic(positions, f, self.encoding, self.related_information, self._related)
                for f in ff.findings
            ]
            diags.sort(key=lambda d: (d.range.start.line, d.range.start.character, str(d.code), d.message))
            if self.published.get(uri) != diags or uri not in self.published:
                self.published[uri] = diags
                self.send(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=ff.version))

    def soon(self, delay_s: float = 0.0, *, limit: bool = True) -> None:
        """Report after ``delay_s`` and, with ``limit`` (a stream of verdicts), at most once
        per :data:`EVERY_S` (the first at once); requests that arrive meanwhile share it."""
        if self._due is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        wait = max(delay_s, self._last + EVERY_S - loop.time()) if limit else delay_s
        self._due = loop.call_later(wait, self._publish_due)

    def _publish_due(self) -> None:
        self._due = None
        try:
            self._due_report()
        except Exception:
            log.exception("publishing diagnostics failed")

    def _cancel_due(self) -> None:
        if self._due is not None:
            self._due.cancel()
            self._due = None
        try:
            self._last = asyncio.get_running_loop().time()
        except RuntimeError:
            pass


class _Positions:
    """The line indexes, versions and stamps an update carries, read as a store's."""

    def __init__(self, changes: Changes) -> None:
        self.changes = changes

    def line_index(self, path: str) -> LineIndex | None:
        return self.changes.indexes.get(path)

    def version(self, path: str) -> int | None:
        return self.changes.versions.get(path)

    def stamp(self, path: str) -> object:
        return self.changes.stamps.get(path)
