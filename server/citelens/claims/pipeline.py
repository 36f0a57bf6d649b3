"""The two-stage claim check: abstract first, full-text passages only when undecided.

    verdict = phase1(claim, abstract)        if it is SUPPORTS or CONTRADICTS
            = phase2(claim, passages, abstract as secondary context)   otherwise

:func:`check_claim` never raises; every step is in ``result.log``. Without a
configured model no verdict is invented: the result carries the abstract and the
sentences of it closest to the claim (BM25), and a note on how to turn checks on.
"""

from __future__ import annotations

import time

import httpx

from citelens.claims import llm, prompts
from citelens.claims.abstracts import Abstract, find_abstract
from citelens.claims.chunking import chunk_text
from citelens.claims.context import Context
from citelens.claims.fulltext import FullText, find_fulltext
from citelens.claims.ranking import COSINE_MIN, TOP_K, best_sentences, top_bm25, top_cosine
from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.claims.signals import paper_identity, signals_from
from citelens.claims.verdicts import Judgement
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.sources.records import PaperRecord

SETUP_HINT = (
    "Claim checks need an OpenAI-compatible model: set citelens.llmBaseUrl "
    "(e.g. http://localhost:11434/v1 for Ollama) and citelens.llmModel, "
    "or CITELENS_LLM_BASE_URL / CITELENS_LLM_MODEL. See docs/claims.md."
)


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
) -> ClaimResult:
    """Check ``claim`` against the paper of ``view``/``record``; see the module docstring.

    ``sources`` is a :class:`citelens.sources.transport.Sources` (``None``: no scholarly
    lookups). ``abstract``/``full_text`` bypass retrieval (evaluation datasets).
    """
    own = client is None
    http = client or httpx.AsyncClient(timeout=settings.request_timeout_s)
    ctx = Context(settings, http, sources)  # type: ignore[arg-type]
    result = ClaimResult(claim=claim, paper=paper_identity(view, record),
                         prompt_version=prompts.PROMPT_VERSION)
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


async def _run(
    result: ClaimResult, ctx: Context, view: EntryView | None, record: PaperRecord | None,
    abstract_text: str | None, full_text: str | None, abstract_only: bool,
) -> None:
    sig = signals_from(view, record)
    config = llm.LLMConfig.from_settings(ctx.settings)
    if not result.claim.strip():
        result.status, result.error = Status.ERROR, "no claim text around the citation"
        return

    found: Abstract | None
    if abstract_text is not None:
        found = Abstract(abstract_text, "given", "", sig.title) if abstract_text.strip() else None
        ctx.stage("abstract", "given", "accepted" if found else "not_found")
    else:
        found = await find_abstract(sig, ctx)
    if found is not None:
        result.abstract, result.abstract_source, result.abstract_url = (
            found.text, found.source, found.url)

    if config is None:
        result.status = Status.NO_LLM
        result.note = SETUP_HINT
        if found is not None:
            result.best_sentences = best_sentences(result.claim, found.text)
        else:
            result.note = "No abstract found for this paper. " + SETUP_HINT
        return

    # ---- phase 1: the abstract
    if found is not None:
        outcome = await _judge(result, ctx, config, config.model, "phase1",
                               prompts.phase1_messages(result.claim, found.text))
        if outcome is None:
            return
        result.phase1_verdict = outcome.verdict
        _apply(result, outcome, "abstract", config.model, found.url)
        if outcome.verdict is not Verdict.NOT_ENOUGH_INFO:
            return
    else:
        ctx.stage("phase1", "llm", "skipped", detail="no abstract: going to the full text")
        result.verdict, result.status = Verdict.NOT_ENOUGH_INFO, Status.VERDICT
        result.model = config.model
    if abstract_only:
        result.note = "Abstract only: phase 2 (full text) not run."
        return

    # ---- phase 2: passages from the full text
    text: FullText | None
    if full_text is not None:
        text = FullText(full_text, "given", "") if full_text.strip() else None
        ctx.stage("fulltext", "given", "accepted" if text else "not_found")
    else:
        text = await find_fulltext(sig, ctx)
    if text is None:
        result.note = "No usable full text was found; the abstract alone does not decide it."
        return
    result.fulltext_source, result.fulltext_url = text.source, text.url
    passages = await _passages(result, ctx, config, text.text)
    if not passages:
        result.note = "No passage of the full text is close enough to the claim."
        return
    result.passages = passages
    outcome = await _judge(result, ctx, config, config.model_phase2, "phase2",
                           prompts.phase2_messages(result.claim, passages,
                                                   found.text if found else None))
    if outcome is None:
        return
    _apply(result, outcome, "full_text", config.model_phase2, text.url)


def _apply(result: ClaimResult, j: Judgement, phase: str, model: str, url: str) -> None:
    result.status, result.verdict = Status.VERDICT, j.verdict
    result.rationale, result.evidence, result.evidence_url = j.rationale, j.evidence, url
    result.phase, result.model = phase, model


async def _judge(
    result: ClaimResult, ctx: Context, config: llm.LLMConfig, model: str, step: str,
    messages: list[dict[str, str]],
) -> Judgement | None:
    outcome = await llm.judge(ctx.client, config, model, messages)
    result.llm_calls += len(outcome.calls)
    for call in outcome.calls:
        ctx.stage(step, f"llm:{model}", "ok" if call.ok else "error", call.url,
                  call.elapsed_ms, call.detail)
    if outcome.judgement is None:
        result.status, result.verdict = Status.ERROR, None
        result.error = outcome.error
        result.model = model
        result.phase = "abstract" if step == "phase1" else "full_text"
        return None
    return outcome.judgement


async def _passages(
    result: ClaimResult, ctx: Context, config: llm.LLMConfig, text: str
) -> list[str]:
    started = time.monotonic()
    chunks = chunk_text(text)
    docs = [(f"[{c.section}]\n" if c.section else "") + c.text for c in chunks]
    if not docs:
        return []
    if config.embedding_model:
        vectors, call = await llm.embed(ctx.client, config, [result.claim, *docs])
        result.llm_calls += 1
        if vectors is not None:
            ranked = top_cosine(vectors[0], vectors[1:], TOP_K, COSINE_MIN)
            result.retrieval = "embeddings"
            ctx.stage("passages", f"embeddings:{config.embedding_model}",
                      "ok" if ranked else "not_found", call.url, call.elapsed_ms,
                      f"{len(docs)} chunks, kept {len(ranked)} with cosine >= {COSINE_MIN}: "
                      + ", ".join(f"{s:.2f}" for _, s in ranked))
            return [docs[i] for i, _ in ranked]
        ctx.stage("passages", f"embeddings:{config.embedding_model}", "error", call.url,
                  call.elapsed_ms, f"{call.detail}; falling back to BM25")
    picked = top_bm25(result.claim, docs, TOP_K)
    result.retrieval = "bm25"
    ctx.stage("passages", "bm25", "ok" if picked else "not_found",
              elapsed_ms=(time.monotonic() - started) * 1000,
              detail=f"{len(docs)} chunks ranked with BM25 (no embedding endpoint), kept "
              f"{len(picked)}")
    return [docs[i] for i in picked]
