"""The editor's engine: one entry point, :meth:`Engine.apply`, for everything that happens.

The language server is an adapter: it turns LSP messages, its timers and its background run
into events (``workspace/events.py``: a closed set), hands each to :meth:`Engine.apply`,
and renders the :class:`~citelens.workspace.changes.Changes` it gets back (diagnostics to
send, a run to start or cancel, when to retry, lines to show). Otherwise it only reads
(:class:`~citelens.workspace.queries.Queries`). What the engine holds, each in its own part:

* the projects (``workspace/projects.py``): the documents, their projects and analyses,
  entry identity and views;
* the verdicts (``workspace/verdicts.py``): the settled verdicts by content hash;
* the runs (``workspace/runs.py``): what a running check covers, the retry policy;
* the findings derived from them and what was last reported (``workspace/findings.py``);
* the pipeline (the process's scholarly clients, cache and snapshot), the claim checker and
  its queue, the paper search of cite-while-writing.

A keystroke is two events: :class:`~citelens.workspace.events.Changed` (the store has the
text at once) and :class:`~citelens.workspace.events.Gathered` (the edits that arrived
together are analysed once; its changes are sent with no other engine call).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, assert_never

from citelens.checks.claims import ClaimQueue, ClaimSite, claim_findings
from citelens.claims.checker import ClaimChecker
from citelens.claims.llm import LLMConfig
from citelens.claims.paper import cited_paper
from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.core.findings import Finding
from citelens.core.model import BibEntry, Citation, EntryView
from citelens.core.settings import Settings, from_sources, untrusted_dropped
from citelens.sources.records import PaperRecord
from citelens.verify.identity import content_hash
from citelens.verify.status import Verification
from citelens.workspace.changes import Changes, Edit, Run
from citelens.workspace.check import run_check
from citelens.workspace.citesearch import PaperChoice, PaperSearch, paper_choices
from citelens.workspace.citing import Citing, citing_documents
from citelens.workspace.entry_hover import Hovered, hover_at
from citelens.workspace.events import (
    CacheCleared,
    Changed,
    Closed,
    DocumentEvent,
    EditorEvent,
    Event,
    FilesChanged,
    FoldersChanged,
    Gathered,
    Opened,
    Outcome,
    PaperAdded,
    PapersOffered,
    ReportDue,
    RetryDue,
    RunEnded,
    Saved,
    SettingsChanged,
    VerdictSettled,
    VerificationEvent,
    VerifyNow,
    WorkspaceEvent,
)
from citelens.workspace.findings import MAX_UNCITED, Findings
from citelens.workspace.index import Analysis
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.projects import Projects
from citelens.workspace.report import render, to_json
from citelens.workspace.runs import Runs
from citelens.workspace.verdicts import Verdicts

Log = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


class Engine:
    """The editor's engine: events in (:meth:`apply`), changes out; read-only queries."""

    def __init__(
        self,
        settings: Settings | None = None,
        log: Log = _quiet,
        on_news: Callable[[float], None] = lambda _delay: None,
    ) -> None:
        self.settings: Settings = settings if settings is not None else from_sources()
        self.log = log
        self.projects = Projects(self.settings, log)
        #: The projects' documents (open buffers shadow the disk), for readers.
        self.store = self.projects.store
        self.verdicts = Verdicts()
        self.runs = Runs()
        self._findings = Findings(log)
        #: The verification stage and this process's clients, cache and snapshot: the
        #: background run, ``citelens.report`` and the paper searches all use these.
        self.pipeline = Pipeline(self.settings, log)
        self._claims: ClaimChecker | None = None
        #: The claim diagnostics' queue and results, for the current checker.
        self.claim_queue = ClaimQueue()
        #: Background paper searches for completion (cite while writing).
        self.paper_search = PaperSearch(
            self.pipeline.sources, self.pipeline.opened_cache, lambda: self.settings, self.log
        )
        #: Asked when a background result (a claim check) is ready to be reported, with
        #: the delay to wait: the driver then applies ``ReportDue``.
        self.on_news = on_news

    # ------------------------------------------------------------------ the one entry point

    def apply(self, event: Event) -> Changes:
        """Apply ``event`` and say what changed (``workspace/events.py`` lists them all)."""
        match event:
            case Opened() | Changed() | Saved() | Closed() | Gathered():
                return self._document(event)
            case SettingsChanged() | FoldersChanged() | FilesChanged():
                return self._workspace(event)
            case VerdictSettled() | RunEnded() | RetryDue() | VerifyNow() | CacheCleared():
                return self._verification(event)
            case ReportDue() | PapersOffered() | PaperAdded():
                return self._editor(event)
            case _:
                assert_never(event)

    def _document(self, event: DocumentEvent) -> Changes:
        match event:
            case Opened(edit):
                self._edit(edit)
                return self._update(recheck=edit.path)
            case Changed(edit):
                self._edit(edit)
                return Changes()
            case Saved(path):
                return self._update(recheck=path)
            case Closed(path):
                self.projects.close(path)
                return self._report()
            case Gathered():
                return self._update()
            case _:
                assert_never(event)

    def _workspace(self, event: WorkspaceEvent) -> Changes:
        match event:
            case SettingsChanged(values):
                return self._settings(values)
            case FoldersChanged(added, removed):
                self.projects.folders_changed(added, removed)
                return Changes()
            case FilesChanged(paths, verify_now):
                touched = self.projects.files_changed(paths)
                changes = self._report() if touched else Changes()
                if touched or verify_now:
                    self._plan(changes, 0.0 if verify_now else None)
                return changes
            case _:
                assert_never(event)

    def _verification(self, event: VerificationEvent) -> Changes:
        match event:
            case VerdictSettled(run, verdict):
                self._keep(run, {verdict.key: verdict})
                return Changes(news=True, shown=self.runs.unsaid(self.pipeline.source_outs()))
            case RunEnded(run, outcome, verdicts):
                return self._ended(run, outcome, verdicts)
            case RetryDue(hashes):
                self._forget(self.verdicts.unverified(hashes))
                self.pipeline.reset_sources()
                return self._plan(Changes(), 0.0)
            case VerifyNow():
                self._forget()
                self.pipeline.reset_sources()
                self.projects.reanalyse_all()
                return self._plan(self._report(), 0.0, force=True)
            case CacheCleared():
                where = self.pipeline.clear_cache()
                self._forget()
                self.pipeline.reset_sources()
                return Changes(said=[f"cache cleared ({where})"])
            case _:
                assert_never(event)

    def _editor(self, event: EditorEvent) -> Changes:
        match event:
            case ReportDue(every):
                if every:
                    self._findings.reported.forget()
                return self._report()
            case PapersOffered(doc, offers):
                for key, payload in offers:
                    self.paper_search.offer(doc, key, payload)
                return Changes()
            case PaperAdded(bib, key):
                self.paper_search.added_key(key)
                self.store.invalidate(bib)
                return Changes()
            case _:
                assert_never(event)

    # ------------------------------------------------------------------ documents

    def _edit(self, edit: Edit) -> None:
        self.projects.edit(edit.path, edit.text, edit.version, edit.edit, edit.index)

    def _update(self, recheck: str | None = None) -> Changes:
        """Analyse the documents edited since the last update (and ``recheck``: opened or
        saved, its project found again, verified without the debounce), and say what
        changed: the findings of every file whose findings changed, a verification run for
        the entries with no verdict, the offered papers whose key is now typed."""
        paths = dict.fromkeys(self.projects.take_edited())
        if recheck is not None:
            self.projects.refind(recheck)
            paths[recheck] = None
        for path in paths:
            self.projects.reanalyse(path)
        changes = self._report()
        self._plan(changes, 0.0 if recheck is not None else None)
        changes.typed_offers = self._typed_offers(paths)
        return changes

    def _settings(self, values: Mapping[str, Any] | None) -> Changes:
        """New editor settings (the same again: clients send them more than once): the
        running check is superseded (it used the old settings' clients, closed once it has
        stopped; answers come from the cache), every project is analysed again. A setting
        that decides what counts as verified (``core/settings.TRUST_REQUIRED``) set by an
        untrusted workspace's files is dropped, with a line in the log."""
        editor: Mapping[str, Any] = values or {}
        inner = editor.get("citelens")
        if isinstance(inner, Mapping):
            editor = inner
        kept, dropped = untrusted_dropped(editor)
        for key in dropped:
            self.log(
                f"citelens.{key} from the workspace's settings is ignored: it decides what counts "
                "as verified, and this workspace is not trusted (trust it, or set it in your user "
                "settings)"
            )
        new = from_sources(editor=kept)
        changed = new != self.settings
        if changed:
            self.settings = new
            self.projects.configure(new)
            self.pipeline.configure(new)
            self._forget()
            self.runs.superseded()
        retired = self.pipeline.take_sources() if changed else None
        self.projects.reanalyse_all()
        changes = self._report()
        changes.cancel_run, changes.retired = changed, retired
        return self._plan(changes, None)

    def _report(self) -> Changes:
        """The findings of every file whose findings (or text) changed since the last report."""
        return self._findings.report(self.projects, self.findings())

    def _typed_offers(self, paths: Iterable[str]) -> list[Any]:
        """Papers completion offered whose key the analysed ``paths`` now cite and no
        bibliography defines (the client did not run the item's command): each once."""
        offers = self.paper_search.offers
        out: list[Any] = []
        if not offers:
            return out
        for path in paths:
            analysis = self.projects.analysis_for(path)
            doc = analysis.sources.get(path) if analysis is not None else None
            if analysis is None or doc is None:
                continue
            for c in doc.citations:
                payload = offers.get((path, c.key))
                if payload is not None and c.key not in analysis.definitions:
                    del offers[(path, c.key)]
                    out.append(payload)
        return out

    # ------------------------------------------------------------------ verification

    def _plan(self, changes: Changes, delay: float | None, *, force: bool = False) -> Changes:
        """Ask for a run of the entries with no verdict (``delay``: after it; None: the
        debounce), unless verification is off, every entry has one, or the running run
        covers them all (``force``: whatever runs); with nothing new and ``delay`` 0, a run
        still in its debounce starts now."""
        views = self._unverified() if self.settings.verification_enabled else []
        wanted = frozenset(content_hash(v) for v in views)
        if views and (force or not (self.runs.checking and wanted <= self.runs.checking)):
            debounce = self.settings.verify_debounce_ms / 1000.0
            changes.run = self.runs.start(views, wanted, debounce if delay is None else delay)
        elif delay == 0.0:
            changes.hurry = True
        return changes

    def _unverified(self) -> list[EntryView]:
        """Entries of the analysed projects with no verdict (or a stale one): the cited
        entries of open documents first; in a whole library only cited ones."""
        cited: list[tuple[BibEntry, Analysis]] = []
        rest: list[tuple[BibEntry, Analysis]] = []
        open_paths = set(self.store.open_paths())
        for a in self.projects.analyses.values():
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
        now, max_age = time.time(), self.settings.verified_max_age_days
        for entry, a in cited + rest:
            h = self.projects.entry_hash(entry, a)
            if h is None or h in seen or self.verdicts.fresh(h, max_age, now):
                continue
            view = self.projects.entry_view(entry, a)
            if view is not None:
                seen.add(h)
                out.append(view)
        return out

    def _keep(self, run: int, verdicts: Mapping[str, Verification]) -> None:
        for key, verdict in verdicts.items():
            view = self.runs.view(run, key)
            if view is not None:
                self.verdicts.keep(content_hash(view), verdict)

    def _ended(self, run: int, outcome: Outcome, verdicts: Mapping[str, Verification]) -> Changes:
        """A run ended: a finished run's verdicts are kept and reported, with the sources'
        refusals not said yet and when to retry what an outage left unverified; a cancelled
        run's verdicts are reported soon (it kept what it reached). Then what changed while
        it ran is verified (not after a cancel: the run that superseded it does that)."""
        if outcome is Outcome.FINISHED:
            self._keep(run, verdicts)
            changes = self._report()
            changes.shown = self.runs.unsaid(self.pipeline.source_outs())
            changes.retry = self.runs.retry(verdicts.values(), self.settings.offline)
        else:
            changes = Changes(news=outcome is Outcome.CANCELLED)
        self.runs.ended(run)
        if outcome in (Outcome.FINISHED, Outcome.FAILED):
            self._plan(changes, None)
        return changes

    def _forget(self, hashes: Iterable[str] | None = None) -> None:
        """Forget every verdict (or those of ``hashes``): they are checked again."""
        self.verdicts.forget(hashes)
        self._findings.forget()

    # ------------------------------------------------------------------ read-only queries

    def analysis_for(self, path: str) -> Analysis | None:
        """The analysis of the project ``path`` belongs to (None: none is analysed)."""
        return self.projects.analysis_for(path)

    def entry_view(self, entry: BibEntry, analysis: Analysis | None = None) -> EntryView | None:
        return self.projects.entry_view(entry, analysis)

    def verdict(self, entry: BibEntry, analysis: Analysis | None) -> Verification | None:
        """The verdict on ``entry`` as it is now (None: none yet, or it changed since)."""
        h = self.projects.entry_hash(entry, analysis)
        return self.verdicts.of(h, entry.key) if h else None

    def being_checked(self, entry: BibEntry) -> bool:
        """Whether the running check covers this entry (its verdict is coming)."""
        h = self.projects.known_hash(entry)
        return bool(h and h in self.runs.checking)

    def citing(self, bib_path: str, keys: tuple[str, ...]) -> Citing:
        """The documents that may cite ``keys`` through ``bib_path`` (open or not)."""
        return citing_documents(
            self.store, bib_path, keys, self.projects.all_projects(), self.settings.extra_bibliographies
        )

    def findings(self) -> list[Finding]:
        """Every finding of the analysed projects, each once: local checks, verification,
        and (with ``claimDiagnostics``) claim checks."""
        return self._findings.all(self.projects, self.verdicts, self.settings, self.claim_findings())

    @property
    def recent_keys(self) -> list[str]:
        """Keys added from completion, newest last: completion offers them first."""
        return self.paper_search.recent_keys

    def paper_choices(self, analysis: Analysis, path: str, records: list[PaperRecord]) -> list[PaperChoice]:
        """The papers completion offers at a citation of ``path``: each with the key it
        would have and, unless the project has it already, what ``citelens.addPaper`` adds."""
        return paper_choices(
            self.store, lambda e: self.entry_view(e, analysis), self.paper_search, analysis, path, records
        )

    async def find_papers(self, path: str, query: str, wait_s: float) -> list[PaperRecord] | None:
        """Papers for the phrase typed in a citation (the background search, waited for
        at most ``wait_s``)."""
        return await self.paper_search.find(path, query, wait_s)

    async def hover(self, path: str, offset: int) -> Hovered | None:
        """The hover at ``offset`` of ``path``: on a key, its entry, verdict and claim check;
        on a citation command, every entry it cites."""
        return await hover_at(self, path, offset)

    async def verify(
        self,
        run: Run,
        *,
        progress: Callable[[int, int], None] | None = None,
        info: Log | None = None,
        on_verdict: Callable[[Verification], None] | None = None,
    ) -> dict[str, Verification]:
        """Carry out ``run`` (its verdicts by entry key; each also to ``on_verdict`` as soon
        as it is decided, for the driver to apply as ``VerdictSettled``)."""
        views = list(run.views)
        return await self.pipeline.verify(views, progress=progress, info=info, on_verdict=on_verdict)

    async def workspace_report(self, fmt: str | None) -> dict[str, Any] | str:
        """``citelens check``'s report of the workspace (JSON, or ``"text"``), read from the
        open buffers as they are, through this engine's clients and rate limiters; what the
        engine settled is read from its store (through, never changed: only :meth:`apply`
        changes it), the rest verified for the report."""
        roots = sorted({a.project.root for a in self.projects.analyses.values()})
        paths = self.projects.workspace_roots or roots
        if not paths:
            if fmt == "text":
                return "No LaTeX or Markdown project is open."
            return {"version": 1, "entries": [], "diagnostics": [], "summary": {}}
        result = await run_check(
            paths,
            self.pipeline,
            store=self.store,
            verify=self.settings.verification_enabled,
            log=self.log,
            verdicts=Verdicts(under=self.verdicts),
        )
        return render(result, "text") if fmt == "text" else to_json(result)

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

    def claim_findings(self) -> list[Finding]:
        """CLAIM_* findings of the open documents (``claimDiagnostics`` with a model)."""
        if not self.settings.claim_diagnostics or LLMConfig.from_settings(self.settings) is None:
            return []
        checker = self.claim_checker()
        return claim_findings(self._claim_sites(), checker, self.claim_queue, self.settings, self.on_news)

    def _claim_sites(self) -> Iterable[ClaimSite]:
        for path in self.store.open_paths():
            language = kind_of(path)
            if language is None or language not in CITING:  # (a big .bib is not joined for nothing)
                continue
            analysis = self.projects.analysis_for(path)
            text = self.store.text(path)
            doc = analysis.sources.get(path) if analysis is not None else None
            if doc is None or text is None:
                continue
            assert analysis is not None
            for citation in doc.citations:
                yield from self._claim_site(path, language, text, citation, analysis)

    def _claim_site(
        self, path: str, language: DocKind, text: str, citation: Citation, analysis: Analysis
    ) -> Iterable[ClaimSite]:
        defs = analysis.definitions.get(citation.key)
        view = self.entry_view(defs[0], analysis) if defs else None
        if not defs or view is None:
            return
        verifying = self.being_checked(defs[0])
        paper = cited_paper(self.verdict(defs[0], analysis), verifying=verifying)
        if paper.record is None and not paper.waiting:
            return  # no paper accepted as the cited one: nothing to check
        yield ClaimSite(path, language, text, citation, view, paper.record, verifying)
