"""``textDocument/hover``: on a cite key (in a document or a .bib), the entry, its
verification, a notice (retraction first) and the claim check of the sentence; on a
citation command, every entry it cites (``lsp/cite_hover.py``).

The hover reads what is computed; a claim check it starts, or finds running, is waited
for at most ``workspace/entry_hover.HOVER_WAIT_S`` (``HOVER_WAIT_NO_MODEL_S`` without a model, when only an
abstract lookup is waited for; ``claims/background.settled_claim_markdown``): LSP has no
hover refresh, so the hover is complete when sent and says plainly what is still missing.
``hoverDetail: "verbose"`` adds the audit trail (scores, lookups tried, the claim stages).
"""

from __future__ import annotations

from lsprotocol import types as lsp

from citelens.core.dockind import DocKind, kind_of
from citelens.lsp.cite_hover import command_hover
from citelens.lsp.convert import path_of, span_range
from citelens.lsp.state import CiteLensServer, guarded
from citelens.workspace.entry_hover import entry_hover, undefined_hover


def register(server: CiteLensServer) -> None:
    server.feature(lsp.TEXT_DOCUMENT_HOVER)(guarded(hover))


async def hover(ls: CiteLensServer, params: lsp.HoverParams) -> lsp.Hover | None:
    ls.flush()  # answer from the latest text, not a queued one
    path = path_of(params.text_document.uri)
    offset = ls.offset(path, params.position) if path else None
    if path is None or offset is None:
        return None
    session = ls.session
    found = session.key_at(path, offset)
    is_bib = kind_of(path) is DocKind.BIB
    if found is None:  # on the command, not on a key
        return None if is_bib else command_hover(ls, path, offset)
    key, analysis = found
    defs = analysis.definitions.get(key, []) if analysis else []
    if not defs and is_bib:
        bib = session.store.bib(path)
        defs = [e for e in bib.entries if e.key == key] if bib else []
    citation = None if is_bib else session.citation_at(path, offset)
    if defs:
        text = await entry_hover(session, path, citation, defs, analysis)
    else:
        text = undefined_hover(session, key, analysis)
    rng = span_range(session.store, path, citation.span, ls.encoding) if citation else None
    return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, text), range=rng)


