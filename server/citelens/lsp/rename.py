"""textDocument/prepareRename and textDocument/rename of a cite key.

The key is renamed in its .bib entry (and in ``crossref`` fields naming it) and at every
citation in the documents of the projects whose bibliography is that .bib
(:func:`citelens.workspace.project.documents_using_bib`): other projects, comments and
files no project includes are left alone. The edits come from
:func:`citelens.workspace.rename.rename_edits`.
"""

from __future__ import annotations

import logging

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import BibEntry, Span
from citelens.fixes.fix import file_edits
from citelens.lsp.convert import path_of, span_range
from citelens.lsp.edits import EditRefused, workspace_edit
from citelens.lsp.state import CiteLensServer
from citelens.workspace.rename import RenameError, check_new_key, rename_edits


def quiet_refusals() -> None:
    """A refused rename is one INFO line in pygls's log, not an error with a traceback."""
    rpc_log = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, RefusalLogFilter) for f in rpc_log.filters):
        rpc_log.addFilter(RefusalLogFilter())


class RefusalLogFilter(logging.Filter):
    """pygls logs every error answer with its traceback at ERROR; a refusal (a rename the
    user asked for and we declined, with its reason) is one INFO line, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcException) and exc.code == int(lsp.LSPErrorCodes.RequestFailed):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg, record.args = "request refused: %s", (exc.message,)
            record.exc_info, record.exc_text = None, None
        return True


def _refuse(message: str) -> JsonRpcException:
    return JsonRpcException(message, code=int(lsp.LSPErrorCodes.RequestFailed))


def _target(ls: CiteLensServer, uri: str, pos: lsp.Position) -> tuple[str, str, Span, list[BibEntry]]:
    """(path, key, span of the key under the cursor, its definitions) or a refusal."""
    path = path_of(uri)
    offset = ls.offset(path, pos) if path else None
    if path is None or offset is None:
        raise _refuse("No cite key here")
    if kind_of(path) is DocKind.BIB:
        entry = ls.session.projects.entry_at(path, offset)
        if entry is None or not entry.key_span.contains(offset):
            raise _refuse("Rename works on an entry's key or on a cited key")
        analysis = ls.session.analysis_for(path)
        defs = analysis.definitions.get(entry.key, []) if analysis else []
        return path, entry.key, entry.key_span, defs or [entry]
    c = ls.session.projects.citation_at(path, offset)
    if c is None:
        raise _refuse("Rename works on a cited key or on an entry's key")
    analysis = ls.session.analysis_for(path)
    defs = analysis.definitions.get(c.key, []) if analysis else []
    if not defs:
        raise _refuse(
            f"'{c.key}' is not defined in any bibliography of this document, so there is no entry to rename"
        )
    return path, c.key, c.span, defs


def prepare_rename(ls: CiteLensServer, params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder:
    ls.flush()
    path, key, span, _defs = _target(ls, params.text_document.uri, params.position)
    rng = span_range(ls.session.store, path, span, ls.encoding)
    return lsp.PrepareRenamePlaceholder(range=rng, placeholder=key)


def _defined_keys(ls: CiteLensServer, bib_paths: list[str]) -> set[str]:
    """Every key the renamed citations could collide with: those of every bibliography of
    every project the rename reaches, open or not (a key another paper's other .bib defines
    would silently switch that paper's citations to another entry)."""
    bibs: dict[str, None] = dict.fromkeys(bib_paths)
    for p in bib_paths:
        for project in ls.session.projects.projects_using_bib(p):
            bibs.update(dict.fromkeys(project.bib_paths))
    keys: set[str] = set()
    for p in bibs:
        bib = ls.session.store.bib(p)
        if bib is not None:
            keys.update(e.key for e in bib.entries)
    for a in ls.session.projects.analyses.values():
        if set(a.project.bib_paths) & set(bibs):
            keys.update(a.definitions)
            keys.update(a.bibitems)
    return keys


def rename(ls: CiteLensServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
    ls.flush()
    _path, key, _span, defs = _target(ls, params.text_document.uri, params.position)
    bib_paths = list(dict.fromkeys(e.path for e in defs))
    try:
        check_new_key(key, params.new_name, _defined_keys(ls, bib_paths))
    except RenameError as exc:
        raise _refuse(str(exc)) from None
    sources: dict[str, None] = {}
    for bib in bib_paths:
        sources.update(dict.fromkeys(ls.session.projects.documents_using_bib(bib)))
    edits = file_edits(rename_edits(ls.session.store, key, params.new_name, bib_paths, list(sources)))
    try:
        return workspace_edit(ls, edits) if edits is not None else None
    except EditRefused as exc:
        raise _refuse(str(exc)) from None
