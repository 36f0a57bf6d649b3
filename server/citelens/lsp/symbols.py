"""Symbols: the outline of a .bib (``textDocument/documentSymbol``) and entries found by
key, title words or first author across the workspace's bibliographies
(``workspace/symbol``, the search itself in ``workspace/bibsearch.py``)."""

from __future__ import annotations

import os

from lsprotocol import types as lsp

from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import BibEntry
from citelens.lsp.convert import path_of, span_range, to_range, uri_of
from citelens.lsp.state import CiteLensServer
from citelens.workspace.bibsearch import search_entries
from citelens.workspace.render import outline_detail

#: The outline of a whole library is not sent: editors ask for it after every edit (VS
#: Code's breadcrumbs), and 68,000 entries took 7 s each time (10,000: half a second),
#: with hovers waiting behind. Entries are still found by key, title or author with
#: workspace symbols (Ctrl+T).
MAX_OUTLINE_ENTRIES = 5000


def document_symbols(ls: CiteLensServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    ls.flush()  # answer from the latest text, not a queued one
    path = path_of(params.text_document.uri)
    store = ls.session.store
    bib = store.bib(path) if path and kind_of(path) is DocKind.BIB else None
    index = store.line_index(path) if path is not None else None
    if path is None or bib is None or index is None or len(bib.entries) > MAX_OUTLINE_ENTRIES:
        return []
    out = []
    for e in bib.entries:
        out.append(
            lsp.DocumentSymbol(
                name=e.key or "(no key)",
                detail=outline_detail(e),
                kind=lsp.SymbolKind.Class,
                range=to_range(index, e.span, ls.encoding),
                selection_range=to_range(index, e.key_span, ls.encoding),
            )
        )
    return out


def workspace_symbol(ls: CiteLensServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    ls.flush()
    return workspace_symbols(ls, params.query)


def workspace_symbols(ls: CiteLensServer, query: str) -> list[lsp.SymbolInformation]:
    session = ls.session
    entries: list[BibEntry] = []
    hay: list[str] = []
    for path in session.projects.bibliographies():
        bib = session.store.bib(path)
        if bib is not None:
            entries.extend(bib.entries)
            hay.extend(session.projects.entry_haystacks(path, bib.entries))
    out = []
    for m in search_entries(entries, query, hay=hay):
        e = m.entry
        detail = " · ".join(x for x in (m.first_author, e.get("year") or "", m.title[:80]) if x)
        where = span_range(session.store, e.path, e.key_span, ls.encoding)
        out.append(
            lsp.SymbolInformation(
                name=f"{e.key} — {detail}" if detail else e.key,
                kind=lsp.SymbolKind.Class,
                location=lsp.Location(uri_of(e.path), where),
                container_name=os.path.basename(e.path),
            )
        )
    return out
