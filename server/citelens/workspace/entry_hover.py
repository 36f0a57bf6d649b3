"""The hover, as Markdown, from what the engine has computed: on a cite key (in a document or
a .bib) the entry and its verdict (written by ``workspace/render.py``) and, at a citation,
the claim check, waited for a little (LSP has no hover refresh); on a citation command
outside its keys, every entry it cites. No LSP here: ``lsp/hover.py`` turns the offset and
the span into positions and sends it."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from citelens.checks.claims import REPUBLISH_DELAY_S
from citelens.claims.background import settled_claim_markdown
from citelens.claims.checker import ClaimChecker
from citelens.claims.llm import LLMConfig
from citelens.claims.paper import CitedPaper, cited_paper
from citelens.claims.result import ClaimResult
from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import BibEntry, Citation, EntryView, Span
from citelens.core.settings import Settings
from citelens.verify.status import Verification
from citelens.workspace.index import Analysis
from citelens.workspace.projects import Projects
from citelens.workspace.render import (
    CitedRow,
    citation_list,
    entry_section,
    notice_section,
    verification_section,
)
from citelens.workspace.store import ReadStore


class HoverSource(Protocol):
    """What a hover reads (the engine): its documents, projects, verdicts and claim checker."""

    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> ReadStore: ...
    @property
    def projects(self) -> Projects: ...
    @property
    def on_news(self) -> Callable[[float], None]: ...
    def entry_view(self, entry: BibEntry, analysis: Analysis | None = None) -> EntryView | None: ...
    def verdict(self, entry: BibEntry, analysis: Analysis | None) -> Verification | None: ...
    def being_checked(self, entry: BibEntry) -> bool: ...
    def claim_checker(self) -> ClaimChecker: ...


@dataclass(frozen=True, slots=True)
class Hovered:
    """A hover's Markdown, and the span it is about (a citation or a command; None: none)."""

    markdown: str
    span: Span | None


log = logging.getLogger("citelens")
#: Seconds a hover waits for a claim check (an abstract lookup, a model) already running.
HOVER_WAIT_S = 1.0
#: Without a model the claim section is the abstract's closest sentences, and the abstract
#: lookup is all there is to wait for. The verification's record has no abstract (the
#: batch asks without it), so the first hover looks it up: through the rate limiters,
#: behind the background verification (Semantic Scholar: about a request a second), then
#: the next source when the first has none; over a second was common, and the first hover
#: said it was still looking where the second showed the sentences.
HOVER_WAIT_NO_MODEL_S = 4.0


async def hover_at(session: HoverSource, path: str, offset: int) -> Hovered | None:
    """The hover at ``offset`` of ``path``: on a key, its entry (or why it has none); on a
    citation command outside its keys, every entry it cites; else None."""
    found = session.projects.key_at(path, offset)
    is_bib = kind_of(path) is DocKind.BIB
    if found is None:  # on the command, not on a key
        return None if is_bib else command_hover(session, path, offset)
    key, analysis = found
    defs = analysis.definitions.get(key, []) if analysis else []
    if not defs and is_bib:
        bib = session.store.bib(path)
        defs = [e for e in bib.entries if e.key == key] if bib else []
    citation = None if is_bib else session.projects.citation_at(path, offset)
    if defs:
        text = await entry_hover(session, path, citation, defs, analysis)
    else:
        text = undefined_hover(session, key, analysis)
    return Hovered(text, citation.span if citation else None)


def command_hover(session: HoverSource, path: str, offset: int) -> Hovered | None:
    """Every entry the citation command at ``offset`` cites, in one compact list."""
    cites = session.projects.command_at(path, offset)
    if not cites:
        return None
    analysis = session.projects.analysis_for(path)
    rows: list[CitedRow] = []
    for c in cites:
        defs = analysis.definitions.get(c.key, []) if analysis else []
        if not defs:
            rows.append((c.key, None, None, False))
            continue
        entry = defs[0]
        rows.append(
            (
                c.key,
                session.entry_view(entry, analysis),
                session.verdict(entry, analysis),
                session.being_checked(entry),
            )
        )
    return Hovered(citation_list(rows), cites[0].command_span)


def undefined_hover(session: HoverSource, key: str, analysis: Analysis | None) -> str:
    if analysis is None or key not in analysis.unclosed:
        return f"`{key}`: not defined in any bibliography of this document"
    bib_path, key_span = analysis.unclosed[key]
    index = session.store.line_index(bib_path)
    at = f":{index.line_of(key_span.start) + 1}" if index else ""
    return (
        f"`{key}`: defined in {os.path.basename(bib_path)}{at} in an entry that is "
        "not closed (a '}' is missing); BibTeX still uses it, with an error"
    )


async def entry_hover(
    session: HoverSource,
    path: str,
    citation: Citation | None,
    defs: list[BibEntry],
    analysis: Analysis | None,
) -> str:
    """The hover on an entry's key: a retraction first, the entry, its verdict and, at a
    citation, the claim check."""
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
        parts.append(await claim_section(session, path, citation, view, paper))
    return "\n\n---\n\n".join(p for p in parts if p)


async def claim_section(
    session: HoverSource, path: str, citation: Citation, view: EntryView, paper: CitedPaper
) -> str:
    """The claim check for this citation: its result, or "checking…" after starting it."""
    text = session.store.text(path)
    if text is None:
        return ""

    def on_done(_result: ClaimResult) -> None:  # a result found by a hover is a diagnostic too
        if session.settings.claim_diagnostics:
            session.on_news(REPUBLISH_DELAY_S)

    try:
        return await settled_claim_markdown(
            session.claim_checker(),
            text,
            citation,
            kind_of(path) or DocKind.LATEX,
            view,
            paper,
            on_done,
            wait_s=HOVER_WAIT_S if LLMConfig.from_settings(session.settings) else HOVER_WAIT_NO_MODEL_S,
            verbose=session.settings.hover_detail == "verbose",
        )
    except Exception as exc:
        log.exception("claim check failed")
        return f"Claim check failed: {type(exc).__name__}"
