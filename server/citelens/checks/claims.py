"""Claim diagnostics (setting ``claimDiagnostics``, off by default).

:func:`claim_findings` is what the language server adds to its findings on every
publish. It is synchronous and cheap: it reads the citations of the open documents,
returns ``CLAIM_CONTRADICTED`` / ``CLAIM_UNSUPPORTED`` findings (at the citation key)
for the claims whose check has finished, and queues the others. A background worker
pool (:data:`MAX_CONCURRENT` checks at a time, through the session's shared
:class:`~citelens.claims.checker.ClaimChecker`, so a hover and a diagnostic never run
the same check twice) works through the queue in document order and asks for another
publish (the ``republish`` callback) when results arrive.

Nothing runs without a configured model (no verdict, no diagnostic). A check that
failed is not retried automatically (only a hover retries it), so a broken endpoint
does not cause a loop of model calls. A claim is checked only against the paper
verification accepted (:mod:`citelens.claims.paper`): a citation whose entry is still
being verified waits for it, and one whose entry is NOT_FOUND, DOI_MISMATCH or
UNVERIFIED gets no check and no diagnostic.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from citelens.claims.background import claim_at, known_result, no_claim_at, start
from citelens.claims.checker import ClaimChecker
from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.core.codes import Code
from citelens.core.dockind import DocKind
from citelens.core.findings import Finding, make_finding
from citelens.core.model import Citation, EntryView
from citelens.core.settings import Settings
from citelens.sources.records import PaperRecord

#: Asked to publish again after this many seconds.
Republish = Callable[[float], None]


class ClaimSite(NamedTuple):
    """A citation of an open document and what its claim is checked against."""

    path: str
    language: DocKind
    text: str  # the document's text
    citation: Citation
    view: EntryView  # the cited entry
    record: PaperRecord | None  # its verified record, if any
    verifying: bool  # its verification is still running


log = logging.getLogger("citelens")

#: Claim checks running at once for diagnostics (hovers are not limited by this).
MAX_CONCURRENT = 2
#: Seconds between a result arriving and the republish (results close together are batched).
REPUBLISH_DELAY_S = 0.2
#: Time one publish may spend extracting new claims (about 4 ms each); the rest are
#: extracted by the next publishes, which follow at once, so typing never waits long.
EXTRACT_BUDGET_S = 0.015
_PHASES = {"abstract": "abstract", "full_text": "full text"}


@dataclass(slots=True)
class _Job:
    key: str
    claim: str
    view: EntryView
    record: PaperRecord | None


@dataclass(slots=True)
class ClaimQueue:
    """The claim diagnostics' state: the queue, the workers and the results. Its owner (the
    editor's engine) builds a new one with each new checker (a settings change), so it
    starts afresh."""

    queue: deque[_Job] = field(default_factory=deque)
    queued: set[str] = field(default_factory=set)  # keys in the queue or running
    wanted: set[str] = field(default_factory=set)  # keys of the claims open documents have now
    attempted: dict[str, ClaimResult] = field(default_factory=dict)  # finished, not cached
    results: dict[str, ClaimResult] = field(default_factory=dict)  # finished and cached
    workers: set[asyncio.Task[None]] = field(default_factory=set)
    checks: int = 0  # checks started by diagnostics (for tests and benchmarks)


def claim_findings(
    sites: Iterable[ClaimSite],
    checker: ClaimChecker,
    state: ClaimQueue,
    settings: Settings,
    republish: Republish,
) -> list[Finding]:
    """CLAIM_* findings for the claims whose check has finished; queues the others.

    Claims not extracted yet are extracted within :data:`EXTRACT_BUDGET_S` (at least one
    per call); the rest are extracted by the next publish, asked for at once.
    """
    out: list[Finding] = []
    wanted: set[str] = set()
    deadline: float | None = None
    incomplete = False
    for site in sites:
        claim = claim_at(site.text, site.citation, site.language, memo=checker.claim_memo, compute=False)
        if claim is None:  # not extracted yet: within this publish's budget, or next time
            if deadline is None:
                deadline = time.monotonic() + EXTRACT_BUDGET_S  # at least one per publish
            elif time.monotonic() >= deadline:
                incomplete = True
                continue
            claim = claim_at(site.text, site.citation, site.language, memo=checker.claim_memo)
        if not claim:
            continue
        if no_claim_at(site.text, site.citation, site.language, claim, memo=checker.no_claim_memo):
            continue  # ".", a table cell, a list of names: nothing to judge
        key = checker.key(claim, site.view, site.record)
        wanted.add(key)
        finding = _finding_for(site, claim, key, checker, state, settings)
        if finding is not None:
            out.append(finding)
    state.wanted = wanted | state.wanted if incomplete else wanted
    _pump(checker, state, republish)
    if incomplete:
        republish(0.0)
    return out


def _finding_for(
    site: ClaimSite, claim: str, key: str, checker: ClaimChecker, state: ClaimQueue, settings: Settings
) -> Finding | None:
    """The finding of a finished check, else queue the check (unless it is running or the
    entry is still being verified: its record often carries the abstract)."""
    if key in state.queued:
        return None  # being checked: its result arrives with a republish
    result = state.results.get(key)
    if result is None:
        result = known_result(checker, claim, site.view, site.record)
        if result is not None and not result.transient:
            state.results[key] = result
    if result is None:
        result = state.attempted.get(key)  # failed: only a hover retries it
    if result is not None:
        return _finding(settings, site.path, site.citation.key, site.citation.span, claim, result)
    if not site.verifying:
        state.queue.append(_Job(key, claim, site.view, site.record))
        state.queued.add(key)
    return None


def _finding(
    settings: Any, path: str, key: str, span: Any, claim: str, result: ClaimResult
) -> Finding | None:
    if result.status is not Status.VERDICT or result.verdict is None or result.transient:
        return None  # no verdict, or one reached while retrieval was failing (an outage)
    if result.verdict is Verdict.SUPPORTS:
        return None
    where = _PHASES.get(result.phase, "")
    why = " ".join(result.rationale.split())
    if result.verdict is Verdict.CONTRADICTS:
        code = Code.CLAIM_CONTRADICTED
        message = f"The cited paper ({key}) appears to contradict this sentence"
    else:
        code = Code.CLAIM_UNSUPPORTED
        message = f"Neither the abstract nor the retrieved passages of {key} support this sentence"
    if where:
        message += f" ({where}" + (f", model {result.model}" if result.model else "") + ")"
    if why:
        message += f": {why}"
    if result.evidence:
        evidence = " ".join(result.evidence.split())
        message += f" Evidence: “{evidence[:300]}”"
    data: dict[str, object] = {
        "claim": claim,
        "verdict": result.verdict.value,
        "phase": result.phase,
        "model": result.model,
        "evidenceUrl": result.evidence_url,
        "paper": result.paper,
    }
    return make_finding(settings, path, code, message, span, key=key, data=data)


# ---------------------------------------------------------------------------- the workers


def _pump(checker: ClaimChecker, state: ClaimQueue, republish: Republish) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not serving (tests of the engine): nothing runs
        return
    while state.queue and len(state.workers) < MAX_CONCURRENT:
        task = loop.create_task(_worker(checker, state, republish))
        state.workers.add(task)
        task.add_done_callback(state.workers.discard)


async def _worker(checker: ClaimChecker, state: ClaimQueue, republish: Republish) -> None:
    while state.queue:
        job = state.queue.popleft()
        try:
            if job.key not in state.wanted:  # the sentence was edited or the document closed
                continue
            task = start(checker, job.claim, job.view, job.record)
            if task is None:  # the same claim is being checked under its other key
                continue
            state.checks += 1
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("claim check for diagnostics failed")
            continue
        finally:
            state.queued.discard(job.key)
        if result.transient:
            state.attempted[job.key] = result
        else:
            state.results[job.key] = result
        if len(state.results) > 20_000:
            state.results.clear()
        if result.verdict in (Verdict.CONTRADICTS, Verdict.NOT_ENOUGH_INFO):
            republish(REPUBLISH_DELAY_S)


async def wait_idle(state: ClaimQueue | None, timeout: float = 30.0) -> None:
    """For tests and benchmarks: until the diagnostics queue is empty and nothing runs."""
    if state is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while state.queue or state.workers:
        if loop.time() > deadline:
            raise TimeoutError("claim diagnostics still running")
        await asyncio.sleep(0.01)
