"""The editor's projects: the documents (open buffers shadow the files on disk), the
projects they form, their local analyses, and the identity and plain-Unicode view of
every entry. No verdict, no finding, no network here: the engine
(``workspace/engine.py``) changes these on its events and joins them with the verdicts.

* :class:`~citelens.workspace.store.DocumentStore`: texts and parses by path;
* the workspace folders, each file's project root, and each root's
  :class:`~citelens.workspace.index.Analysis` (a project is analysed while one of its
  files is open);
* an entry's identity is its path, key and text (:meth:`Projects.entry_key`): an edit inside
  it is a new entry; its view and content hash are kept by that identity, so an unchanged
  entry is never read again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.core.model import BibEntry, Citation, EntryView
from citelens.core.settings import Settings
from citelens.core.text import EditedText, LineIndex
from citelens.documents.bibtex.view import entry_view
from citelens.verify.identity import content_hash
from citelens.workspace.bibsearch import haystacks
from citelens.workspace.files import documents_under
from citelens.workspace.index import Analysis, analyze
from citelens.workspace.project import (
    Project,
    build_project,
    documents_using_bib,
    find_root,
    projects_using_bib,
)
from citelens.workspace.store import DocumentStore

#: An entry's identity: its .bib path, its key and its text.
EntryKey = tuple[str, str, str]
Log = Callable[[str], None]
#: Bound on the entry views and hashes kept (they are rebuilt when needed).
_MAX_MEMO = 200_000


def workspace_sources(
    roots: Iterable[str], limit: int = 5000, kinds: tuple[DocKind, ...] = CITING
) -> list[str]:
    """The documents under the workspace folders (``workspace/files.py``: the folders
    ``citelens check`` skips are skipped), at most ``limit``."""
    out: list[str] = []
    for root in roots:
        for path in documents_under(root, kinds):
            out.append(path)
            if len(out) >= limit:
                return out
    return out


class Projects:
    """The documents, projects and entries of one workspace."""

    def __init__(self, settings: Settings, log: Log) -> None:
        self.settings = settings
        self.log = log
        self.store = DocumentStore(settings.extra_cite_commands, settings.file_encoding)
        self.store.on_skip = lambda path, why: self.log(f"skipped {path}: {why}")
        self.workspace_roots: list[str] = []
        self.analyses: dict[str, Analysis] = {}  # project root -> analysis
        self.roots: dict[str, str] = {}  # file -> project root
        #: Open documents edited since the engine last analysed them.
        self.edited: set[str] = set()
        self._views: dict[EntryKey, EntryView] = {}
        self._hashes: dict[EntryKey, str] = {}
        self._haystacks: dict[str, tuple[object, list[str]]] = {}  # .bib -> (stamp, texts)

    def configure(self, settings: Settings) -> None:
        """New settings: every file of a known project is read again (encodings, commands)."""
        self.settings = settings
        self.store.extra_cite_commands = settings.extra_cite_commands
        self.store.set_file_encoding(settings.file_encoding)
        for path in list(self.roots):
            self.store.invalidate(path)

    # ------------------------------------------------------------------ documents

    def edit(
        self,
        path: str,
        text: str | EditedText,
        version: int,
        edit: tuple[str | EditedText, int, int] | None,
        index: LineIndex | None,
    ) -> None:
        """An open document's new text: the store has it at once (completion reads the line
        being typed); its analysis waits for the engine's next update."""
        self.store.open(path, text, version, edit, index)
        self.edited.add(path)

    def take_edited(self) -> list[str]:
        """The documents edited since the last call, in no particular order."""
        edited, self.edited = self.edited, set()
        return list(edited)

    def close(self, path: str) -> None:
        """An open document was closed: the disk's file counts again (its projects are
        analysed again, if it exists), projects no open document needs are dropped."""
        self.store.close(path)
        self.store.invalidate(path)
        self.forget_unused()
        if os.path.exists(path):
            for root in self.projects_using(path):
                self.analyse(root)

    def files_changed(self, paths: Iterable[str]) -> bool:
        """Files changed on disk (not open ones: their buffers count): their projects are
        analysed again. Whether any analysed project used one."""
        touched = False
        for path in paths:
            if not self.store.is_open(path):
                self.store.invalidate(path)
                for root in self.projects_using(path):
                    self.analyse(root)
                    touched = True
        return touched

    def folders_changed(self, added: Iterable[str], removed: Iterable[str]) -> None:
        gone = set(removed)
        roots = [r for r in self.workspace_roots if r not in gone]
        roots.extend(p for p in added if p not in roots)
        self.workspace_roots = roots

    # ------------------------------------------------------------------ entries

    def entry_key(self, entry: BibEntry) -> EntryKey:
        """Identifies an entry by its text: an edit inside it (a fixed DOI) is a new entry."""
        return (entry.path, entry.key, self.store.slice(entry.path, entry.span.start, entry.span.end))

    def entry_view(self, entry: BibEntry, analysis: Analysis | None = None) -> EntryView | None:
        k = self.entry_key(entry)
        view = self._views.get(k)
        if view is None:
            try:
                view = entry_view(entry, analysis.first if analysis else {})
            except Exception as exc:  # an entry we cannot read is not worth a crash
                self.log(f"could not read entry {entry.key}: {exc}")
                return None
            if len(self._views) > _MAX_MEMO:
                self._views.clear()
            self._views[k] = view
        return view

    def entry_hash(self, entry: BibEntry, analysis: Analysis | None) -> str | None:
        """The content hash verdicts are kept under (None: the entry cannot be read)."""
        k = self.entry_key(entry)
        h = self._hashes.get(k)
        if h is None:
            view = self.entry_view(entry, analysis)
            if view is None:
                return None
            h = content_hash(view)
            if len(self._hashes) > _MAX_MEMO:
                self._hashes.clear()
            self._hashes[k] = h
        return h

    def known_hash(self, entry: BibEntry) -> str | None:
        """The content hash of ``entry`` if it was computed (never reads the entry)."""
        return self._hashes.get(self.entry_key(entry))

    # ------------------------------------------------------------------ projects

    def workspace_root(self, path: str) -> str | None:
        return next((r for r in self.workspace_roots if path.startswith(r + os.sep)), None)

    def root_of(self, path: str) -> str:
        root = self.roots.get(path)
        if root is None:
            root = find_root(self.store, path, self.workspace_root(path))
            self.roots[path] = root
        return root

    def projects_using(self, path: str) -> list[str]:
        """Roots of the analysed projects that include ``path`` (a source or a .bib)."""
        return [
            root
            for root, a in self.analyses.items()
            if path in a.project.bib_paths or path in a.project.files
        ]

    def refind(self, path: str) -> None:
        """``path`` was opened or saved: its project is found again when next analysed."""
        self.roots.pop(path, None)

    def reanalyse(self, path: str) -> None:
        """Analyse again every project ``path`` belongs to (finding its project if new)."""
        kind = kind_of(path)
        roots = set(self.projects_using(path))
        if kind in CITING:
            if self.store.is_open(path) and path not in roots:
                self.roots.pop(path, None)
            roots.add(self.root_of(path))
        elif kind is DocKind.BIB and not roots and self.store.is_open(path):
            roots.add(path)
        for root in roots:
            self.analyse(root)

    def reanalyse_all(self) -> None:
        for root in list(self.analyses):
            self.analyse(root)

    def analyse(self, root: str) -> Analysis:
        if kind_of(root) is DocKind.BIB:
            project = Project(root=root, files=[], bib_paths=[root])
        else:
            project = build_project(
                self.store, root, self.settings.extra_bibliographies, self.workspace_root(root)
            )
        analysis = analyze(self.store, project, self.settings)
        self.analyses[root] = analysis
        for f in project.files:
            self.roots[f] = root
        return analysis

    def forget_unused(self) -> None:
        """Drop analyses no open document needs any more."""
        open_paths = set(self.store.open_paths())
        for root, a in list(self.analyses.items()):
            members = set(a.project.files) | set(a.project.bib_paths) | {root}
            if not members & open_paths:
                del self.analyses[root]

    def documents_using_bib(self, bib_path: str) -> list[str]:
        """Source files of every project whose bibliography is ``bib_path``: the analysed
        projects and those of the workspace's other documents (built, not analysed). The
        scope of any cite-key rename caused by editing that .bib."""
        return documents_using_bib(bib_path, self.all_projects())

    def projects_using_bib(self, bib_path: str) -> list[Project]:
        """Every project (open or not) whose bibliography is ``bib_path`` (by real path)."""
        return projects_using_bib(bib_path, self.all_projects())

    def all_projects(self) -> list[Project]:
        """The analysed projects and those of the workspace's other documents (built, not
        analysed)."""
        projects = {root: a.project for root, a in self.analyses.items()}
        known = {f for p in projects.values() for f in p.files}
        for path in workspace_sources(self.workspace_roots):
            if path in known:
                continue
            root = self.root_of(path)
            if root not in projects:
                projects[root] = build_project(
                    self.store, root, self.settings.extra_bibliographies, self.workspace_root(root)
                )
                known.update(projects[root].files)
        return list(projects.values())

    def bibliographies(self) -> list[str]:
        """The .bib files of the analysed projects, then those in the workspace folders."""
        paths: dict[str, None] = {}
        for a in self.analyses.values():
            paths.update(dict.fromkeys(a.project.bib_paths))
        paths.update(dict.fromkeys(workspace_sources(self.workspace_roots, kinds=(DocKind.BIB,))))
        return list(paths)

    def entry_haystacks(self, path: str, entries: list[BibEntry]) -> list[str]:
        """The searchable text of each entry of the .bib ``path`` (``workspace/bibsearch``),
        kept while the file is unchanged."""
        stamp = self.store.stamp(path)
        hit = self._haystacks.get(path)
        if hit is None or hit[0] != stamp:
            hit = (stamp, haystacks(self.store.text(path) or "", entries))
            self._haystacks[path] = hit
        return hit[1]

    # ------------------------------------------------------------------ lookups

    def analysis_for(self, path: str) -> Analysis | None:
        root = self.roots.get(path)
        if root is not None and root in self.analyses:
            return self.analyses[root]
        for a in self.analyses.values():
            if path in a.project.bib_paths:
                return a
        return None

    def citation_at(self, path: str, offset: int) -> Citation | None:
        a = self.analysis_for(path)
        doc = a.sources.get(path) if a else self.store.source(path)
        if doc is None:
            return None
        return next((c for c in doc.citations if c.span.start <= offset <= c.span.end), None)

    def command_at(self, path: str, offset: int) -> list[Citation]:
        """The citations of the citation command whose extent holds ``offset``, in order."""
        a = self.analysis_for(path)
        doc = a.sources.get(path) if a else self.store.source(path)
        if doc is None:
            return []
        hit = next((c for c in doc.citations if c.command_span.start <= offset < c.command_span.end), None)
        if hit is None:
            return []
        return [c for c in doc.citations if c.command_span == hit.command_span]

    def entry_at(self, path: str, offset: int) -> BibEntry | None:
        bib = self.store.bib(path)
        if bib is None:
            return None
        return next((e for e in bib.entries if e.span.start <= offset < e.span.end), None)

    def key_at(self, path: str, offset: int) -> tuple[str, Analysis | None] | None:
        """The cite key at ``offset`` (a citation, or an entry's key in a .bib)."""
        if kind_of(path) is DocKind.BIB:
            entry = self.entry_at(path, offset)
            if entry is None or not entry.key_span.contains(offset):
                return None
            return entry.key, self.analysis_for(path)
        c = self.citation_at(path, offset)
        return (c.key, self.analysis_for(path)) if c is not None else None

    def all_citations(self, key: str, bib_path: str | None = None) -> list[tuple[str, Citation]]:
        """Every citation of ``key`` in the analysed projects and the workspace folders;
        with ``bib_path``, only in the documents of the projects using that .bib."""
        paths: dict[str, None] = {}
        if bib_path is not None:
            paths = dict.fromkeys(self.documents_using_bib(bib_path))
        else:
            for a in self.analyses.values():
                paths.update(dict.fromkeys(a.project.files))
            paths.update(dict.fromkeys(workspace_sources(self.workspace_roots)))
        out: list[tuple[str, Citation]] = []
        for p in paths:
            doc = self.store.source(p)
            if doc is not None:
                out.extend((p, c) for c in doc.citations if c.key == key)
        return out
