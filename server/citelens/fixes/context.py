"""What the fix rules read, as a small protocol: the editor (:class:`SessionContext`, over
the engine's read-only side, :class:`~citelens.workspace.queries.Queries`) and ``citelens check --fix``
(:class:`CheckContext`, over a finished check) give the same rules the same answers, so
they offer the same edits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from citelens.core.model import BibEntry, BibFile, EntryView, SourceDocument
from citelens.core.settings import Settings
from citelens.documents.bibtex.view import entry_view
from citelens.verify.status import Verification
from citelens.workspace.citing import Citing, citing_documents
from citelens.workspace.project import Project
from citelens.workspace.queries import Queries
from citelens.workspace.store import DocumentStore


class FixContext(Protocol):
    """The texts, parses and verdicts a fix is computed from (never the network)."""

    @property
    def settings(self) -> Settings: ...

    def text(self, path: str) -> str | None: ...

    def bib(self, path: str) -> BibFile | None: ...

    def version(self, path: str) -> int | None:
        """The editor's version of an open document (None: no versions, the command line)."""
        ...

    def source(self, path: str) -> SourceDocument | None: ...

    def encoding(self, path: str) -> str:
        """The encoding ``path`` is written in (``buffer``: an editor's own text)."""
        ...

    def verdict(self, entry: BibEntry) -> Verification | None:
        """The verdict on ``entry`` as it is now (None when it changed since)."""
        ...

    def view(self, entry: BibEntry) -> EntryView | None: ...

    def citing(self, bib_path: str, keys: tuple[str, ...]) -> Citing:
        """The documents that may cite ``keys`` through ``bib_path`` (open or not)."""
        ...


class SessionContext:
    """The editor's answers: open buffers, the engine's verdicts by content hash."""

    def __init__(self, session: Queries) -> None:
        self.session = session

    @property
    def settings(self) -> Settings:
        return self.session.settings

    def text(self, path: str) -> str | None:
        return self.session.store.text(path)

    def bib(self, path: str) -> BibFile | None:
        return self.session.store.bib(path)

    def version(self, path: str) -> int | None:
        return self.session.store.version(path)

    def source(self, path: str) -> SourceDocument | None:
        return self.session.store.source(path)

    def encoding(self, path: str) -> str:
        return self.session.store.encoding(path)[0]

    def verdict(self, entry: BibEntry) -> Verification | None:
        return self.session.verdict(entry, self.session.analysis_for(entry.path))

    def view(self, entry: BibEntry) -> EntryView | None:
        return self.session.entry_view(entry, self.session.analysis_for(entry.path))

    def citing(self, bib_path: str, keys: tuple[str, ...]) -> Citing:
        return self.session.citing(bib_path, keys)


class CheckContext:
    """``citelens check``'s answers: the files as the check read them, the verdicts of its
    entries by place (their .bib and key: two papers' ``smith2020`` are two entries)."""

    def __init__(
        self,
        store: DocumentStore,
        verdicts: Mapping[tuple[str, str], Verification],
        settings: Settings,
        projects: Sequence[Project] = (),
    ) -> None:
        self.store = store
        self.verdicts = verdicts
        self._settings = settings
        self.projects = list(projects)

    @property
    def settings(self) -> Settings:
        return self._settings

    def text(self, path: str) -> str | None:
        return self.store.text(path)

    def bib(self, path: str) -> BibFile | None:
        return self.store.bib(path)

    def version(self, path: str) -> int | None:
        return None

    def source(self, path: str) -> SourceDocument | None:
        return self.store.source(path)

    def encoding(self, path: str) -> str:
        return self.store.encoding(path)[0]

    def verdict(self, entry: BibEntry) -> Verification | None:
        v = self.verdicts.get((entry.path, entry.key))
        return v if v is not None and v.key == entry.key else None

    def view(self, entry: BibEntry) -> EntryView | None:
        return entry_view(entry)

    def citing(self, bib_path: str, keys: tuple[str, ...]) -> Citing:
        return citing_documents(
            self.store, bib_path, keys, self.projects, self._settings.extra_bibliographies
        )
