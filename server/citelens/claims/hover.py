"""The claim part of a citation hover, for the language server.

:func:`claim_markdown` is synchronous and instant: it extracts the claim, returns
the cached result if there is one, and otherwise starts the check in the
background (once per claim and paper) and returns "Checking claim…". The next
hover shows the result.
"""

from __future__ import annotations

import asyncio
from typing import Any

from citelens.claims.checker import ClaimChecker
from citelens.claims.render import render_markdown, render_pending
from citelens.claims.sentences import extract_claim
from citelens.model import Citation, EntryView
from citelens.sources.records import PaperRecord


def checker_for(ls: Any) -> ClaimChecker:
    """The server's :class:`ClaimChecker` (``ls.claims``), rebuilt when settings changed."""
    current = getattr(ls, "claims", None)
    if isinstance(current, ClaimChecker) and current.settings == ls.settings:
        return current
    checker = ClaimChecker(ls.settings)
    if isinstance(current, ClaimChecker):
        try:
            asyncio.get_running_loop().create_task(current.aclose())
        except RuntimeError:  # no loop: nothing is running either
            pass
    ls.claims = checker
    return checker


def claim_markdown(
    ls: Any, text: str, citation: Citation, language: str, view: EntryView,
    record: PaperRecord | None,
) -> str:
    """Hover Markdown for the claim around ``citation`` ("" when there is no claim text)."""
    claim = extract_claim(text, citation.span, language)
    if not claim:
        return ""
    checker = checker_for(ls)
    hit = checker.cached(claim, view, record)
    if hit is not None:
        return render_markdown(hit)
    try:
        checker.ensure(claim, view, record)
    except RuntimeError:  # no running event loop (called outside the server)
        return ""
    return render_pending(claim)
