"""The two-stage claim check: abstract first, full-text passages only when undecided.

    verdict = phase1(claim, abstract)        if it is SUPPORTS or CONTRADICTS
            = phase2(claim, passages, abstract as secondary context)   otherwise

:func:`check_claim` never raises; every step is in ``result.log``. Without a
configured model no verdict is invented: the result carries the abstract and the
sentences of it closest to the claim (BM25), and a note on how to turn checks on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

import httpx

from citelens.claims import llm, prompts
from citelens.claims.abstracts import Abstract, find_abstract, reader_url
from citelens.claims.chunking import chunk_text
from citelens.claims.context import Context
from citelens.claims.fulltext import FullText, find_fulltext
from citelens.claims.quotes import verified_quote
from citelens.claims.ranking import TOP_K, best_sentences, cosine, top_bm25, top_cosine
from citelens.claims.result import ClaimResult, Stage, StageOutcome, Status, Step, Verdict
from citelens.claims.signals import Signals, paper_identity, signals_from
from citelens.claims.verdicts import Judgement
from citelens.core.model import EntryView
from citelens.core.secrets import redact_url
from citelens.core.settings import Settings
from citelens.sources.records import PaperRecord

T = TypeVar("T")

SETUP_HINT = (
    "Claim checks need an OpenAI-compatible model: set citelens.llmBaseUrl "
    "(e.g. http://localhost:11434/v1 for Ollama) and citelens.llmModel, "
    "or CITELENS_LLM_BASE_URL / CITELENS_LLM_MODEL. See docs/claims.md."
)


def evidence_at_once(
    claim: str, view: EntryView | None, record: PaperRecord | None, settings: Settings
) -> ClaimResult | None:
    """Without a model: the no-verdict result from the abstract the accepted record
    (:mod:`citelens.claims.paper`) already holds (no network, instant), or ``None``."""
    if record is None or not record.abstract or not record.abstract.strip() or not claim.strip():
        return None
    result = ClaimResult(
        claim=claim,
        paper=paper_identity(view, record),
        prompt_version=prompts.PROMPT_VERSION,
        note=SETUP_HINT,
    )
    result.abstract, result.abstract_source = record.abstract.strip(), record.source
    result.abstract_url = reader_url(record, settings)
    result.best_sentences = best_sentences(claim, result.abstract)
    result.log.append(
        Stage(
            Step.ABSTRACT, f"record:{record.source}", StageOutcome.ACCEPTED, redact_url(result.abstract_url)
        )
    )
    return result


async def check_claim(
    claim: str,
    view: EntryView | None,
    record: PaperRecord | None = None,
    *,
    settings: Settings,
    client: httpx.AsyncClient | None = None,
    sources: object | None = None,
    abstract: str | None = None,
    full_text: str | None = None,
    abstract_only: bool = False,
    live: Callable[[ClaimResult], None] | None = None,
) -> ClaimResult:
    """Check ``claim`` against the paper of ``view``/``record``; see the module docstring.

    ``sources`` is a :class:`citelens.sources.transport.Sources` (``None``: no scholarly
    lookups). ``abstract``/``full_text`` bypass retrieval (evaluation datasets).
    ``live`` is called once with the result being filled in, so that a hover can show
    the evidence found so far while the model is still judging.
    """
    own = client is None
    http = client or httpx.AsyncClient(timeout=settings.request_timeout_s)
    ctx = Context(settings, http, sources)  # type: ignore[arg-type]
    result = ClaimResult(
        claim=claim, paper=paper_identity(view, record), prompt_version=prompts.PROMPT_VERSION
    )
    result.log = ctx.log  # one list: a hover on the running check sees the stages so far
    if live is not None:
        live(result)
    before = ctx.source_requests()
    try:
        await _run(result, ctx, view, record, abstract, full_text, abstract_only)
    except Exception as e:  # never raise to the hover: report it
        result.status, result.verdict = Status.ERROR, None
        result.error = f"internal error: {type(e).__name__}: {ctx.scrub(str(e))[:200]}"
    finally:
        if own:
            await http.aclose()
    result.log = ctx.log
    result.http_calls = ctx.fetches + ctx.source_requests() - before  # model calls not included
    return result


class Budget:
    """The model time one check may still spend (``claimTimeoutS``, all model calls together).

    The verdict is optional, the evidence is not: when the budget runs out the check ends
    with an error and the evidence already found, instead of waiting for a hung endpoint.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = max(0.0, seconds)
        self.left = self.seconds

    def message(self) -> str:
        return f"the model did not answer within {self.seconds:g} s (claimTimeoutS)"


def _ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


async def _run(
    result: ClaimResult,
    ctx: Context,
    view: EntryView | None,
    record: PaperRecord | None,
    abstract_text: str | None,
    full_text: str | None,
    abstract_only: bool,
) -> None:
    sig = signals_from(view, record)
    config = llm.LLMConfig.from_settings(ctx.settings)
    if not result.claim.strip():
        result.status, result.error = Status.ERROR, "no claim text around the citation"
        return

    found: Abstract | None
    started = time.monotonic()
    if abstract_text is not None:
        found = Abstract(abstract_text, "given", "", sig.title) if abstract_text.strip() else None
        ctx.stage(Step.ABSTRACT, "given", StageOutcome.ACCEPTED if found else StageOutcome.NOT_FOUND)
    else:
        found = await find_abstract(sig, ctx)
    result.timings_ms["abstract"] = _ms_since(started)
    if found is not None:
        result.abstract, result.abstract_source, result.abstract_url = (found.text, found.source, found.url)
        # the evidence every outcome shows, verdict or not (no model, model failed)
        result.best_sentences = best_sentences(result.claim, found.text)

    if config is None:
        result.status = Status.NO_LLM
        result.note = SETUP_HINT if found is not None else ("No abstract found for this paper. " + SETUP_HINT)
        return
    budget = Budget(ctx.settings.claim_timeout_s)
    if not await _phase1(result, ctx, config, budget, found) or abstract_only:
        if abstract_only and result.status is Status.VERDICT and (result.verdict is Verdict.NOT_ENOUGH_INFO):
            result.note = "Abstract only: phase 2 (full text) not run."
        return
    await _phase2(result, ctx, config, budget, sig, found, full_text)


async def _phase1(
    result: ClaimResult, ctx: Context, config: llm.LLMConfig, budget: Budget, found: Abstract | None
) -> bool:
    """Phase 1 on the abstract; ``True`` when phase 2 should run (undecided, no error)."""
    if found is None:
        ctx.stage(Step.PHASE1, "llm", StageOutcome.SKIPPED, detail="no abstract: going to the full text")
        result.verdict, result.status = Verdict.NOT_ENOUGH_INFO, Status.VERDICT
        result.model = config.model
        return True
    started = time.monotonic()
    outcome = await _judge(
        result,
        ctx,
        config,
        config.model,
        Step.PHASE1,
        prompts.phase1_messages(result.claim, found.text),
        budget,
    )
    result.timings_ms["phase1"] = _ms_since(started)
    if outcome is None:
        return False
    result.phase1_verdict = outcome.verdict
    _apply(result, outcome, "abstract", config.model, found.url, [found.text])
    return outcome.verdict is Verdict.NOT_ENOUGH_INFO


async def _phase2(
    result: ClaimResult,
    ctx: Context,
    config: llm.LLMConfig,
    budget: Budget,
    sig: Signals,
    found: Abstract | None,
    full_text: str | None,
) -> None:
    """Phase 2: passages of the full text, judged with the abstract as secondary context."""
    text: FullText | None
    started = time.monotonic()
    if full_text is not None:
        text = FullText(full_text, "given", "") if full_text.strip() else None
        ctx.stage(Step.FULLTEXT, "given", StageOutcome.ACCEPTED if text else StageOutcome.NOT_FOUND)
    else:
        text = await find_fulltext(sig, ctx)
    result.timings_ms["fulltext"] = _ms_since(started)
    if text is None:
        result.note = "No usable full text was found; the abstract alone does not decide it."
        return
    result.fulltext_source, result.fulltext_url = text.source, text.url
    started = time.monotonic()
    passages = await _passages(result, ctx, config, text.text, budget)
    result.timings_ms["passages"] = _ms_since(started)
    if not passages:
        result.note = "No passage of the full text is close enough to the claim."
        return
    result.passages = passages
    started = time.monotonic()
    outcome = await _judge(
        result,
        ctx,
        config,
        config.model_phase2,
        Step.PHASE2,
        prompts.phase2_messages(result.claim, passages, found.text if found else None),
        budget,
    )
    result.timings_ms["phase2"] = _ms_since(started)
    if outcome is None:
        return
    given = [*passages, found.text if found else ""]
    _apply(result, outcome, "full_text", config.model_phase2, text.url, given)


def _apply(result: ClaimResult, j: Judgement, phase: str, model: str, url: str, given: list[str]) -> None:
    """The judgement into ``result``; the model's quote is kept as evidence only when it is
    in the texts the model was ``given`` (:mod:`citelens.claims.quotes`)."""
    result.status, result.verdict = Status.VERDICT, j.verdict
    quote = verified_quote(j.evidence, given) if j.evidence else None
    result.rationale, result.evidence, result.evidence_url = j.rationale, quote or "", url
    result.model_quote = j.evidence
    result.phase, result.model = phase, model


async def _judge(
    result: ClaimResult,
    ctx: Context,
    config: llm.LLMConfig,
    model: str,
    step: Step,
    messages: list[dict[str, str]],
    budget: Budget,
) -> Judgement | None:
    outcome = await _bounded(llm.judge(ctx.client, _within(config, budget), model, messages), budget)
    if outcome is None:
        ctx.stage(
            step,
            f"llm:{model}",
            StageOutcome.FAILED,
            config.base_url + "/chat/completions",
            budget.seconds * 1000,
            budget.message(),
        )
        outcome = llm.JudgeOutcome(None, budget.message(), [])
    result.llm_calls += len(outcome.calls)
    for call in outcome.calls:
        ctx.stage(
            step,
            f"llm:{model}",
            StageOutcome.OK if call.ok else StageOutcome.ERROR,
            call.url,
            call.elapsed_ms,
            call.detail,
        )
    if outcome.judgement is None:
        result.status, result.verdict = Status.ERROR, None
        result.error = outcome.error
        result.model = model
        result.phase = "abstract" if step is Step.PHASE1 else "full_text"
        return None
    return outcome.judgement


def _within(config: llm.LLMConfig, budget: Budget) -> llm.LLMConfig:
    """``config`` with a per-request timeout no longer than what is left of the budget."""
    return replace(config, timeout_s=max(0.001, min(config.timeout_s, budget.left)))


async def _bounded(call: Coroutine[Any, Any, T], budget: Budget) -> T | None:
    """``await call`` within what is left of the budget; ``None`` when it runs out."""
    started = time.monotonic()
    try:
        if budget.left <= 0:
            call.close()
            return None
        return await asyncio.wait_for(call, budget.left)
    except TimeoutError:
        return None
    finally:
        budget.left -= time.monotonic() - started


async def _passages(
    result: ClaimResult, ctx: Context, config: llm.LLMConfig, text: str, budget: Budget
) -> list[str]:
    started = time.monotonic()
    chunks = chunk_text(text)
    docs = [(f"[{c.section}]\n" if c.section else "") + c.text for c in chunks]
    if not docs:
        return []
    if config.embedding_model:
        answer = await _bounded(llm.embed(ctx.client, _within(config, budget), [result.claim, *docs]), budget)
        vectors, call = answer or (None, llm.Call(False, budget.message(), 0.0, ""))
        result.llm_calls += 1
        if vectors is not None:
            cutoff = ctx.settings.embedding_cosine_min
            scores = [cosine(vectors[0], v) for v in vectors[1:]]
            ranked = top_cosine(vectors[0], vectors[1:], TOP_K, cutoff)
            result.retrieval = "embeddings"
            result.passage_scores = [round(s, 4) for _, s in ranked]
            result.best_chunk_score = round(max(scores), 4) if scores else None
            ctx.stage(
                Step.PASSAGES,
                f"embeddings:{config.embedding_model}",
                StageOutcome.OK if ranked else StageOutcome.NOT_FOUND,
                call.url,
                call.elapsed_ms,
                f"{len(docs)} chunks, kept {len(ranked)} with cosine >= {cutoff:g}: "
                + ", ".join(f"{s:.2f}" for _, s in ranked),
            )
            return [docs[i] for i, _ in ranked]
        ctx.stage(
            Step.PASSAGES,
            f"embeddings:{config.embedding_model}",
            StageOutcome.ERROR,
            call.url,
            call.elapsed_ms,
            f"{call.detail}; falling back to BM25",
        )
    picked = top_bm25(result.claim, docs, TOP_K)
    result.retrieval = "bm25"
    ctx.stage(
        Step.PASSAGES,
        "bm25",
        StageOutcome.OK if picked else StageOutcome.NOT_FOUND,
        elapsed_ms=(time.monotonic() - started) * 1000,
        detail=f"{len(docs)} chunks ranked with BM25 (no embedding endpoint), kept {len(picked)}",
    )
    return [docs[i] for i in picked]
