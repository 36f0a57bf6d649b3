"""textDocument/documentLink: DOIs, URLs and arXiv eprints in .bib files; the files named
by \\bibliography, \\addbibresource, \\input, \\include and a Markdown ``bibliography:``
(:mod:`citelens.workspace.links`)."""

from __future__ import annotations

from lsprotocol import types as lsp

from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.lsp.convert import path_of, span_range, uri_of
from citelens.lsp.state import CiteLensServer
from citelens.workspace.links import bib_links, reference_links

#: A whole library gets no links: editors ask for a document's links after every edit, and
#: 68,000 entries are 137,000 links (every field read, seconds of work and tens of MB each
#: time, with hovers waiting behind). Editors still underline the URLs they see themselves.
MAX_LINKED_ENTRIES = 2000


def document_link(ls: CiteLensServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
    ls.flush()
    return document_links(ls, params.text_document.uri)


def document_links(ls: CiteLensServer, uri: str) -> list[lsp.DocumentLink]:
    path = path_of(uri)
    if not path:
        return []
    kind = kind_of(path)
    if kind is DocKind.BIB:
        bib = ls.session.store.bib(path)
        if bib is None or len(bib.entries) > MAX_LINKED_ENTRIES:
            return []
        text = ls.session.store.text(path)
        if text is None:
            return []
        pairs = bib_links(bib, text)
    elif kind in CITING:
        doc = ls.session.store.source(path)
        if doc is None:
            return []
        refs = reference_links(ls.session.store, doc, ls.session.projects.root_of(path))
        pairs = [(span, uri_of(p)) for span, p in refs]
    else:
        return []
    return [
        lsp.DocumentLink(range=span_range(ls.session.store, path, span, ls.encoding), target=target)
        for span, target in pairs
    ]
