"""The full-text cascade: the first text of the cited paper that passes the gate.

Order (each stage only when its signal exists): the entry's URL (HTML or PDF);
arXiv HTML, then arXiv PDF; the Semantic Scholar open-access PDF; PubMed Central
JATS XML (``efetch db=pmc``). Gate: at least 1,500 characters and not a
correction/erratum/retraction notice (:func:`citelens.claims.extract.fulltext_problem`).
Every fetch goes through :mod:`citelens.claims.urlsafety`; the arXiv and PMC URLs are
built from base URLs the user configured (``arxivUrl``, ``ncbiEutilsUrl``) and are
trusted on those origins, so a mirror on a private address works; the entry's URL
and the open-access link come from data and are checked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import quote

from citelens.claims.context import Context
from citelens.claims.extract import (
    decode,
    fulltext_problem,
    html_to_text,
    jats_to_text,
    pdf_to_text,
)
from citelens.claims.result import StageOutcome, Step
from citelens.claims.signals import Signals
from citelens.claims.urlsafety import Fetched
from citelens.core.source_names import Source
from citelens.sources.transport import base_url


@dataclass(frozen=True, slots=True)
class FullText:
    text: str
    source: str  # "entry_url" | "arxiv_html" | "arxiv_pdf" | "s2_open_access" | "pmc"
    url: str


async def _to_text(got: Fetched, kind: str) -> str:
    ctype = got.content_type.lower()
    if kind == "pmc" or ("xml" in ctype and "html" not in ctype):
        return jats_to_text(decode(got.body, got.content_type))
    if got.body[:5] == b"%PDF-" or "pdf" in ctype:
        return await asyncio.to_thread(pdf_to_text, got.body)
    return html_to_text(decode(got.body, got.content_type))


def _candidates(sig: Signals, ctx: Context) -> list[tuple[str, str, str | None]]:
    """(source, URL, the configured base URL it was built from, or None for data)."""
    s = ctx.settings
    out: list[tuple[str, str, str | None]] = []
    if sig.url:
        out.append(("entry_url", sig.url, None))
    if sig.arxiv_id:
        arxiv = base_url(s, Source.ARXIV_SITE).rstrip("/")
        out.append(("arxiv_html", f"{arxiv}/html/{quote(sig.arxiv_id, safe='/.')}", arxiv))
        out.append(("arxiv_pdf", f"{arxiv}/pdf/{quote(sig.arxiv_id, safe='/.')}", arxiv))
    if sig.open_access_pdf:
        out.append(("s2_open_access", sig.open_access_pdf, None))
    if sig.pmcid:
        number = quote(sig.pmcid.upper().removeprefix("PMC"), safe="")
        eutils = base_url(s, Source.NCBI).rstrip("/")
        out.append(("pmc", f"{eutils}/efetch.fcgi?db=pmc&id={number}", eutils))
    return out


async def find_fulltext(sig: Signals, ctx: Context) -> FullText | None:
    """The first full text that passes the gate, logging every attempt; ``None`` if none."""
    seen: set[str] = set()
    for source, url, base in _candidates(sig, ctx):
        if url in seen:
            continue
        seen.add(url)
        got = await ctx.fetch(url, trusted_base=base)
        if not got.ok:
            outcome = StageOutcome.NOT_FOUND if got.status == 404 else StageOutcome.FAILED
            ctx.stage(Step.FULLTEXT, source, outcome, got.url, got.elapsed_ms, got.error)
            continue
        text = await _to_text(got, source)
        problem = fulltext_problem(text)
        if problem:
            ctx.stage(Step.FULLTEXT, source, StageOutcome.REJECTED, got.url, got.elapsed_ms, problem)
            continue
        ctx.stage(
            Step.FULLTEXT, source, StageOutcome.ACCEPTED, got.url, got.elapsed_ms, f"{len(text)} characters"
        )
        return FullText(text, source, got.url)
    if not seen:
        ctx.stage(
            Step.FULLTEXT,
            "none",
            StageOutcome.SKIPPED,
            detail="no URL, arXiv id, open-access PDF or PMC id to fetch a full text from",
        )
    return None
