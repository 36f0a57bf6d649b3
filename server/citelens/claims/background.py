"""Claim checks on demand, in the background, for the editor (no LSP here).

:func:`claim_at` extracts (and memoises) the claim around a citation; :func:`known_result`
reads what is known; :func:`start` checks in the background. :func:`claim_markdown`, for
the hover, is synchronous and instant: it extracts the claim, returns
the cached result if there is one, and otherwise starts the check in the background
(once per claim and paper) and returns "Checking claim…". The next hover shows the
result. Without a model there is no check to wait for: the hover shows the closest
sentences of the abstract the verification record holds, or says that the abstract is
being looked up. Only the paper verification accepted is read (:mod:`citelens.claims.paper`):
for any other verdict the hover says in one line why there is no check.

A result that is not cached (an error, or a retrieval that failed) is kept in
memory until one hover has shown it; the hover after that tries again, so a broken
endpoint costs model calls only when someone looks, never in a loop.

The checker (``Engine.claim_checker``) shares the verifier's rate-limited scholarly
clients, so claim checks and verification together stay within each API's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from collections.abc import Callable

from citelens.claims.checker import ClaimChecker
from citelens.claims.claimhood import no_claim_reason
from citelens.claims.llm import LLMConfig
from citelens.claims.paper import CitedPaper
from citelens.claims.pipeline import SETUP_HINT, evidence_at_once
from citelens.claims.render import (
    render_looking_up,
    render_markdown,
    render_no_claim,
    render_no_paper,
    render_pending,
    render_unsettled,
)
from citelens.claims.result import ClaimResult
from citelens.claims.sentences import WINDOW, extract_claim
from citelens.core.dockind import DocKind
from citelens.core.model import Citation, EntryView, Span
from citelens.sources.records import PaperRecord

#: Bound on the claim texts a checker remembers (see :func:`claim_at`).
_CLAIM_MEMO_MAX = 4096


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _paragraph(text: str, start: int, end: int) -> tuple[int, int]:
    """The blank-line paragraph around ``[start, end)``, within extract_claim's window."""
    a, b = max(0, start - WINDOW), min(len(text), end + WINDOW)
    blanks = list(_BLANK_LINE.finditer(text, a, start))
    after = _BLANK_LINE.search(text, end, b)
    return (blanks[-1].end() if blanks else a), (after.start() if after else b)


def claim_at(
    text: str,
    citation: Citation,
    language: DocKind,
    *,
    memo: dict[tuple[str, str, int, int], str],
    compute: bool = True,
) -> str | None:
    """:func:`extract_claim` on the paragraph of the citation, memoised on that paragraph.

    extract_claim never looks past a blank line, so the paragraph gives the same claim
    (checked on every citation of the shared corpus) and an edit re-extracts only the
    claims of the paragraph it touched. ``compute=False``: ``None`` unless memoised.
    """
    k = _paragraph_key(text, citation, language)
    hit = memo.get(k)
    if hit is None:
        if not compute:
            return None
        hit = _remember(memo, k, extract_claim(k[1], Span(k[2], k[3]), language))
    return hit


def no_claim_at(
    text: str,
    citation: Citation,
    language: DocKind,
    claim: str,
    *,
    memo: dict[tuple[str, str, int, int], str],
) -> str | None:
    """:func:`citelens.claims.claimhood.no_claim_reason` for the citation (a table cell,
    a caption, ".", a list of names: no claim to check), memoised on its paragraph as
    :func:`claim_at` is; ``None`` for a claim."""
    k = _paragraph_key(text, citation, language)
    hit = memo.get(k)
    if hit is None:
        hit = _remember(memo, k, no_claim_reason(k[1], Span(k[2], k[3]), language, claim) or "")
    return hit or None


def _paragraph_key(text: str, citation: Citation, language: DocKind) -> tuple[str, str, int, int]:
    """The memo key of a citation: its language, its paragraph and its span within it."""
    start = max(0, min(citation.span.start, len(text)))
    end = max(start, min(citation.span.end, len(text)))
    a, b = _paragraph(text, start, end)
    return (language, text[a:b], start - a, end - a)


def _remember(memo: dict[tuple[str, str, int, int], str], k: tuple[str, str, int, int], value: str) -> str:
    """Store ``value`` under ``k`` (the memo emptied first when full); returns it."""
    if len(memo) >= _CLAIM_MEMO_MAX:
        memo.clear()
    memo[k] = value
    return value


def _keys(checker: ClaimChecker, claim: str, view: EntryView, record: PaperRecord | None) -> list[str]:
    """The cache keys this claim may be stored under: with the verified record, and
    without it (a check started before verification finished; the record can add a DOI
    and so change the paper's identity)."""
    keys = [checker.key(claim, view, record)]
    if record is not None:
        plain = checker.key(claim, view, None)
        if plain != keys[0]:
            keys.append(plain)
    return keys


def known_result(
    checker: ClaimChecker, claim: str, view: EntryView, record: PaperRecord | None, *, consume: bool = False
) -> ClaimResult | None:
    """The cached result, else an uncached (error) result not shown yet, else ``None``.

    ``consume`` forgets the uncached result once returned, so the next call checks again.
    """
    hit = checker.cached(claim, view, record)
    if hit is None and record is not None:
        hit = checker.cached(claim, view, None)
    if hit is not None:
        return hit
    keys = _keys(checker, claim, view, record)
    uncached = checker.uncached
    if uncached:
        for k in keys:
            if k in uncached:
                return uncached.pop(k) if consume else uncached[k]
    return None


def start(
    checker: ClaimChecker,
    claim: str,
    view: EntryView,
    record: PaperRecord | None,
    on_done: Callable[[ClaimResult], None] | None = None,
) -> asyncio.Task[ClaimResult] | None:
    """Start (or join) the check of ``claim``; ``None`` when one keyed without the record
    is already running. Raises ``RuntimeError`` without a running event loop."""
    keys = _keys(checker, claim, view, record)
    if len(keys) > 1 and checker.running(claim, view, None):
        return None
    fresh = not checker.running(claim, view, record)
    task = checker.ensure(claim, view, record)
    if fresh:
        key = keys[0]
        ref = weakref.ref(checker)

        def remember(t: asyncio.Task[ClaimResult]) -> None:
            owner = ref()
            if owner is None or t.cancelled() or t.exception() is not None:
                return
            result = t.result()
            if result.transient:
                store = owner.uncached
                if len(store) > 1000:
                    store.clear()
                store[key] = result
            if on_done is not None:
                with contextlib.suppress(Exception):
                    on_done(result)

        task.add_done_callback(remember)
    return task


def claim_markdown(
    checker: ClaimChecker,
    text: str,
    citation: Citation,
    language: DocKind,
    view: EntryView,
    paper: CitedPaper,
    on_done: Callable[[ClaimResult], None] | None = None,
    verbose: bool = False,
) -> str:
    """Hover Markdown for the claim around ``citation`` ("" when there is no claim text);
    ``paper`` is what verification decided (:func:`citelens.claims.paper.cited_paper`):
    without an accepted record there is no check, only the line saying why.
    ``on_done`` is called with the result of a check this starts."""
    claim = claim_at(text, citation, language, memo=checker.claim_memo)
    if not claim:
        return ""
    not_claim = no_claim_at(text, citation, language, claim, memo=checker.no_claim_memo)
    if not_claim is not None:
        return render_no_claim(not_claim, claim)
    record = paper.record
    if record is None:
        return render_no_paper(paper.reason)
    hit = known_result(checker, claim, view, record, consume=True)
    if hit is not None:
        return render_markdown(hit, verbose)
    no_model = LLMConfig.from_settings(checker.settings) is None
    if no_model:  # nothing to wait for: the evidence at once when the record has it
        quick = evidence_at_once(claim, view, record, checker.settings)
        if quick is not None:
            return render_markdown(quick, verbose)
    try:
        start(checker, claim, view, record, on_done=on_done)
    except RuntimeError:  # no running event loop (called outside the server)
        return ""
    if no_model:
        return render_looking_up(claim, SETUP_HINT)
    live = next((checker.live[k] for k in _keys(checker, claim, view, record) if k in checker.live), None)
    return render_pending(claim, live)


async def settled_claim_markdown(
    checker: ClaimChecker,
    text: str,
    citation: Citation,
    language: DocKind,
    view: EntryView,
    paper: CitedPaper,
    on_done: Callable[[ClaimResult], None] | None = None,
    *,
    wait_s: float = 1.0,
    verbose: bool = False,
) -> str:
    """:func:`claim_markdown`, complete when sent: a check it started or found running is
    waited for (at most ``wait_s``); if it is still running then, the text says what is
    missing, and promises no update (LSP cannot refresh a hover)."""
    first = claim_markdown(checker, text, citation, language, view, paper, on_done, verbose)
    claim = claim_at(text, citation, language, memo=checker.claim_memo, compute=False)
    record = paper.record
    if not claim or record is None:
        return first
    if no_claim_at(text, citation, language, claim, memo=checker.no_claim_memo) is not None:
        return first
    keyed = (record, None)
    tasks = {t for r in keyed if (t := checker.in_flight(claim, view, r)) is not None}
    if not tasks:
        return first
    await asyncio.wait(tasks, timeout=wait_s)
    hit = known_result(checker, claim, view, record, consume=True)
    if hit is not None:
        return render_markdown(hit, verbose)
    no_model = LLMConfig.from_settings(checker.settings) is None
    live = next((checker.live[k] for k in _keys(checker, claim, view, record) if k in checker.live), None)
    return render_unsettled(claim, live, no_model)
