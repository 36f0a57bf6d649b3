"""The batch check behind ``citelens check`` and the ``citelens.workspace.report`` command.

Same functions as the language server: collect projects, run the local
analysis, verify the entries, place the findings. No LSP here.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelens.core.caps import capped, more_text
from citelens.core.codes import Code
from citelens.core.dockind import DocKind, kind_of
from citelens.core.findings import Finding, make_finding
from citelens.core.identifiers import doi_in
from citelens.core.model import BibEntry, BibFile, EntryView, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.parse import field_values
from citelens.documents.bibtex.view import entry_view
from citelens.documents.read import not_regular
from citelens.verify.status import Verification
from citelens.workspace.checked import MARK_WORD, Mark, ProjectFile, hide_marked, project_file_of
from citelens.workspace.files import documents_under
from citelens.workspace.index import Analysis, analyze
from citelens.workspace.pdfs import PrintedSource, read_pdfs, split_paths
from citelens.workspace.problems import by_place, distinct, one_per_problem
from citelens.workspace.project import Project, build_project, find_root
from citelens.workspace.store import DocumentStore
from citelens.workspace.verdicts import Verdicts, Verify

if TYPE_CHECKING:
    from citelens.workspace.pipeline import Pipeline

#: Verifies views (cited first) and returns a verdict per key: ``verify_entries`` by default;
#: the venue check (``venue/run.py``) verifies the entries of many papers together.
Verifier = Verify


@dataclass(slots=True, repr=False)
class CheckResult:
    store: DocumentStore
    analyses: list[Analysis] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # every entry a project reads, each once: in each project, each key's first definition
    # (as BibTeX reads it); two papers' different ``smith2020`` are two entries. The one
    # meaning of "entry" in every count (text, JSON, SARIF, the log, the editor's progress)
    entries: list[BibEntry] = field(default_factory=list)
    citations: int = 0  # cited keys in the documents, every occurrence (labelled as such)
    #: each entry's verdict, by its place: (its .bib, its key) -> Verification, read from the
    #: store of settled verdicts by the entry's content (``workspace/verdicts.py``)
    verifications: dict[tuple[str, str], Verification] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    #: PDFs read for their printed references: path -> where each entry came from
    printed: dict[str, PrintedSource] = field(default_factory=dict)

    def verdict(self, entry: BibEntry) -> Verification | None:
        """The verdict on ``entry`` (this .bib's definition of its key), or None."""
        return self.verifications.get((entry.path, entry.key))

    def __repr__(self) -> str:  # asyncio may repr the result: keep it short
        return f"CheckResult({len(self.entries)} entries, {len(self.findings)} findings)"


class UsageError(Exception):
    """A problem with the command line (exit status 2)."""


def _walk(store: DocumentStore, folder: str) -> Iterable[str]:
    """The documents under ``folder``; for a venue paper (``store.walls``), no more than its
    budget of files lets it read (a paper of 100,000 files is not walked to its end)."""
    walls = store.walls
    if walls is None:
        return documents_under(folder)
    out = list(itertools.islice(documents_under(folder), walls.budget.files + 1))
    if walls.walked_enough(len(out)):
        del out[walls.budget.files :]
    return out


def collect_projects(store: DocumentStore, paths: Sequence[str], settings: Settings) -> list[Project]:
    """Projects for the given files and folders; .bib files outside any project stand alone."""
    files: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(_walk(store, str(p)))
        elif p.is_file():
            files.append(os.path.normpath(str(p.resolve())) if not p.is_absolute() else str(p))
        elif (why := not_regular(raw)) is not None:
            raise UsageError(f"not read: {raw}: {why}")
        else:
            raise UsageError(f"no such file or folder: {raw}")
    files = [os.path.abspath(f) for f in files]
    roots: dict[str, None] = {}
    bibs: list[str] = []
    memo: dict[str, list[str]] = {}  # the roots of each folder, read once
    for f in files:
        kind = kind_of(f)
        if kind is DocKind.BIB:
            bibs.append(f)
        elif kind is DocKind.MARKDOWN:
            roots.setdefault(f, None)
        elif kind is DocKind.LATEX:
            doc = store.source(f)
            if doc is None:
                continue
            root = find_root(store, f, memo=memo)
            explicit = any(os.path.abspath(raw) == f for raw in paths)
            if root != f or doc.has_documentclass or explicit or doc.citations:
                roots.setdefault(root, None)
    projects = [build_project(store, r, settings.extra_bibliographies) for r in roots]
    # A project rooted at a file that another project includes is part of that one.
    included = {f for pr in projects for f in pr.files[1:]}
    projects = [pr for pr in projects if pr.root not in included]
    used = {b for pr in projects for b in pr.bib_paths}
    for b in bibs:
        if b not in used:
            projects.append(Project(root=b, files=[], bib_paths=[b]))
            used.add(b)
    return projects


def all_entries(bibs: Iterable[BibFile]) -> list[BibEntry]:
    """Each key once: its first definition (a key defined again is a DUPLICATE_KEY finding,
    not another entry)."""
    seen: set[str] = set()
    out: list[BibEntry] = []
    for bib in bibs:
        for e in bib.entries:
            if e.key not in seen:
                seen.add(e.key)
                out.append(e)
    return out


def used_entries(analyses: Iterable[Analysis], bibs: Iterable[BibFile]) -> list[BibEntry]:
    """The entries the projects read, in file order, each once: each project's first
    definition of each key. A key two projects define in different .bib files is two
    entries (two papers' ``smith2020`` are not one reference); a key defined again in the
    same project is a DUPLICATE_KEY finding, not another entry."""
    used: set[tuple[str, str]] = set()
    for a in analyses:
        for key, e in a.first.items():
            used.add((e.path, key))
    seen: set[tuple[str, str]] = set()
    out: list[BibEntry] = []
    for bib in bibs:
        for e in bib.entries:
            place = (e.path, e.key)
            if place in used and place not in seen:
                seen.add(place)
                out.append(e)
    return out


def count_citations(analyses: Iterable[Analysis]) -> int:
    """Citations (every cited key at every place), each source file counted once."""
    seen: set[str] = set()
    n = 0
    for a in analyses:
        for path in a.project.files:
            doc = a.sources.get(path)
            if doc is not None and path not in seen:
                seen.add(path)
                n += len(doc.citations)
    return n


async def run_check(
    paths: Sequence[str],
    pipeline: Pipeline,
    *,
    settings: Settings | None = None,
    store: DocumentStore | None = None,
    verify: bool = True,
    log: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_verdict: Callable[[Any], None] | None = None,
    verifier: Verifier | None = None,
    marks: bool = True,
    verdicts: Verdicts | None = None,
) -> CheckResult:
    """Analyse (and unless told otherwise verify) everything under ``paths``; ``store``: the
    documents to read (an editor's, whose open buffers shadow the disk), else the disk.
    Entries are verified through ``pipeline`` (the process's one set of clients, cache and
    snapshot; a running server's own), or ``verifier`` (the venue check's stream, which
    verifies through the venue's pipeline). ``verdicts``: the store of settled verdicts to
    read and keep them in (a venue's, the second check of ``--fix``, the editor's read
    through), a new one by default. ``settings``: this run's (the pipeline's by default).
    ``marks``: honour entries marked as checked (``workspace/checked.py``); a venue check does
    not (the authors' word is not the chair's)."""
    if settings is None:
        settings = pipeline.settings
    own = DocumentStore(settings.extra_cite_commands, settings.file_encoding)
    result = CheckResult(store if store is not None else own)
    if store is None:  # (an editor's store says so in the editor's log)
        store = result.store

        def skipped(path: str, why: str) -> None:
            result.log.append(f"skipped {path}: {why}")
            if log is not None:
                log(f"skipped {path}: {why}")

        store.on_skip = skipped
    paths, pdfs = split_paths(paths)
    projects = collect_projects(store, paths, settings) if paths else []
    findings: list[Finding] = []
    analyses = [analyze(store, project, settings) for project in projects]
    if pdfs:
        read, not_read, result.printed = await read_pdfs(store, pdfs, settings, pipeline.pdf_readers())
        analyses.extend(read)
        findings.extend(not_read)
    bibs: dict[str, BibFile] = {}
    cited_first: dict[str, None] = {}
    for a in analyses:
        result.analyses.append(a)
        findings.extend(a.findings)
        for bib in a.bibs:
            bibs[bib.path] = bib
        for key in a.cited_keys():
            cited_first.setdefault(key, None)
    result.entries = used_entries(result.analyses, bibs.values())
    result.citations = count_citations(result.analyses)
    verifying = verify and settings.verification_enabled
    if verifying and result.entries:
        findings.extend(
            await _verify(
                result,
                cited_first,
                settings,
                log,
                progress,
                pipeline,
                on_verdict,
                verifier,
                verdicts if verdicts is not None else Verdicts(),
            )
        )
    viewed = {id(e) for e in result.entries} if verifying else set()
    dois: dict[str, list[BibEntry]] = {}
    findings.extend(_field_problems(bibs.values(), settings, viewed, None if verifying else dois))
    if not verifying:
        findings.extend(_same_doi_findings(dois, settings))
    shown = distinct(findings)
    # entries marked as checked: one look per .bib and per project file, and nothing more
    # when there is no mark at all (a 68,000-entry library pays two string searches)
    marked = {p for p in bibs if MARK_WORD in (store.text(p) or "")} if marks else set()
    in_file = _project_marks(result, log) if marks else {}
    if marked or any(in_file.values()):
        shown = hide_marked(
            shown,
            result.analyses,
            store.slice,
            lambda e, a: entry_view(e, a.first),
            lambda a: in_file[id(a)],
            marked.__contains__,
        )
    result.findings = one_per_problem(by_place(shown))
    return result


def _project_marks(
    result: CheckResult, log: Callable[[str], None] | None
) -> dict[int, Mapping[str, list[Mark]]]:
    """Each project's ``[checked]`` marks from its project file; a file that cannot be read
    is said once (one line) and marks nothing."""
    files: dict[str, ProjectFile] = {}
    out: dict[int, Mapping[str, list[Mark]]] = {}
    for a in result.analyses:
        pf = project_file_of(a)
        if pf is None:
            out[id(a)] = {}
            continue
        if pf.path not in files:
            files[pf.path] = pf
            if pf.problem is not None:
                result.log.append(pf.problem)
                if log is not None:
                    log(pf.problem)
        out[id(a)] = files[pf.path].marks
    return out


def _same_doi_findings(dois: dict[str, list[BibEntry]], settings: Settings) -> list[Finding]:
    """DUPLICATE_ENTRY for the entries that share a DOI, with no verification: a comparison
    of the entries' own text (titles are compared only with the verdicts). Only the entries
    whose DOI another entry has are viewed (68,000 views cost seconds)."""
    from citelens.checks.duplicates import doi_duplicates, duplicate_findings

    defs: dict[str, BibEntry] = {}
    for same in dois.values():
        if len({e.key for e in same}) > 1:
            for e in same:
                defs.setdefault(e.key, e)
    return duplicate_findings(defs, {}, settings, text_pairs_of=doi_duplicates) if defs else []


def _field_problems(
    bibs: Iterable[BibFile], settings: Settings, viewed: set[int], dois: dict[str, list[BibEntry]] | None
) -> list[Finding]:
    """BIB_SYNTAX for the problems inside fields: a big file's fields are read lazily, after
    its analysis, with their problems (by the entry views, for the ``viewed`` entries).
    ``dois``: filled with the entries (each key's first definition) by DOI, from the same
    reading of their fields."""
    out: list[Finding] = []
    firsts = {id(e) for e in all_entries(bibs)} if dois is not None else set()
    for bib in bibs:
        for e in bib.entries:
            if id(e) not in viewed:
                values = field_values(e)  # an entry with a problem is parsed in full: its problems
                if dois is not None and id(e) in firsts:
                    doi = doi_in(values)
                    if doi:
                        dois.setdefault(doi, []).append(e)
        for p, more in capped(bib.problems, lambda q: q.message):
            f = make_finding(settings, bib.path, Code.BIB_SYNTAX, more_text(p.message, more), p.span)
            if f is not None:
                out.append(f)
    return out


async def _verify(
    result: CheckResult,
    cited_first: dict[str, None],
    settings: Settings,
    log: Callable[[str], None] | None,
    progress: Callable[[int, int], None] | None,
    pipeline: Pipeline,
    on_verdict: Callable[[Any], None] | None,
    verifier: Verifier | None,
    verdicts: Verdicts,
) -> list[Finding]:
    from citelens.checks.verification import verification_findings
    from citelens.documents.bibtex.view import entry_view

    def _log(msg: str) -> None:
        result.log.append(msg)
        if log is not None:
            log(msg)

    # Cited entries first, then the rest; one view per entry, each seen by its project (its
    # @crossref parents). A key two papers define differently is two entries, each with
    # its own verdict: the store asks about each distinct content once, by its hash.
    owner: dict[tuple[str, str], Analysis] = {}
    for a in result.analyses:
        for key, e in a.first.items():
            owner.setdefault((e.path, key), a)
    by_key: dict[str, list[BibEntry]] = {}
    for e in result.entries:
        by_key.setdefault(e.key, []).append(e)
    order = [e for k in cited_first for e in by_key.get(k, ())]
    cited = {id(e) for e in order}
    order += [e for e in result.entries if id(e) not in cited]
    views: list[EntryView] = []
    by_entry: dict[int, EntryView] = {}
    for e in order:
        mine = owner.get((e.path, e.key))
        source = result.printed.get(e.path)  # read from a PDF: an entry from the start
        printed = source.view(e.span.start) if source is not None else None
        view = printed if printed is not None else entry_view(e, mine.first if mine is not None else {})
        by_entry[id(e)] = view
        views.append(view)

    async def verify(todo: list[EntryView]) -> Mapping[str, Verification]:
        if verifier is not None:
            return await verifier(todo)
        return await pipeline.verify(
            todo, settings=settings, log=_log, progress=progress, on_verdict=on_verdict
        )

    settled = await verdicts.settle(views, verify)
    result.verifications = {(e.path, e.key): v for e, v in zip(order, settled, strict=True) if v is not None}
    out = _mostly_unread(result, settings)
    for a in result.analyses:  # each project's findings from its own entries' verdicts
        settled_here = {k: v for k, e in a.first.items() if (v := result.verdict(e)) is not None}
        if settled_here:
            out += verification_findings(
                a.bibs, a.citations, settled_here, settings, lambda e: by_entry.get(id(e))
            )
    return out


def _mostly_unread(result: CheckResult, settings: Settings) -> list[Finding]:
    """PDF_NOT_READ for a PDF most of whose references could not be read (REFERENCE_NOT_READ):
    such a paper is not read, and never passes as a clean one."""
    from citelens.verify.status import Unverified

    out = []
    for path, source in result.printed.items():
        n = len(source.references)
        unread = sum(
            1
            for r in source.references
            if getattr(result.verifications.get((path, r.label)), "unverified", None) is Unverified.UNREAD
        )
        if n and unread * 2 > n:
            why = f"PDF not read: {unread} of its {n} references could not be read with confidence"
            f = make_finding(settings, path, Code.PDF_NOT_READ, why, Span(0, 0))
            if f is not None:
                out.append(f)
    return out
