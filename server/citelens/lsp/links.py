"""textDocument/documentLink: DOIs, URLs and arXiv eprints in .bib files; the files named
by \\bibliography, \\addbibresource, \\input, \\include and a Markdown ``bibliography:``
(:mod:`citelens.workspace.links`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from citelens.documents.read import kind_of
from citelens.lsp.convert import path_of, span_range, uri_of
from citelens.workspace.links import bib_links, reference_links

if TYPE_CHECKING:
    from citelens.lsp.server import CiteLensServer


def document_links(ls: CiteLensServer, uri: str) -> list[lsp.DocumentLink]:
    path = path_of(uri)
    if not path:
        return []
    kind = kind_of(path)
    if kind == "bib":
        bib = ls.store.bib(path)
        text = ls.store.text(path)
        if bib is None or text is None:
            return []
        pairs = bib_links(bib, text)
    elif kind in {"latex", "markdown"}:
        doc = ls.store.source(path)
        if doc is None:
            return []
        pairs = [(span, uri_of(p)) for span, p in reference_links(ls.store, doc, ls.root_of(path))]
    else:
        return []
    return [
        lsp.DocumentLink(range=span_range(ls.store, path, span, ls.encoding), target=target)
        for span, target in pairs
    ]
