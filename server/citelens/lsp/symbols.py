"""workspace/symbol: the entries of the workspace's bibliographies, by key, title words
or first author (:func:`citelens.workspace.bibsearch.search_entries`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from citelens.core.model import BibEntry
from citelens.lsp.convert import span_range, uri_of
from citelens.workspace.bibsearch import haystacks, search_entries

if TYPE_CHECKING:
    from citelens.lsp.server import CiteLensServer


def workspace_bibliographies(ls: CiteLensServer) -> list[str]:
    """The .bib files of the analysed projects, then those in the workspace folders."""
    from citelens.lsp.server import workspace_sources

    paths: dict[str, None] = {}
    for a in ls.analyses.values():
        paths.update(dict.fromkeys(a.project.bib_paths))
    paths.update(dict.fromkeys(workspace_sources(ls.workspace_roots, kinds=("bib",))))
    return list(paths)


#: (path, store stamp) -> haystacks of that .bib's entries (see bibsearch.haystacks)
_HAY: dict[tuple[str, object], list[str]] = {}


def _haystacks(ls: CiteLensServer, path: str, entries: list[BibEntry]) -> list[str]:
    k = (path, ls.store.stamp(path))
    hay = _HAY.get(k)
    if hay is None:
        for old in [x for x in _HAY if x[0] == path]:
            del _HAY[old]
        hay = haystacks(ls.store.text(path) or "", entries)
        _HAY[k] = hay
    return hay


def workspace_symbols(ls: CiteLensServer, query: str) -> list[lsp.SymbolInformation]:
    entries: list[BibEntry] = []
    hay: list[str] = []
    for path in workspace_bibliographies(ls):
        bib = ls.store.bib(path)
        if bib is not None:
            entries.extend(bib.entries)
            hay.extend(_haystacks(ls, path, bib.entries))
    out = []
    for m in search_entries(entries, query, hay=hay):
        e = m.entry
        detail = " · ".join(x for x in (m.first_author, e.get("year") or "", m.title[:80]) if x)
        out.append(
            lsp.SymbolInformation(
                name=f"{e.key} — {detail}" if detail else e.key,
                kind=lsp.SymbolKind.Class,
                location=lsp.Location(uri_of(e.path), span_range(ls.store, e.path, e.key_span, ls.encoding)),
                container_name=e.path.rsplit("/", 1)[-1],
            )
        )
    return out
