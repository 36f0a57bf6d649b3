"""``textDocument/hover``: on a cite key (in a document or a .bib), the entry, its
verification, a notice (retraction first) and the claim check of the sentence; on a
citation command, every entry it cites (``lsp/cite_hover.py``).

The hover reads what is computed; a claim check it starts, or finds running, is waited
for at most :data:`HOVER_WAIT_S` (:data:`HOVER_WAIT_NO_MODEL_S` without a model, when only an
abstract lookup is waited for; ``claims/background.settled_claim_markdown``): LSP has no
hover refresh, so the hover is complete when sent and says plainly what is still missing.
``hoverDetail: "verbose"`` adds the audit trail (scores, lookups tried, the claim stages).
"""

from __future__ import annotations

import logging
import os

from lsprotocol import types as lsp

from citelens.checks.claims import REPUBLISH_DELAY_S
from citelens.claims.background import settled_claim_markdown
from citelens.claims.llm import LLMConfig
from citelens.claims.paper import CitedPaper, cited_paper
from citelens.claims.result import ClaimResult
from citelens.core.dockind import kind_of
from citelens.core.model import BibEntry, Citation, EntryView
from citelens.lsp.cite_hover import command_hover
from citelens.lsp.convert import path_of, span_range
from citelens.lsp.state import CiteLensServer, guarded
from citelens.workspace.index import Analysis
from citelens.workspace.render import entry_section, notice_section, verification_section

log = logging.getLogger("citelens")
#: Seconds a hover waits for a claim check (an abstract lookup, a model) already running.
HOVER_WAIT_S = 1.0
#: Without a model the claim section is the abstract's closest sentences, and the abstract
#: lookup is all there is to wait for. The verification's record has no abstract (the
#: batch asks without it), so the first hover looks it up: through the rate limiters,
#: behind the background verification (Semantic Scholar: about a request a second), then
#: the next source when the first has none; over a second was common, and the first hover
#: said "the sources have not answered in time" where the second showed the sentences.
HOVER_WAIT_NO_MODEL_S = 4.0


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
    is_bib = kind_of(path) == "bib"
    if found is None:  # on the command, not on a key
        return None if is_bib else command_hover(ls, path, offset)
    key, analysis = found
    defs = analysis.definitions.get(key, []) if analysis else []
    if not defs and is_bib:
        bib = session.store.bib(path)
        defs = [e for e in bib.entries if e.key == key] if bib else []
    citation = None if is_bib else session.citation_at(path, offset)
    if defs:
        text = await _entry_hover(ls, path, citation, defs, analysis)
    else:
        text = _undefined(ls, key, analysis)
    rng = span_range(session.store, path, citation.span, ls.encoding) if citation else None
    return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, text), range=rng)


def _undefined(ls: CiteLensServer, key: str, analysis: Analysis | None) -> str:
    if analysis is None or key not in analysis.unclosed:
        return f"`{key}`: not defined in any bibliography of this document"
    bib_path, key_span = analysis.unclosed[key]
    index = ls.session.store.line_index(bib_path)
    at = f":{index.line_of(key_span.start) + 1}" if index else ""
    return (
        f"`{key}`: defined in {os.path.basename(bib_path)}{at} in an entry that is "
        "not closed (a '}' is missing); BibTeX still uses it, with an error"
    )


async def _entry_hover(
    ls: CiteLensServer, path: str, citation: Citation | None, defs: list[BibEntry], analysis: Analysis | None
) -> str:
    session = ls.session
    entry = defs[0]
    index = session.store.line_index(entry.path)
    line = index.line_of(entry.span.start) if index else None
    view = session.entry_view(entry, analysis)
    verdict = session.verdict(entry, analysis)
    parts = [notice_section(verdict), entry_section(entry, view, line)]
    if len(defs) > 1:
        parts.append(f"⚠️ defined {len(defs)} times; BibTeX uses this first one")
    verbose = session.settings.hover_detail == "verbose"
    parts.append(verification_section(verdict, pending=session.being_checked(entry), verbose=verbose))
    if citation is not None and view is not None:
        paper = cited_paper(verdict, verifying=session.being_checked(entry))
        parts.append(await claim_section(ls, path, citation, view, paper))
    return "\n\n---\n\n".join(p for p in parts if p)


async def claim_section(
    ls: CiteLensServer, path: str, citation: Citation, view: EntryView, paper: CitedPaper
) -> str:
    """The claim check for this citation: its result, or "checking…" after starting it."""
    session = ls.session
    text = session.store.text(path)
    if text is None:
        return ""

    def on_done(_result: ClaimResult) -> None:  # a result found by a hover is a diagnostic too
        if session.settings.claim_diagnostics:
            session.on_change(REPUBLISH_DELAY_S)

    try:
        return await settled_claim_markdown(
            session.claim_checker(),
            text,
            citation,
            kind_of(path) or "latex",
            view,
            paper,
            on_done,
            wait_s=HOVER_WAIT_S if LLMConfig.from_settings(session.settings) else HOVER_WAIT_NO_MODEL_S,
            verbose=session.settings.hover_detail == "verbose",
        )
    except Exception as exc:
        log.exception("claim check failed")
        return f"Claim check failed: {type(exc).__name__}"
