"""One workspace as an editor sees it, with no LSP in it.

A :class:`Session` holds what the language server knows between two keystrokes:

* the settings, and the documents (:class:`~citelens.workspace.store.DocumentStore`: open
  buffers shadow the files on disk);
* the projects the documents form (root file, included files, bibliographies) and their
  local analysis (:mod:`citelens.workspace.index`);
* the identity of every entry (its path, key and text: an edit inside it is a new entry),
  its plain-Unicode view, and the verdicts known for it, by content hash;
* the pipeline (``workspace/pipeline.py``: the process's scholarly clients, cache and
  snapshot), the claim checker and its queue, the paper search of cite-while-writing;
* the findings of every project, by source (local checks, verification, claims), and what
  was last reported of them.

The language server (``citelens.lsp``) keeps one Session: a keystroke is
:meth:`Session.apply_edit` then :meth:`Session.update`, whose
:class:`~citelens.workspace.changes.Changes` it sends; the background verification run
(``lsp/verification.py``) fills its verdicts.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from citelens.checks.claims import ClaimQueue, ClaimSite, claim_findings
from citelens.checks.duplicates import Pairs, text_duplicates
from citelens.checks.verification import citation_findings, entry_level_findings
from citelens.claims.checker import ClaimChecker
from citelens.claims.llm import LLMConfig
from citelens.claims.paper import cited_paper
from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.core.findings import Finding
from citelens.core.model import BibEntry, Citation, EntryView
from citelens.core.settings import Settings, from_sources, untrusted_dropped
from citelens.documents.bibtex.view import entry_view
from citelens.verify.identity import content_hash
from citelens.verify.status import Status, Verification
from citelens.workspace.bibsearch import haystacks
from citelens.workspace.changes import Changes, Edit, Reported
from citelens.workspace.checked import Mark, hide_marked, load_project_file, project_file
from citelens.workspace.citesearch import PaperSearch
from citelens.workspace.files import documents_under
from citelens.workspace.index import Analysis, analyze
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.problems import distinct
from citelens.workspace.project import (
    Project,
    build_project,
    documents_using_bib,
    find_root,
    projects_using_bib,
)
from citelens.workspace.store import DocumentStore

log = logging.getLogger("citelens")

#: An entry's identity: its .bib path, its key and its text.
EntryKey = tuple[str, str, str]
Log = Callable[[str], None]
#: Bibliographies larger than this have only their cited entries verified in the editor.
MAX_UNCITED = 2000
#: Bound on the entry views and hashes kept (they are rebuilt when needed).
_MAX_MEMO = 200_000


def _quiet(_message: str) -> None:
    pass


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


class Session:
    """The documents, projects, entries and verdicts of one workspace."""

    def __init__(self, settings: Settings | None = None, log: Log = _quiet) -> None:
        self.settings: Settings = settings if settings is not None else from_sources()
        self.log = log
        self.store = DocumentStore(self.settings.extra_cite_commands, self.settings.file_encoding)
        self.store.on_skip = lambda path, why: self.log(f"skipped {path}: {why}")
        self.workspace_roots: list[str] = []
        self.analyses: dict[str, Analysis] = {}  # project root -> analysis
        self.roots: dict[str, str] = {}  # file -> project root
        self.views: dict[EntryKey, EntryView] = {}
        self.verdicts: dict[str, Verification] = {}  # content hash -> verdict
        self.checking: frozenset[str] = frozenset()  # content hashes a running check covers
        self.generation = 0  # bumps when the verdicts change
        #: Asked when a background result (a claim check) should be published.
        self.on_change: Callable[[float], None] = lambda _delay: None
        self._hashes: dict[EntryKey, str] = {}
        self._findings: dict[str, tuple[object, tuple[Any, ...], list[Finding]]] = {}
        #: project file -> (its modification time, its [checked] marks)
        self._project_marks: dict[str, tuple[int, Mapping[str, list[Mark]]]] = {}
        #: project root -> (ids of the views, the views, the pairs their text gives)
        self._text_pairs: dict[str, tuple[tuple[int, ...], list[EntryView], Pairs]] = {}
        #: The verification stage and this process's clients, cache and snapshot: the
        #: background run, ``citelens.report`` and the paper searches all use these.
        self.pipeline = Pipeline(self.settings, log)
        self._claims: ClaimChecker | None = None
        #: The claim diagnostics' queue and results, for the current checker.
        self.claim_queue = ClaimQueue()
        #: Background paper searches for completion (cite while writing).
        self.paper_search = PaperSearch(
            self.pipeline.sources, self.pipeline.cache, lambda: self.settings, self.log
        )
        #: Open documents edited since the last :meth:`update` (analysed by it).
        self.edited: set[str] = set()
        #: What the last reports said, per file (an update names only the files that changed).
        self.reported = Reported()
        self._haystacks: dict[str, tuple[object, list[str]]] = {}  # .bib -> (stamp, texts)

    # ------------------------------------------------------------------ settings

    def apply_settings(self, values: dict[str, Any] | None) -> bool:
        """New editor settings; ``False`` when they are the same (clients send them again).
        A setting that decides what counts as verified (``core/settings.TRUST_REQUIRED``)
        set by an untrusted workspace's files is dropped, with a line in the log."""
        editor: Any = values or {}
        if isinstance(editor.get("citelens"), Mapping):
            editor = editor["citelens"]
        editor, dropped = untrusted_dropped(editor)
        for key in dropped:
            self.log(
                f"citelens.{key} from the workspace's settings is ignored: it decides what counts "
                "as verified, and this workspace is not trusted (trust it, or set it in your user "
                "settings)"
            )
        new = from_sources(editor=editor)
        if new == self.settings:
            return False
        self.settings = new
        self.store.extra_cite_commands = new.extra_cite_commands
        self.store.set_file_encoding(new.file_encoding)
        for path in list(self.roots):
            self.store.invalidate(path)
        self.pipeline.configure(new)
        self.forget_verdicts()
        return True

    # ------------------------------------------------------------------ claim checks

    def claim_checker(self) -> ClaimChecker:
        """The claim checker, rebuilt when the settings or the shared clients changed."""
        current = self._claims
        if (
            current is not None
            and current.settings == self.settings
            and (current.shared_sources is None or current.shared_sources is self.pipeline.built_sources)
        ):
            return current
        checker = ClaimChecker(self.settings, sources=self.pipeline.built_sources)
        self.claim_queue = ClaimQueue()  # a new checker: its diagnostics start afresh
        if current is not None:
            with contextlib.suppress(RuntimeError):  # no loop: nothing runs either
                asyncio.get_running_loop().create_task(current.aclose())
        self._claims = checker
        return checker

    @property
    def claims(self) -> ClaimChecker | None:
        """The claim checker if one was built (claim checks were asked for)."""
        return self._claims

    # ------------------------------------------------------------------ entries

    def entry_key(self, entry: BibEntry) -> EntryKey:
        """Identifies an entry by its text: an edit inside it (a fixed DOI) is a new entry."""
        return (entry.path, entry.key, self.store.slice(entry.path, entry.span.start, entry.span.end))

    def entry_view(self, entry: BibEntry, analysis: Analysis | None = None) -> EntryView | None:
        k = self.entry_key(entry)
        view = self.views.get(k)
        if view is None:
            try:
                view = entry_view(entry, analysis.first if analysis else {})
            except Exception as exc:  # an entry we cannot read is not worth a crash
                self.log(f"could not read entry {entry.key}: {exc}")
                return None
            if len(self.views) > _MAX_MEMO:
                self.views.clear()
            self.views[k] = view
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

    def verdict(self, entry: BibEntry, analysis: Analysis | None) -> Verification | None:
        h = self.entry_hash(entry, analysis)
        return self.verdicts.get(h) if h else None

    def being_checked(self, entry: BibEntry) -> bool:
        """Whether a running verification covers this entry (its verdict is coming)."""
        h = self._hashes.get(self.entry_key(entry))
        return bool(h and h in self.checking)

    def keep_verdict(self, view: EntryView, verdict: Verification) -> None:
        self.verdicts[content_hash(view)] = verdict
        self.generation += 1

    def forget_verdicts(self, hashes: Iterable[str] | None = None) -> None:
        """Forget every verdict (or those of ``hashes``): they are checked again."""
        if hashes is None:
            self.verdicts.clear()
        else:
            for h in hashes:
                self.verdicts.pop(h, None)
        self._findings.clear()
        self.generation += 1

    def verification_ended(self) -> None:
        """The running check ended (finished, failed or cancelled): nothing is being checked."""
        self.checking = frozenset()

    def forget_unverified(self, hashes: set[str]) -> None:
        """Forget the UNVERIFIED verdicts of the entries ``hashes`` names (a source failed
        for them): they are checked again."""
        self.forget_verdicts(
            h
            for h, v in list(self.verdicts.items())
            if v.content_hash in hashes and v.status is Status.UNVERIFIED
        )

    def unverified_entries(self) -> list[EntryView]:
        """Entries of the analysed projects with no verdict (or a stale one): the cited
        entries of open documents first; in a whole library only cited ones."""
        cited: list[tuple[BibEntry, Analysis]] = []
        rest: list[tuple[BibEntry, Analysis]] = []
        open_paths = set(self.store.open_paths())
        for a in self.analyses.values():
            is_open = bool(open_paths & (set(a.project.files) | set(a.project.bib_paths)))
            keys = a.cited_keys()
            if len(a.definitions) > MAX_UNCITED:  # a whole library: only what is cited
                if is_open:
                    cited.extend((a.definitions[k][0], a) for k in keys if k in a.definitions)
                continue
            wanted = set(keys) if is_open else set()
            for key, defs in a.definitions.items():
                (cited if key in wanted else rest).append((defs[0], a))
        out: list[EntryView] = []
        seen: set[str] = set()
        for entry, a in cited + rest:
            h = self.entry_hash(entry, a)
            if h is None or h in seen or (h in self.verdicts and self._fresh(self.verdicts[h])):
                continue
            view = self.entry_view(entry, a)
            if view is not None:
                seen.add(h)
                out.append(view)
        return out

    def _fresh(self, v: Verification) -> bool:
        """A verdict younger than ``verifiedMaxAgeDays``: an older one is checked again (the
        paper may have been retracted since)."""
        try:
            when = datetime.datetime.fromisoformat(v.checked_at).timestamp()
        except (TypeError, ValueError):
            return True
        return time.time() - when <= self.settings.verified_max_age_days * 86400.0

    # ------------------------------------------------------------------ updates

    def apply_edit(self, edit: Edit) -> None:
        """An open document's new text (``didOpen``, ``didChange``): the store has it at once
        (completion reads the line being typed); the analysis waits for :meth:`update`, so
        edits that arrive together are analysed once."""
        self.store.open(edit.path, edit.text, edit.version, edit.edit, edit.index)
        self.edited.add(edit.path)

    def update(self, recheck: Iterable[str] = ()) -> Changes:
        """Analyse the documents edited since the last update (and ``recheck``: opened or
        saved, whose project is found again), and say what changed: the findings of every
        file whose findings changed, the entries a new verification run checks, the offered
        papers whose key is now typed. One call per burst of edits."""
        paths = dict.fromkeys(self.edited)
        self.edited = set()
        for path in recheck:
            self.roots.pop(path, None)
            paths[path] = None
        for path in paths:
            self.reanalyse(path)
        changes = self.report()
        changes.to_verify = self.plan_verification()
        changes.typed_offers = self._typed_offers(paths)
        return changes

    def report(self) -> Changes:
        """The findings of every file whose findings (or text) changed since the last
        report, each finding once; an open document always has an entry the first time."""
        by_path: dict[str, list[Finding]] = {}
        for f in self.findings():
            by_path.setdefault(f.path, []).append(f)
        for path in self.store.open_paths():  # an open document always gets an answer
            by_path.setdefault(path, [])
        return self.reported.changes(self.store, by_path)

    def plan_verification(self, *, force: bool = False) -> list[EntryView]:
        """The entries a new verification run checks, now counted as being checked: none
        when verification is off, when every entry has a verdict, or when the running
        check covers them all (``force``: every unverified entry, whatever runs)."""
        if not self.settings.verification_enabled:
            return []
        views = self.unverified_entries()
        if not views:
            return []
        wanted = frozenset(content_hash(v) for v in views)
        if not force and self.checking and wanted <= self.checking:
            return []  # the running check already covers these
        self.checking = wanted
        return views

    def _typed_offers(self, paths: Iterable[str]) -> list[Any]:
        """Papers completion offered whose key the analysed ``paths`` now cite and no
        bibliography defines (the client did not run the item's command): each once."""
        offers = self.paper_search.offers
        out: list[Any] = []
        if not offers:
            return out
        for path in paths:
            analysis = self.analysis_for(path)
            doc = analysis.sources.get(path) if analysis is not None else None
            if analysis is None or doc is None:
                continue
            for c in doc.citations:
                payload = offers.get((path, c.key))
                if payload is not None and c.key not in analysis.definitions:
                    del offers[(path, c.key)]
                    out.append(payload)
        return out

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

    # ------------------------------------------------------------------ findings

    def findings(self) -> list[Finding]:
        """Every finding of the analysed projects, each once (``problems.distinct``: two
        projects sharing a .bib find its problems twice), by source: local checks,
        verification, and (with ``claimDiagnostics``) claim checks."""
        out: list[Finding] = []
        for a in self.analyses.values():
            out.extend(a.findings)
            out.extend(self.verification_findings(a))
        out.extend(self.claim_findings())
        return hide_marked(
            distinct(out), list(self.analyses.values()), self.store.slice, self.entry_view, self.project_marks
        )

    def project_marks(self, analysis: Analysis) -> Mapping[str, list[Mark]]:
        """The ``[checked]`` marks of a project's file (``.citelens.toml`` or pyproject's
        ``[tool.citelens]``), read again when the file changes (by modification time)."""
        path = project_file(os.path.dirname(analysis.project.root))
        if path is None:
            return {}
        try:
            stamp = os.stat(path).st_mtime_ns
        except OSError:
            return {}
        kept = self._project_marks.get(path)
        if kept is None or kept[0] != stamp:
            loaded = load_project_file(path)
            if loaded.problem is not None:  # said once per version of the file
                self.log(loaded.problem)
            kept = self._project_marks[path] = (stamp, loaded.marks)
        return kept[1]

    def verification_findings(self, analysis: Analysis) -> list[Finding]:
        """Verification findings of one project. The .bib part (entries, duplicates) is
        kept while the bibliographies and the verdicts are unchanged; the part at the
        citations is cheap and follows every keystroke."""
        if not self.verdicts or not self.settings.verification_enabled:
            return []
        by_key: dict[str, Verification] = {}
        # In a whole library only cited entries are verified: look at those, not at 68,000.
        library = len(analysis.definitions) > MAX_UNCITED
        for key in analysis.cited_keys() if library else analysis.definitions:
            defs = analysis.definitions.get(key)
            v = self.verdict(defs[0], analysis) if defs else None
            if v is not None:
                by_key[key] = v
        bibs = tuple(analysis.bibs)
        sig = (self.generation, self.settings, tuple(id(b) for b in bibs))
        cached = self._findings.get(analysis.project.root)
        try:
            if cached is not None and cached[0] == sig:
                entry_level = cached[2]
            else:
                entry_level = entry_level_findings(
                    bibs,
                    by_key,
                    self.settings,
                    lambda e: self.entry_view(e, analysis),
                    only=set(by_key) if library else None,
                    text_pairs_of=lambda views: self._text_duplicates(analysis.project.root, views),
                )
                # keep the BibFiles alive with the signature, so their ids stay theirs
                self._findings[analysis.project.root] = (sig, bibs, entry_level)
            return entry_level + citation_findings(analysis.citations, analysis.bibs, by_key, self.settings)
        except Exception:
            log.exception("placing verification findings failed")
            return []

    def _text_duplicates(self, root: str, views: list[EntryView]) -> Pairs:
        """The duplicate pairs the entries' text gives, kept while the views are the same
        (views are kept per entry text): a new verdict does not compare the titles again."""
        ids = tuple(map(id, views))
        kept = self._text_pairs.get(root)
        if kept is not None and kept[0] == ids:
            return kept[2]
        pairs = text_duplicates(views)
        self._text_pairs[root] = (ids, views, pairs)  # the views kept: their ids stay theirs
        return pairs

    def claim_findings(self) -> list[Finding]:
        """CLAIM_* findings of the open documents (``claimDiagnostics`` with a model)."""
        if not self.settings.claim_diagnostics or LLMConfig.from_settings(self.settings) is None:
            return []
        checker = self.claim_checker()
        return claim_findings(self._claim_sites(), checker, self.claim_queue, self.settings, self.on_change)

    def _claim_sites(self) -> Iterable[ClaimSite]:
        for path in self.store.open_paths():
            language = kind_of(path)
            if language is None or language not in CITING:  # (a big .bib is not joined for nothing)
                continue
            analysis = self.analysis_for(path)
            text = self.store.text(path)
            doc = analysis.sources.get(path) if analysis is not None else None
            if doc is None or text is None:
                continue
            assert analysis is not None
            for citation in doc.citations:
                defs = analysis.definitions.get(citation.key)
                view = self.entry_view(defs[0], analysis) if defs else None
                if not defs or view is None:
                    continue
                verifying = self.being_checked(defs[0])
                paper = cited_paper(self.verdict(defs[0], analysis), verifying=verifying)
                if paper.record is None and not paper.waiting:
                    continue  # no paper accepted as the cited one: nothing to check
                yield ClaimSite(path, language, text, citation, view, paper.record, verifying)
