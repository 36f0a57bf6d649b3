"""Go to definition (the entry of a key) and find references (its citations).

References of a key reach only the documents of the projects whose bibliography defines
it: another paper citing the same key from its own .bib cites another entry.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from citelens.lsp.convert import path_of, span_range, uri_of
from citelens.lsp.state import CiteLensServer
from citelens.workspace.index import Analysis


def _key_at(ls: CiteLensServer, uri: str, pos: lsp.Position) -> tuple[str, Analysis | None] | None:
    ls.flush()  # answer from the latest text, not a queued one
    path = path_of(uri)
    offset = ls.offset(path, pos) if path else None
    if path is None or offset is None:
        return None
    return ls.session.projects.key_at(path, offset)


def _definitions(ls: CiteLensServer, key: str, analysis: Analysis | None) -> list[lsp.Location]:
    if analysis is None:
        return []
    store = ls.session.store
    return [
        lsp.Location(uri_of(e.path), span_range(store, e.path, e.key_span, ls.encoding))
        for e in analysis.definitions.get(key, [])
    ]


def definition(ls: CiteLensServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
    found = _key_at(ls, params.text_document.uri, params.position)
    if found is None or found[1] is None:
        return None
    return _definitions(ls, *found) or None


def references(ls: CiteLensServer, params: lsp.ReferenceParams) -> list[lsp.Location] | None:
    found = _key_at(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    key, analysis = found
    defs = analysis.definitions.get(key, []) if analysis is not None else []
    store = ls.session.store
    # scoped to the projects using the .bib that defines the key (any, if undefined)
    cites = ls.session.projects.all_citations(key, defs[0].path if defs else None)
    out = [lsp.Location(uri_of(p), span_range(store, p, c.span, ls.encoding)) for p, c in cites]
    if params.context.include_declaration:
        out.extend(_definitions(ls, key, analysis))
    return out
