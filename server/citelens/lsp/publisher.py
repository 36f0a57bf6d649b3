"""Publishing diagnostics: the session's findings as ``textDocument/publishDiagnostics``.

:meth:`Publisher.publish` sends, for every file whose set changed, its whole list (LSP
has no partial update), and an empty list to a file that no longer has any. Converting
offsets to positions is the costly part: a file whose findings and texts did not change
since the last publish is skipped. :meth:`Publisher.soon` coalesces publishes asked for
by background work (verdicts, claim checks) to one per :data:`EVERY_S`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types as lsp

from citelens.core.findings import Finding
from citelens.lsp.convert import RelatedMemo, to_diagnostic, uri_of
from citelens.workspace.session import Session

log = logging.getLogger("citelens")
#: Background results are published at most this often (seconds).
EVERY_S = 1.0

Send = Callable[[lsp.PublishDiagnosticsParams], None]


class Publisher:
    def __init__(self, session: Session, send: Send) -> None:
        self.session = session
        self.send = send
        self.published: dict[str, list[lsp.Diagnostic]] = {}  # uri -> what the client has
        self._signatures: dict[str, tuple[object, ...]] = {}
        self._related: RelatedMemo = {}
        self._due: asyncio.TimerHandle | None = None
        self._last = 0.0
        self.encoding = "utf-16"
        self.related_information = False

    def publish(self) -> None:
        """Push diagnostics for every file whose set changed (and clear stale ones)."""
        self._cancel_due()
        store = self.session.store
        by_path: dict[str, list[Finding]] = {}
        for f in self.session.findings():  # each finding once
            by_path.setdefault(f.path, []).append(f)
        for path in store.open_paths():  # an open document always gets an answer
            by_path.setdefault(path, [])
        stale = set(self.published)
        for path, fs in by_path.items():
            uri = uri_of(path)
            stale.discard(uri)
            sig = self._signature(path, fs)
            if uri in self.published and self._signatures.get(uri) == sig:
                continue
            self._signatures[uri] = sig
            diags = [
                to_diagnostic(store, f, self.encoding, self.related_information, self._related) for f in fs
            ]
            diags.sort(key=lambda d: (d.range.start.line, d.range.start.character, str(d.code), d.message))
            if self.published.get(uri) != diags or uri not in self.published:
                self.published[uri] = diags
                self.send(
                    lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=store.version(path))
                )
        for uri in stale:  # files that no longer have any
            if self.published.get(uri):
                self.send(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            self.published.pop(uri, None)
            self._signatures.pop(uri, None)

    def soon(self, delay_s: float = 0.0, *, limit: bool = True) -> None:
        """Publish after ``delay_s`` and, with ``limit`` (a stream of verdicts), at most once
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
            self.publish()
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

    def _signature(self, path: str, findings: list[Finding]) -> tuple[object, ...]:
        paths = {path}
        items = []
        for f in findings:
            rel = tuple((r.path, r.span.start, r.span.end, r.message) for r in f.related)
            paths.update(r[0] for r in rel)
            items.append(
                (
                    f.code,
                    f.span.start,
                    f.span.end,
                    f.message,
                    f.severity,
                    rel,
                    tuple(sorted(f.data.items(), key=lambda kv: kv[0]))
                    if f.data and len(f.data) < 8
                    else id(f.data),
                )
            )
        stamps = tuple((p, self.session.store.stamp(p)) for p in sorted(paths))
        return (self.encoding, stamps, tuple(items))
