"""``textDocument/hover``: on a cite key (in a document or a .bib), the entry, its
verification, a notice (retraction first) and the claim check of the sentence; on a
citation command, every entry it cites. The engine writes it (``workspace/entry_hover.py``);
this turns positions into an offset and the span it is about into a range.

The hover reads what is computed; a claim check it starts, or finds running, is waited
for at most ``workspace/entry_hover.HOVER_WAIT_S`` (``HOVER_WAIT_NO_MODEL_S`` without a model, when only an
abstract lookup is waited for; ``claims/background.settled_claim_markdown``): LSP has no
hover refresh, so the hover is complete when sent and says plainly what is still missing.
``hoverDetail: "verbose"`` adds the audit trail (scores, lookups tried, the claim stages).
"""

from __future__ import annotations

from lsprotocol import types as lsp

from citelens.lsp.convert import path_of, span_range
from citelens.lsp.state import CiteLensServer


async def hover(ls: CiteLensServer, params: lsp.HoverParams) -> lsp.Hover | None:
    ls.flush()  # answer from the latest text, not a queued one
    path = path_of(params.text_document.uri)
    offset = ls.offset(path, params.position) if path else None
    if path is None or offset is None:
        return None
    found = await ls.session.hover(path, offset)
    if found is None:
        return None
    rng = span_range(ls.session.store, path, found.span, ls.encoding) if found.span is not None else None
    return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, found.markdown), range=rng)
