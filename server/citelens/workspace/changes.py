"""What an event changed, as plain data for the language server.

:meth:`Engine.apply <citelens.workspace.engine.Engine.apply>` answers every event with
:class:`Changes`: the findings of every file whose findings (or text) changed since the last
report, an empty list for a file that has none any more, each named file's line index and
version; the verification run to start (:class:`Run`) or to cancel, when to retry the
entries an outage left unverified (:class:`Retry`), the lines to show and to log. The
language server renders it without asking the engine anything else (``lsp/publisher.py``,
``lsp/verification.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from citelens.core.findings import Finding
from citelens.core.model import EntryView
from citelens.core.text import EditedText, LineIndex
from citelens.workspace.store import DocumentStore

if TYPE_CHECKING:
    from citelens.sources.transport import Sources


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


@dataclass(frozen=True, slots=True)
class Run:
    """A verification run the engine asks for: ``views``, one per entry key, checked after
    ``delay_s`` (the debounce; 0: now). Its verdicts come back as events naming ``id``."""

    id: int
    views: tuple[EntryView, ...]
    delay_s: float


@dataclass(frozen=True, slots=True)
class Retry:
    """When to check again the entries an outage left UNVERIFIED: ``hashes`` after
    ``after_s`` seconds; ``after_s`` None: nothing to retry (a timer set before is cancelled)."""

    after_s: float | None
    hashes: frozenset[str] = frozenset()


@dataclass(slots=True)
class Changes:
    """Everything the language server does after an event, with no engine call."""

    #: Whether the findings were reported (``files``: every file whose findings changed
    #: since the last report); False: this event reported nothing (not "nothing changed").
    reported: bool = False
    files: list[FileFindings] = field(default_factory=list)
    #: Line index, version and stamp of every file the findings name (their own file and
    #: the files of their related locations), to turn offsets into positions.
    indexes: dict[str, LineIndex | None] = field(default_factory=dict)
    versions: dict[str, int | None] = field(default_factory=dict)
    stamps: dict[str, object] = field(default_factory=dict)
    #: A new verification run (the engine now counts its entries as being checked; it
    #: supersedes the running one); None: nothing new to verify, or a running run covers it.
    run: Run | None = None
    #: A run still waiting for its debounce starts now (opened, saved: nothing new to plan).
    hurry: bool = False
    #: The running run is superseded (new settings): cancel it; ``retired``: the clients it
    #: used, to close once it has stopped.
    cancel_run: bool = False
    retired: Sources | None = None
    #: When to check the entries an outage left unverified (None: no change).
    retry: Retry | None = None
    #: Background results to report soon (coalesced: a stream of verdicts).
    news: bool = False
    #: Lines the user should see once (a source that refused, with its fix), and log lines.
    shown: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
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
        out = Changes(reported=True)
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
