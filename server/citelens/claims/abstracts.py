"""The abstract cascade: the first abstract that passes the gate, from the cheapest signal.

Order (each stage runs only when its signal exists): the abstract the verification
engine already has; arXiv id -> arXiv API, S2 ``ARXIV:``; DOI -> S2, OpenAlex;
PMID -> PubMed; title -> S2 match, Crossref, OpenAlex, PubMed; finally the entry's
URL (meta description or an element of class "abstract"). Gate: non-empty and
title overlap σ >= 0.30 with the cited title (see :mod:`citelens.claims.words`).

Scholarly lookups use the source modules of :mod:`citelens.sources`; a function
that is missing there is logged as a failed stage, never raised.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from citelens.claims.context import Context
from citelens.claims.extract import decode, html_abstract, html_title
from citelens.claims.paper import same_paper
from citelens.claims.result import StageOutcome, Step
from citelens.claims.signals import Signals
from citelens.claims.words import TITLE_OVERLAP_MIN, title_overlap
from citelens.core.settings import Settings
from citelens.core.source_names import Source
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.transport import base_url


@dataclass(frozen=True, slots=True)
class Abstract:
    text: str
    source: str  # "arxiv", "s2", "openalex", "crossref", "pubmed", "entry_url", "record:s2"...
    url: str  # a page a reader can open
    title: str


def gate(text: str | None, found_title: str, cited_title: str) -> str | None:
    """Why an abstract is rejected, or ``None`` when it is accepted."""
    if not text or not text.strip():
        return "no abstract"
    if cited_title and found_title:
        sigma = title_overlap(found_title, cited_title)
        if sigma < TITLE_OVERLAP_MIN:
            return f"title overlap {sigma:.2f} < {TITLE_OVERLAP_MIN:.2f} ({found_title[:80]!r})"
    return None


def reader_url(record: PaperRecord, s: Settings) -> str:
    """A page of ``record`` a reader can open (abstract page, DOI, arXiv, URL, S2)."""
    if record.source == Source.ARXIV and record.arxiv_id:
        return f"{base_url(s, Source.ARXIV_SITE)}/abs/{record.arxiv_id}"
    if record.source == Source.PUBMED and record.pmid:
        return f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/"
    if record.doi:
        return f"{base_url(s, Source.DOI)}/{record.doi}"
    if record.arxiv_id:
        return f"{base_url(s, Source.ARXIV_SITE)}/abs/{record.arxiv_id}"
    if record.url:
        return record.url
    if record.s2_paper_id:
        return f"https://www.semanticscholar.org/paper/{record.s2_paper_id}"
    return ""


async def _source_call(
    module: str, function: str, host_name: str, ctx: Context, *args: Any, **kwargs: Any
) -> Lookup:
    """Call ``citelens.sources.<module>.<function>(host, *args)``; problems become FAILED."""
    if ctx.sources is None:
        return Lookup(host_name, function, Outcome.UNAVAILABLE, detail="no scholarly clients")
    try:
        mod = importlib.import_module(f"citelens.sources.{module}")
        fn: Callable[..., Awaitable[Lookup]] = getattr(mod, function)
    except (ImportError, AttributeError):
        return Lookup(
            host_name,
            function,
            Outcome.FAILED,
            detail=f"citelens.sources.{module}.{function} is not available",
        )
    host = getattr(ctx.sources, host_name)
    try:
        result = await fn(host, *args, **kwargs)
    except Exception as e:  # the source contract says never raise; be safe anyway
        return Lookup(host_name, function, Outcome.FAILED, detail=f"error: {type(e).__name__}")
    if isinstance(result, dict):  # batch functions: one Lookup per id as given
        lookups = [v for v in result.values() if isinstance(v, Lookup)]
        found = [v for v in lookups if v.outcome is Outcome.FOUND]
        if found:
            return Lookup(
                found[0].source,
                found[0].method,
                Outcome.FOUND,
                [r for v in found for r in v.records],
                "",
                found[0].elapsed_ms,
            )
        if lookups:
            return lookups[0]
    if not isinstance(result, Lookup):
        return Lookup(host_name, function, Outcome.FAILED, detail="unexpected return value")
    return result


Stage = tuple[str, Callable[[], Awaitable[Lookup]]]


def _stages(sig: Signals, ctx: Context) -> list[Stage]:
    out: list[Stage] = []
    if sig.arxiv_id:
        aid = sig.arxiv_id
        out.append((Source.ARXIV, lambda: _source_call(Source.ARXIV, "get_by_ids", Source.ARXIV, ctx, [aid])))
        out.append(
            (
                Source.S2,
                lambda: _source_call(Source.S2, "get_paper", Source.S2, ctx, f"ARXIV:{aid}", abstract=True),
            )
        )
    if sig.doi:
        doi = sig.doi
        out.append(
            (
                Source.S2,
                lambda: _source_call(Source.S2, "get_paper", Source.S2, ctx, f"DOI:{doi}", abstract=True),
            )
        )
        out.append(
            (Source.OPENALEX, lambda: _source_call(Source.OPENALEX, "get_by_doi", Source.OPENALEX, ctx, doi))
        )
    if sig.pmid:
        pmid = sig.pmid
        out.append((Source.PUBMED, lambda: _source_call(Source.NCBI, "get_pubmed", Source.NCBI, ctx, [pmid])))
    if sig.title:
        t = sig.title
        out.append(
            (Source.S2, lambda: _source_call(Source.S2, "search_match", Source.S2, ctx, t, abstract=True))
        )
        out.append(
            (Source.CROSSREF, lambda: _source_call(Source.CROSSREF, "search", Source.CROSSREF, ctx, t))
        )
        out.append(
            (Source.OPENALEX, lambda: _source_call(Source.OPENALEX, "search_title", Source.OPENALEX, ctx, t))
        )
        out.append((Source.PUBMED, lambda: _pubmed_by_title(ctx, t)))
    return out


async def _pubmed_by_title(ctx: Context, title: str) -> Lookup:
    found = await _source_call(Source.NCBI, "search_title", Source.NCBI, ctx, title)
    if found.outcome is not Outcome.FOUND or any(r.abstract for r in found.records):
        return found
    pmids = [r.pmid for r in found.records if r.pmid][:3]
    if not pmids:
        return found
    return await _source_call(Source.NCBI, "get_pubmed", Source.NCBI, ctx, pmids)


def _why_not(record: PaperRecord, sig: Signals) -> str | None:
    """Why a found record's abstract is not the cited paper's (``None``: it is).

    With the paper verification accepted (``sig.record``) a found record must be that
    paper (a shared identifier): one decision, verification's, and no second matcher.
    Without one (evaluation data naming a paper) the title-overlap gate decides.
    """
    if sig.record is not None:
        if not record.abstract or not record.abstract.strip():
            return "no abstract"
        return None if same_paper(record, sig.record) else f"not the verified paper ({record.title[:80]!r})"
    return gate(record.abstract, record.title, sig.title)


async def find_abstract(sig: Signals, ctx: Context) -> Abstract | None:
    """The first accepted abstract, logging every attempted stage; ``None`` if none passes."""
    rec = sig.record
    if rec is not None and rec.abstract and rec.abstract.strip():
        # the paper verification accepted as the cited one: its abstract needs no gate
        url = reader_url(rec, ctx.settings)
        ctx.stage(Step.ABSTRACT, f"record:{rec.source}", StageOutcome.ACCEPTED, url)
        return Abstract(rec.abstract.strip(), rec.source, url, rec.title)
    for source, call in _stages(sig, ctx):
        started = time.monotonic()
        lookup = await call()
        elapsed = lookup.elapsed_ms or (time.monotonic() - started) * 1000
        if lookup.outcome is not Outcome.FOUND:
            ctx.stage(
                Step.ABSTRACT,
                source,
                StageOutcome(lookup.outcome.value),
                detail=f"{lookup.method}: {lookup.detail}".strip(": "),
                elapsed_ms=elapsed,
            )
            continue
        reasons = []
        for record in lookup.records[:5]:
            why = _why_not(record, sig)
            if why is None and record.abstract:
                sig.learn(record)  # only the cited paper's identifiers lead to its full text
                url = reader_url(record, ctx.settings)
                ctx.stage(Step.ABSTRACT, source, StageOutcome.ACCEPTED, url, elapsed, lookup.method)
                return Abstract(record.abstract.strip(), source, url, record.title)
            reasons.append(why or "")
        ctx.stage(
            Step.ABSTRACT,
            source,
            StageOutcome.REJECTED,
            elapsed_ms=elapsed,
            detail=f"{lookup.method}: {'; '.join(dict.fromkeys(reasons))}",
        )
    if sig.url:
        return await _from_landing_page(sig, ctx)
    return None


async def _from_landing_page(sig: Signals, ctx: Context) -> Abstract | None:
    assert sig.url is not None
    got = await ctx.fetch(sig.url)
    if not got.ok:
        ctx.stage(Step.ABSTRACT, "entry_url", StageOutcome.FAILED, got.url, got.elapsed_ms, got.error)
        return None
    if "html" not in got.content_type.lower():
        ctx.stage(
            Step.ABSTRACT,
            "entry_url",
            StageOutcome.REJECTED,
            got.url,
            got.elapsed_ms,
            f"not an HTML page ({got.content_type or 'no content type'})",
        )
        return None
    page = decode(got.body, got.content_type)
    text, title = html_abstract(page), html_title(page)
    why = gate(text, title, sig.title)
    if why is not None:
        ctx.stage(Step.ABSTRACT, "entry_url", StageOutcome.REJECTED, got.url, got.elapsed_ms, why)
        return None
    ctx.stage(Step.ABSTRACT, "entry_url", StageOutcome.ACCEPTED, got.url, got.elapsed_ms)
    return Abstract(text, "entry_url", got.url, title)
