"""What an update of the editor's workspace changed, as plain data for the language server.

:meth:`Session.update <citelens.workspace.session.Session.update>` applies the edits the
editor sent, analyses again and returns :class:`Changes`: the findings of every file whose
findings (or text) changed since the last report, an empty list for a file that has none
any more, each named file's line index and version, and the entries a new verification run
should check. The language server turns it into diagnostics without asking the engine
anything else (``lsp/publisher.py``): a keystroke crosses from ``lsp/`` into the engine once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from citelens.core.findings import Finding
from citelens.core.model import EntryView
from citelens.core.text import EditedText, LineIndex
from citelens.workspace.store import DocumentStore


@dataclass(frozen=True, slots=True)
class Edit:
    """An open document's text after an edit, as the editor sent it. ``edit``: (the text
    before, start, end), the range that one change replaced (a big document's, so the
    store re-reads only what it touched); ``index``: the line index moved by the edit."""

    path: str
    text: str | EditedText
    version: int
    edit: tuple[str | EditedText, int, int] | None = None
    index: LineIndex | None = None


@dataclass(slots=True)
class FileFindings:
    """One file's findings now (all of them: LSP has no partial update)."""

    path: str
    findings: list[Finding]
    version: int | None
    cleared: bool = False  # the file has no findings any more (it was reported before)


@dataclass(slots=True)
class Changes:
    """Everything the language server sends after an update, with no engine call."""

    files: list[FileFindings] = field(default_factory=list)
    #: Line index, version and stamp of every file the findings name (their own file and
    #: the files of their related locations), to turn offsets into positions.
    indexes: dict[str, LineIndex | None] = field(default_factory=dict)
    versions: dict[str, int | None] = field(default_factory=dict)
    stamps: dict[str, object] = field(default_factory=dict)
    #: Entries a new verification run checks (the session now counts them as being
    #: checked); empty: nothing new to verify, or a running check covers them.
    to_verify: list[EntryView] = field(default_factory=list)
    #: Papers completion offered whose key the documents now cite and no .bib defines
    #: (``lsp/papers.py`` adds their entries).
    typed_offers: list[Any] = field(default_factory=list)


Signature = tuple[object, ...]


class Reported:
    """The findings last reported per file (by signature), so that an update names only
    the files whose findings or text changed."""

    def __init__(self) -> None:
        self._signatures: dict[str, Signature] = {}

    def forget(self) -> None:
        """Report every file again (the client's position encoding changed)."""
        self._signatures.clear()

    def changes(self, store: DocumentStore, by_path: dict[str, list[Finding]]) -> Changes:
        out = Changes()
        for path, findings in by_path.items():
            sig, paths = _signature(store, path, findings)
            if self._signatures.get(path) == sig:
                continue
            self._signatures[path] = sig
            out.files.append(FileFindings(path, findings, store.version(path)))
            for p in paths:
                if p not in out.indexes:
                    out.indexes[p] = store.line_index(p)
                    out.versions[p] = store.version(p)
                    out.stamps[p] = store.stamp(p)
        for path in [p for p in self._signatures if p not in by_path]:  # no findings any more
            del self._signatures[path]
            out.files.append(FileFindings(path, [], None, cleared=True))
        return out


def _signature(store: DocumentStore, path: str, findings: list[Finding]) -> tuple[Signature, set[str]]:
    """What a file's diagnostics are made of: its findings and the stamps of the files
    they name (an edit moves positions even when the findings are the same)."""
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
    stamps = tuple((p, store.stamp(p)) for p in sorted(paths))
    return (stamps, tuple(items)), paths
