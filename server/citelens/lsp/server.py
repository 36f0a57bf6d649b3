"""The CiteLens language server (pygls 2).

Request handlers only read what is already computed: local analysis runs on
each change (it is fast and needs no network), verification runs in a
background task that publishes again when it has news.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from citelens import __version__
from citelens.core.findings import Finding
from citelens.core.model import BibEntry, Citation, EntryView
from citelens.core.settings import Settings, from_sources
from citelens.documents.read import kind_of
from citelens.lsp import completion
from citelens.lsp.convert import RelatedMemo, path_of, span_range, to_diagnostic, uri_of
from citelens.lsp.hover import entry_section, notice_section, verification_section
from citelens.lsp.protocol import CiteLensProtocol
from citelens.lsp.verification import Verifier
from citelens.workspace.index import Analysis, analyze
from citelens.workspace.project import build_project, documents_using_bib, find_root
from citelens.workspace.store import DocumentStore

log = logging.getLogger("citelens")



class CiteLensServer(LanguageServer):
    """Holds the state of one editor session; everything else is functions."""

    def __init__(self) -> None:
        super().__init__("citelens", __version__, protocol_cls=CiteLensProtocol)
        self.settings: Settings = from_sources()
        self.store = DocumentStore(self.settings.extra_cite_commands)
        self.workspace_roots: list[str] = []
        self.analyses: dict[str, Analysis] = {}  # project root -> analysis
        self.roots: dict[str, str] = {}  # file -> project root
        self.published: dict[str, list[lsp.Diagnostic]] = {}
        self._signatures: dict[str, tuple[object, ...]] = {}
        self._related: RelatedMemo = {}
        self._dirty: set[str] = set()
        self._flush_handle: asyncio.TimerHandle | None = None
        self.views: dict[tuple[str, str, str], EntryView] = {}  # entry_key -> view
        self.verifier = Verifier(self)
        self.claims: Any = None  # claims.checker.ClaimChecker, created on first use
        self.paper_search = completion.PaperSearch(self)
        self.recent_keys: list[str] = []  # keys added from completion, newest last
        self.last_paper_wait_s = 0.0
        self._logged: set[str] = set()

    # ------------------------------------------------------------------ helpers
    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        if isinstance(enc, lsp.PositionEncodingKind):
            return str(enc.value)
        return str(enc or "utf-16")

    def log_once(self, message: str, level: lsp.MessageType = lsp.MessageType.Warning) -> None:
        """A line in the client's log (never a pop-up), once per distinct message."""
        if message in self._logged:
            return
        self._logged.add(message)
        self.log_line(message, level)

    def log_line(self, message: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        log.info(message)
        try:
            self.window_log_message(lsp.LogMessageParams(type=level, message=message))
        except Exception:  # no client attached (tests of the engine)
            pass

    def apply_settings(self, values: dict[str, Any] | None) -> None:
        new = from_sources(editor=values or {})
        if new == self.settings:
            return  # clients send the same settings again: nothing to redo
        self.settings = new
        self.store.extra_cite_commands = self.settings.extra_cite_commands
        for path in list(self.roots):
            self.store.invalidate(path)
        self.verifier.settings_changed()

    def entry_key(self, entry: BibEntry) -> tuple[str, str, str]:
        """Identifies an entry by its text: an edit inside it (a fixed DOI) is a new entry."""
        text = self.store.text(entry.path) or ""
        return (entry.path, entry.key, text[entry.span.start : entry.span.end])

    def entry_view(self, entry: BibEntry, analysis: Analysis | None = None) -> EntryView | None:
        from citelens.documents.bibtex.view import entry_view

        k = self.entry_key(entry)
        view = self.views.get(k)
        if view is None:
            try:
                view = entry_view(entry, analysis.first if analysis else {})
            except Exception as exc:  # an entry we cannot read is not worth a crash
                self.log_once(f"could not read entry {entry.key}: {exc}")
                return None
            if len(self.views) > 200_000:
                self.views.clear()
            self.views[k] = view
        return view

    # ------------------------------------------------------------------ analysis
    def root_of(self, path: str) -> str:
        root = self.roots.get(path)
        if root is None:
            stop = next((r for r in self.workspace_roots if path.startswith(r + os.sep)), None)
            root = find_root(self.store, path, stop)
            self.roots[path] = root
        return root

    def projects_using(self, path: str) -> list[str]:
        """Roots of the analysed projects that include ``path`` (a source or a .bib)."""
        return [
            root for root, a in self.analyses.items()
            if path in a.project.bib_paths or path in a.project.files
        ]

    def mark_dirty(self, path: str) -> None:
        """Note a changed document; one refresh follows a burst of changes (queued edits
        are not analysed one by one). Request handlers call :meth:`flush` first."""
        self._dirty.add(path)
        if self._flush_handle is None:
            try:
                # A few milliseconds gather the edits a client sends in one burst.
                self._flush_handle = asyncio.get_running_loop().call_later(0.004, self.flush)
            except RuntimeError:  # no loop (tests of the engine): do it now
                self.flush()

    def flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._dirty:
            return
        paths, self._dirty = self._dirty, set()
        for path in paths:
            self.reanalyse(path)
        self.publish()
        self.verifier.schedule()

    def refresh(self, path: str) -> None:
        """Re-analyse every project ``path`` belongs to and publish what changed."""
        self._dirty.discard(path)
        self.reanalyse(path)
        self.publish()
        self.verifier.schedule()

    def reanalyse(self, path: str) -> None:
        kind = kind_of(path)
        roots = set(self.projects_using(path))
        if kind in {"latex", "markdown"}:
            if self.store.is_open(path) and path not in roots:
                self.roots.pop(path, None)
            roots.add(self.root_of(path))
        elif kind == "bib" and not roots and self.store.is_open(path):
            roots.add(path)
        for root in roots:
            self.analyse(root)

    def analyse(self, root: str) -> Analysis:
        if kind_of(root) == "bib":
            from citelens.workspace.project import Project

            project = Project(root=root, files=[], bib_paths=[root])
        else:
            project = build_project(self.store, root, self.settings.extra_bibliographies,
                                    self._workspace_root(root))
        analysis = analyze(self.store, project, self.settings)
        self.analyses[root] = analysis
        for f in project.files:
            self.roots[f] = root
        return analysis

    def _workspace_root(self, path: str) -> str | None:
        return next((r for r in self.workspace_roots if path.startswith(r + os.sep)), None)

    def documents_using_bib(self, bib_path: str) -> list[str]:
        """Source files of every project whose bibliography is ``bib_path``: the analysed
        projects and those of the workspace's other documents (built, not analysed). The
        scope of any cite-key rename caused by editing that .bib."""
        projects = {root: a.project for root, a in self.analyses.items()}
        known = {f for p in projects.values() for f in p.files}
        for path in workspace_sources(self.workspace_roots):
            if path in known:
                continue
            root = self.root_of(path)
            if root not in projects:
                projects[root] = build_project(self.store, root,
                                               self.settings.extra_bibliographies,
                                               self._workspace_root(root))
                known.update(projects[root].files)
        return documents_using_bib(bib_path, projects.values())

    def forget_unused(self) -> None:
        """Drop analyses no open document needs any more."""
        open_paths = set(self.store.open_paths())
        for root, a in list(self.analyses.items()):
            members = set(a.project.files) | set(a.project.bib_paths) | {root}
            if not members & open_paths:
                del self.analyses[root]

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for a in self.analyses.values():
            out.extend(a.findings)
            out.extend(self.verifier.findings(a))
        if self.settings.claim_diagnostics:
            from citelens.checks.claims import claim_findings

            out.extend(claim_findings(self))
        return out

    def publish(self) -> None:
        """Push diagnostics for every file whose set changed (and clear stale ones)."""
        by_path: dict[str, list[Finding]] = {}
        seen: set[tuple[str, int, int, str, str]] = set()
        for f in self.findings():
            k = (f.path, f.span.start, f.span.end, f.code, f.message)
            if k in seen:
                continue
            seen.add(k)
            by_path.setdefault(f.path, []).append(f)
        for path in self.store.open_paths():  # an open document always gets an answer
            by_path.setdefault(path, [])
        related = bool(self._client_flag("text_document.publish_diagnostics.related_information"))
        uris = set(self.published)
        for path, fs in by_path.items():
            uri = uri_of(path)
            uris.discard(uri)
            # Converting offsets to positions is the costly part: skip it when neither the
            # findings nor the texts they point into changed since the last publish.
            sig = self._signature(path, fs)
            if uri in self.published and self._signatures.get(uri) == sig:
                continue
            self._signatures[uri] = sig
            diags = [to_diagnostic(self.store, f, self.encoding, related, self._related)
                     for f in fs]
            diags.sort(key=lambda d: (d.range.start.line, d.range.start.character, str(d.code),
                                      d.message))
            if uri not in self.published or self.published[uri] != diags:
                self.published[uri] = diags
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                    uri=uri, diagnostics=diags, version=self.store.version(path)))
        for uri in uris:  # files that no longer have any
            if self.published.get(uri):
                self.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            self.published.pop(uri, None)
            self._signatures.pop(uri, None)

    def _signature(self, path: str, findings: list[Finding]) -> tuple[object, ...]:
        paths = {path}
        items = []
        for f in findings:
            rel = tuple((r.path, r.span.start, r.span.end, r.message) for r in f.related)
            paths.update(r[0] for r in rel)
            items.append((f.code, f.span.start, f.span.end, f.message, f.severity, rel,
                          tuple(sorted(f.data.items(), key=lambda kv: kv[0]))
                          if f.data and len(f.data) < 8 else id(f.data)))
        stamps = tuple((p, self.store.stamp(p)) for p in sorted(paths))
        return (self.encoding, stamps, tuple(items))

    def _client_flag(self, dotted: str) -> Any:
        node: Any = self.client_capabilities
        for part in dotted.split("."):
            node = getattr(node, part, None)
            if node is None:
                return None
        return node

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
        for c in doc.citations:
            if c.span.start <= offset <= c.span.end:
                return c
        return None

    def entry_at(self, path: str, offset: int) -> BibEntry | None:
        bib = self.store.bib(path)
        if bib is None:
            return None
        for e in bib.entries:
            if e.span.start <= offset < e.span.end:
                return e
        return None

    def key_at(self, path: str, offset: int) -> tuple[str, Analysis | None] | None:
        if kind_of(path) == "bib":
            entry = self.entry_at(path, offset)
            if entry is None or not entry.key_span.contains(offset):
                return None
            return entry.key, self.analysis_for(path)
        c = self.citation_at(path, offset)
        if c is None:
            return None
        return c.key, self.analysis_for(path)

    def key_at_position(self, uri: str, pos: lsp.Position) -> tuple[str, Analysis | None] | None:
        path = path_of(uri)
        offset = self.offset(path, pos) if path else None
        if path is None or offset is None:
            return None
        return self.key_at(path, offset)

    def definition_locations(self, key: str, analysis: Analysis | None) -> list[lsp.Location]:
        if analysis is None:
            return []
        return [
            lsp.Location(uri_of(e.path), span_range(self.store, e.path, e.key_span, self.encoding))
            for e in analysis.definitions.get(key, [])
        ]

    def offset(self, path: str, pos: lsp.Position) -> int | None:
        index = self.store.line_index(path)
        if index is None:
            return None
        return index.offset(pos.line, pos.character, self.encoding)

    def all_citations(self, key: str, bib_path: str | None = None) -> list[tuple[str, Citation]]:
        """Every citation of ``key`` in the analysed projects and the workspace folders;
        with ``bib_path``, only in the documents of the projects using that .bib."""
        out: list[tuple[str, Citation]] = []
        paths: dict[str, None] = {}
        if bib_path is not None:
            paths = dict.fromkeys(self.documents_using_bib(bib_path))
        else:
            for a in self.analyses.values():
                for p in a.project.files:
                    paths.setdefault(p, None)
            for p in workspace_sources(self.workspace_roots):
                paths.setdefault(p, None)
        for p in paths:
            doc = self.store.source(p)
            if doc is not None:
                out.extend((p, c) for c in doc.citations if c.key == key)
        return out


def workspace_sources(roots: list[str], limit: int = 5000,
                      kinds: tuple[str, ...] = ("latex", "markdown")) -> list[str]:
    out: list[str] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "node_modules"]
            for name in filenames:
                p = os.path.join(dirpath, name)
                if kind_of(p) in kinds:
                    out.append(p)
                    if len(out) >= limit:
                        return out
    return out


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Nothing raises out of a handler: log it and answer nothing."""
    import functools
    import inspect

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("handler %s failed", fn.__name__)
                return None
        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception:
            log.exception("handler %s failed", fn.__name__)
            return None
    return wrapper


def create_server() -> CiteLensServer:
    from citelens.lsp.textsync import install

    install()  # pygls's incremental sync costs a Python call per line of the document
    server = CiteLensServer()

    @server.feature(lsp.INITIALIZE)
    @_guard
    def initialize(ls: CiteLensServer, params: lsp.InitializeParams) -> None:
        opts = params.initialization_options
        ls.apply_settings(opts if isinstance(opts, dict) else {})
        folders = params.workspace_folders or []
        ls.workspace_roots = [p for f in folders if (p := path_of(f.uri))]
        if not ls.workspace_roots and params.root_uri and (p := path_of(params.root_uri)):
            ls.workspace_roots = [p]

    @server.feature(lsp.INITIALIZED)
    @_guard
    async def initialized(ls: CiteLensServer, params: lsp.InitializedParams) -> None:
        if ls._client_flag("workspace.did_change_watched_files.dynamic_registration"):
            try:
                await asyncio.wait_for(ls.client_register_capability_async(
                    lsp.RegistrationParams(registrations=[lsp.Registration(
                        id="citelens-watch", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[
                            lsp.FileSystemWatcher(glob_pattern="**/*.{bib,tex,md,Rmd,qmd}")]),
                    )])), 5)
            except Exception as exc:  # files are still re-read by modification time
                ls.log_line(f"file watching not registered: {type(exc).__name__}")
        await pull_configuration(ls)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    @_guard
    def did_open(ls: CiteLensServer, params: lsp.DidOpenTextDocumentParams) -> None:
        sync(ls, params.text_document.uri)
        check_now(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    @_guard
    def did_change(ls: CiteLensServer, params: lsp.DidChangeTextDocumentParams) -> None:
        sync(ls, params.text_document.uri)
        path = path_of(params.text_document.uri)
        if path:
            ls.mark_dirty(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    @_guard
    def did_save(ls: CiteLensServer, params: lsp.DidSaveTextDocumentParams) -> None:
        check_now(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    @_guard
    def did_close(ls: CiteLensServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if not path:
            return
        ls.store.close(path)
        ls.store.invalidate(path)
        ls.forget_unused()
        if os.path.exists(path):
            for root in ls.projects_using(path):
                ls.analyse(root)
        ls.publish()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @_guard
    def did_change_watched(ls: CiteLensServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        touched = False
        for change in params.changes:
            path = path_of(change.uri)
            if path and not ls.store.is_open(path):
                ls.store.invalidate(path)
                for root in ls.projects_using(path):
                    ls.analyse(root)
                    touched = True
        if touched:
            ls.publish()
            ls.verifier.schedule()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    @_guard
    def did_change_folders(
        ls: CiteLensServer, params: lsp.DidChangeWorkspaceFoldersParams
    ) -> None:
        removed = {p for f in params.event.removed if (p := path_of(f.uri))}
        ls.workspace_roots = [r for r in ls.workspace_roots if r not in removed]
        ls.workspace_roots.extend(
            p for f in params.event.added if (p := path_of(f.uri)) and p not in ls.workspace_roots
        )

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @_guard
    async def did_change_configuration(
        ls: CiteLensServer, params: lsp.DidChangeConfigurationParams
    ) -> None:
        values = params.settings
        if isinstance(values, dict) and "citelens" in values:
            ls.apply_settings(values)
            reanalyse_all(ls)
        else:
            await pull_configuration(ls)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_guard
    def hover(ls: CiteLensServer, params: lsp.HoverParams) -> lsp.Hover | None:
        ls.flush()  # answer from the latest text, not a queued one
        path = path_of(params.text_document.uri)
        if not path:
            return None
        offset = ls.offset(path, params.position)
        if offset is None:
            return None
        found = ls.key_at(path, offset)
        if found is None:
            from citelens.lsp.cite_hover import command_hover  # on the command, not on a key

            return command_hover(ls, path, offset) if kind_of(path) != "bib" else None
        key, analysis = found
        defs = analysis.definitions.get(key, []) if analysis else []
        if not defs and kind_of(path) == "bib":
            bib = ls.store.bib(path)
            defs = [e for e in bib.entries if e.key == key] if bib else []
        citation = ls.citation_at(path, offset) if kind_of(path) != "bib" else None
        if not defs and analysis is not None and key in analysis.unclosed:
            bib_path, key_span = analysis.unclosed[key]
            index = ls.store.line_index(bib_path)
            at = f":{index.line_of(key_span.start) + 1}" if index else ""
            text = (f"`{key}`: defined in {os.path.basename(bib_path)}{at} in an entry that is "
                    "not closed (a '}' is missing); BibTeX still uses it, with an error")
        elif not defs:
            text = f"`{key}`: not defined in any bibliography of this document"
        else:
            entry = defs[0]
            index = ls.store.line_index(entry.path)
            line = index.line_of(entry.span.start) if index else None
            view = ls.entry_view(entry, analysis)
            parts = [entry_section(entry, view, line)]
            if len(defs) > 1:
                parts.append(f"⚠️ defined {len(defs)} times; BibTeX uses this first one")
            ver = verification_section(ls.verifier.result(entry, analysis),
                                       pending=ls.verifier.pending(entry))
            if ver:
                parts.append(ver)
            notices = notice_section(ls.verifier.result(entry, analysis))
            if notices:  # a retraction goes first, above the entry
                parts.insert(0, notices)
            if citation is not None and view is not None:
                claim = claim_section(ls, path, citation, entry, view, analysis)
                if claim:
                    parts.append(claim)
            text = "\n\n---\n\n".join(parts)
        span = citation.span if citation else None
        rng = span_range(ls.store, path, span, ls.encoding) if span else None
        return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, text), range=rng)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @_guard
    def definition(ls: CiteLensServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
        ls.flush()  # answer from the latest text, not a queued one
        found = ls.key_at_position(params.text_document.uri, params.position)
        if found is None or found[1] is None:
            return None
        return ls.definition_locations(*found) or None

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @_guard
    def references(ls: CiteLensServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        ls.flush()  # answer from the latest text, not a queued one
        found = ls.key_at_position(params.text_document.uri, params.position)
        if found is None:
            return None
        key, analysis = found
        out = [
            lsp.Location(uri_of(p), span_range(ls.store, p, c.span, ls.encoding))
            for p, c in ls.all_citations(key)
        ]
        if params.context.include_declaration:
            out.extend(ls.definition_locations(key, analysis))
        return out

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=["{", ",", "@"]),
    )
    @_guard
    async def complete(
        ls: CiteLensServer, params: lsp.CompletionParams
    ) -> lsp.CompletionList | None:
        # Keys come from the bibliographies: an edit of a .tex/.md need not be analysed
        # first (the line before the cursor is read from the latest text).
        if any(kind_of(p) == "bib" for p in ls._dirty):
            ls.flush()
        path = path_of(params.text_document.uri)
        if not path or kind_of(path) not in {"latex", "markdown"}:
            return None
        return await completion.complete(ls, path, kind_of(path) or "latex", params.position)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @_guard
    def symbols(ls: CiteLensServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        ls.flush()  # answer from the latest text, not a queued one
        path = path_of(params.text_document.uri)
        if not path or kind_of(path) != "bib":
            return []
        bib = ls.store.bib(path)
        if bib is None:
            return []
        out = []
        for e in bib.entries:
            title = e.get("title") or ""
            out.append(lsp.DocumentSymbol(
                name=e.key or "(no key)",
                detail=f"@{e.entry_type} {title[:80]}".strip(),
                kind=lsp.SymbolKind.Class,
                range=span_range(ls.store, path, e.span, ls.encoding),
                selection_range=span_range(ls.store, path, e.key_span, ls.encoding),
            ))
        return out

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
    )
    @_guard
    def code_action(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        ls.flush()  # answer from the latest text, not a queued one
        from citelens.lsp.actions import code_actions

        return code_actions(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: CiteLensServer, params: lsp.PrepareRenameParams) -> Any:
        ls.flush()  # refusals are ResponseErrors with a message for the user: not guarded
        from citelens.lsp.rename import prepare_rename

        return prepare_rename(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
    def rename(ls: CiteLensServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        ls.flush()
        from citelens.lsp.rename import rename

        return rename(ls, params)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    @_guard
    def workspace_symbol(ls: CiteLensServer, params: lsp.WorkspaceSymbolParams) -> Any:
        ls.flush()
        from citelens.lsp.symbols import workspace_symbols

        return workspace_symbols(ls, params.query)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK)
    @_guard
    def document_link(ls: CiteLensServer, params: lsp.DocumentLinkParams) -> Any:
        ls.flush()
        from citelens.lsp.links import document_links

        return document_links(ls, params.text_document.uri)

    # pygls announces these in executeCommandProvider and dispatches them.
    @server.command("citelens.verifyNow")
    @_guard
    async def verify_now(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        ls.verifier.reset()
        reanalyse_all(ls)
        ls.verifier.schedule(delay=0.0, force=True)
        return {"scheduled": True}

    @server.command("citelens.openNotice")
    @_guard
    async def open_notice(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        """Show a retraction (or other) notice in the browser (``window/showDocument``)."""
        from citelens.lsp.actions import notice_target

        url = notice_target(args)
        if url is None:
            return {"shown": False}
        result = await ls.window_show_document_async(
            lsp.ShowDocumentParams(uri=url, external=True))
        return {"shown": bool(getattr(result, "success", False))}

    @server.command("citelens.clearCache")
    @_guard
    async def clear_cache(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        where = ls.verifier.clear_cache()
        ls.log_line(f"cache cleared ({where})")
        return {"cleared": True}

    @server.command(completion.ADD_PAPER)
    @_guard
    async def add_paper(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        from citelens.lsp.papers import add_paper

        return await add_paper(ls, args[0] if args else None)

    @server.command("citelens.report")
    @_guard
    async def report_command(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        return await report(ls)

    return server


def claim_section(
    ls: CiteLensServer, path: str, citation: Citation, entry: BibEntry, view: EntryView,
    analysis: Analysis | None,
) -> str:
    """The claim check for this citation: cached result, or "checking…" after starting it."""
    try:
        from citelens.claims.hover import claim_markdown
    except ImportError:
        return ""
    text = ls.store.text(path)
    if text is None:
        return ""
    record = None
    result = ls.verifier.result(entry, analysis)
    if result is not None:
        record = result.match
    try:
        return str(claim_markdown(ls, text, citation, kind_of(path) or "latex", view, record))
    except Exception as exc:
        log.exception("claim check failed")
        return f"_Claim check failed: {type(exc).__name__}_"


def check_now(ls: CiteLensServer, uri: str) -> None:
    """On open and save: find the project again, analyse, verify without the debounce."""
    path = path_of(uri)
    if path:
        ls.roots.pop(path, None)
        ls._dirty.discard(path)
        ls.reanalyse(path)
        ls.publish()
        ls.verifier.schedule(delay=0.0)


def sync(ls: CiteLensServer, uri: str) -> None:
    """Copy the workspace's view of an open document into the store."""
    path = path_of(uri)
    if not path:
        return
    doc = ls.workspace.get_text_document(uri)
    ls.store.open(path, doc.source, doc.version or 0)


def reanalyse_all(ls: CiteLensServer) -> None:
    for root in list(ls.analyses):
        ls.analyse(root)
    ls.publish()
    ls.verifier.schedule()


async def pull_configuration(ls: CiteLensServer) -> None:
    if not ls._client_flag("workspace.configuration"):
        return
    try:
        result = await asyncio.wait_for(ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="citelens")])), 5)
    except Exception as exc:
        ls.log_line(f"could not read the editor's settings: {type(exc).__name__}")
        return
    if result and isinstance(result[0], dict):
        ls.apply_settings({"citelens": result[0]})
        reanalyse_all(ls)


async def report(ls: CiteLensServer) -> dict[str, Any]:
    """The ``citelens check --format json`` report for the workspace."""
    from citelens.cli.check import run_check
    from citelens.cli.report import to_json

    paths = ls.workspace_roots or sorted({a.project.root for a in ls.analyses.values()})
    if not paths:
        return {"version": 1, "entries": [], "diagnostics": [], "summary": {}}
    result = await run_check(paths, ls.settings, verify=ls.settings.verification_enabled,
                             log=lambda m: ls.log_once(m))
    return to_json(result)
