"""Between the engine's model (paths, character spans, findings) and LSP types."""

from __future__ import annotations

import functools
from typing import Protocol

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from citelens.core.findings import Finding, code_url
from citelens.core.model import Span
from citelens.core.severity import Severity
from citelens.core.text import LineIndex

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFORMATION: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


@functools.lru_cache(maxsize=8192)
def uri_of(path: str) -> str:
    return from_fs_path(path) or f"file://{path}"


def path_of(uri: str) -> str | None:
    return to_fs_path(uri)


def to_range(index: LineIndex, span: Span, encoding: str) -> lsp.Range:
    s, e = index.range(span, encoding)
    return lsp.Range(lsp.Position(s.line, s.character), lsp.Position(e.line, e.character))


def span_range(store: Positions, path: str, span: Span, encoding: str) -> lsp.Range:
    index = store.line_index(path)
    if index is None:
        return lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    return to_range(index, span, encoding)


RelatedMemo = dict[tuple[object, ...], lsp.DiagnosticRelatedInformation]


class Positions(Protocol):
    """Where offsets become positions: a DocumentStore, or the Changes of an update."""

    def line_index(self, path: str) -> LineIndex | None: ...
    def version(self, path: str) -> int | None: ...
    def stamp(self, path: str) -> object: ...


def to_diagnostic(
    store: Positions,
    f: Finding,
    encoding: str,
    related_support: bool = True,
    memo: RelatedMemo | None = None,
) -> lsp.Diagnostic:
    """``memo`` keeps related locations between calls: every citation of a key points at
    the same .bib entry, whose position only changes with the .bib's text."""
    related = None
    if related_support and f.related:
        related = []
        for r in f.related:
            k = (r.path, r.span, r.message, encoding, store.stamp(r.path))
            info = memo.get(k) if memo is not None else None
            if info is None:
                info = lsp.DiagnosticRelatedInformation(
                    location=lsp.Location(uri_of(r.path), span_range(store, r.path, r.span, encoding)),
                    message=r.message,
                )
                if memo is not None:
                    if len(memo) > 50_000:
                        memo.clear()
                    memo[k] = info
            related.append(info)
    data: dict[str, object] = dict(f.data)
    data.setdefault("code", f.code)
    if f.key is not None:
        data.setdefault("key", f.key)
    version = store.version(f.path)
    if version is not None:
        data["version"] = version
    return lsp.Diagnostic(
        range=span_range(store, f.path, f.span, encoding),
        message=f.message,
        severity=_SEVERITY[f.severity],
        code=f.code,
        code_description=lsp.CodeDescription(href=code_url(f.code)),
        source="citelens",
        related_information=related,
        data=data,
    )
