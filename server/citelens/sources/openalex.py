"""OpenAlex works: by DOI (one or 50 at a time) and by title.

Unknown works are a **404 HTML** page (Flask "404 Not Found"), which is
``NOT_FOUND``; a DOI missing from a ``filter=doi:a|b`` answer is ``NOT_FOUND`` too.
Abstracts come as ``abstract_inverted_index`` and are rebuilt here. ``api_key``
and ``mailto`` parameters are added by the host client from Settings.

OpenAlex meters a daily budget (2026): a work by its id or ``doi:`` is free, a filter
(``filter=doi:a|b``, 50 DOIs) costs $0.0001, a title search $0.001. Once the budget is
spent the host is out for priced calls (``sources/refusal.py``) and :func:`get_by_dois`
asks the same DOIs one by one, for free, so the answers (and the verdicts) are the same.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote

from citelens.core.identifiers import arxiv_of_doi, normalize_arxiv, normalize_doi
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, plain_title
from citelens.sources.transport import (
    HostClient,
    HostResult,
    as_dict,
    as_list,
    decode_json,
    status_of,
    works_by_doi,
)

BATCH_SIZE = 50


def rebuild_abstract(index: Any) -> str | None:
    """Plain text from ``{"word": [positions]}``."""
    if not isinstance(index, dict) or not index:
        return None
    words: dict[int, str] = {}
    for word, positions in index.items():
        for p in positions if isinstance(positions, list) else []:
            if isinstance(p, int):
                words[p] = str(word)
    return " ".join(words[i] for i in sorted(words)) or None


def _tail(url: Any) -> str | None:
    return str(url).rstrip("/").rsplit("/", 1)[-1] if isinstance(url, str) and url else None


def to_record(work: Any) -> PaperRecord | None:
    """A :class:`PaperRecord` from an OpenAlex work object."""
    if not isinstance(work, dict) or not (work.get("title") or work.get("display_name")):
        return None
    ids = as_dict(work.get("ids"))
    primary = as_dict(work.get("primary_location"))
    source = as_dict(primary.get("source"))
    biblio = as_dict(work.get("biblio"))
    doi = normalize_doi(work.get("doi") or ids.get("doi"))
    landing = str(primary.get("landing_page_url") or "")
    arxiv = arxiv_of_doi(doi)
    if arxiv is None and "arxiv.org/abs/" in landing:
        arxiv = normalize_arxiv(landing)
    venue = source.get("display_name")
    # the other locations: a preprint's work may list the journal it appeared in
    published = [
        str(s["display_name"])
        for loc in as_list(work.get("locations"))
        if (s := as_dict(as_dict(loc).get("source"))).get("display_name")
        and s.get("type") not in (None, "repository")
        and s.get("display_name") != venue
    ]
    moved = bool(published) and (not venue or source.get("type") == "repository")
    if moved:  # the record is the paper as published there
        venue, published = published[0], published[1:]
    first, last = biblio.get("first_page"), biblio.get("last_page")
    pages = f"{first}-{last}" if first and last and first != last else (first or None)
    pmcid = _tail(ids.get("pmcid"))
    authors = []
    for a in as_list(work.get("authorships")):
        a = as_dict(a)
        name = as_dict(a.get("author")).get("display_name") or a.get("raw_author_name")
        if name:
            authors.append(str(name))
    types = [str(t) for t in (work.get("type"), work.get("type_crossref")) if t]
    if moved:
        types = [t for t in types if t not in ("preprint", "posted-content")]
    best = as_dict(work.get("best_oa_location"))
    pdf = best.get("pdf_url") or primary.get("pdf_url")
    year = work.get("publication_year")
    count = work.get("cited_by_count")
    authors, authors_cut = author_list(authors)
    title, title_cut = plain_title(str(work.get("title") or work.get("display_name")))
    return PaperRecord(
        source=Source.OPENALEX,
        title=title,
        authors=authors,
        authors_truncated=authors_cut,
        title_truncated=title_cut,
        year=year if isinstance(year, int) else None,
        venue=str(venue) if venue else None,
        venue_alternates=list(dict.fromkeys(published)),
        doi=doi,
        arxiv_id=arxiv,
        pmid=_tail(ids.get("pmid")),
        pmcid=(pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}") if pmcid else None,
        url=str(work.get("id")) if work.get("id") else None,
        abstract=rebuild_abstract(work.get("abstract_inverted_index")),
        publication_types=types,
        volume=str(biblio["volume"]) if biblio.get("volume") else None,
        issue=str(biblio["issue"]) if biblio.get("issue") else None,
        pages=str(pages) if pages else None,
        citation_count=count if isinstance(count, int) else None,
        open_access_pdf=str(pdf) if pdf else None,
        is_preprint="preprint" in types or "posted-content" in types or "arxiv" in str(venue or "").lower(),
        notices=[{"kind": "retraction", "source": Source.OPENALEX}]
        if work.get("is_retracted") is True
        else [],
    )


def _not_found_page(result: HostResult) -> bool:
    r = result.response
    return (
        r is not None
        and r.status_code == 404
        and "html" in r.headers.get("content-type", "")
        and "not found" in r.text.lower()
    )


async def get_by_doi(host: HostClient, doi: str) -> Lookup:
    """The OpenAlex work for ``doi`` (``/works/doi:{doi}``)."""
    method = Method.OPENALEX_DOI
    bare = normalize_doi(doi)
    if bare is None:
        return host.lookup(method, Outcome.NOT_FOUND, [], "not a DOI")
    result = await host.request("GET", "/works/doi:" + quote(bare, safe="/"), free=True)
    if not result.ok:
        return host.failed(method, result)
    if _not_found_page(result):
        return host.lookup(method, Outcome.NOT_FOUND, [], f"{bare} not in OpenAlex", result.elapsed_ms)
    data, why = decode_json(result)
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    record = to_record(data) if status_of(result) == 200 else None
    if record is None:
        return host.lookup(
            method, Outcome.FAILED, [], f"HTTP {status_of(result)}: unexpected answer", result.elapsed_ms
        )
    return host.lookup(method, Outcome.FOUND, [record], "", result.elapsed_ms)


async def get_by_dois(host: HostClient, dois: list[str]) -> dict[str, Lookup]:
    """Many works at once (``filter=doi:a|b``, 50 per request), one Lookup per DOI as given;
    while the daily budget is spent, one free lookup per DOI instead."""
    method = Method.OPENALEX_DOIS
    got = await works_by_doi(
        host,
        method,
        dois,
        batch=BATCH_SIZE,
        missing="not in OpenAlex",
        params=lambda chunk: {"filter": "doi:" + "|".join(chunk), "per-page": BATCH_SIZE},
        items=lambda data: as_dict(data).get("results"),
        to_record=to_record,
    )
    if not host.asked(free=False) and host.asked(free=True):  # the budget is spent
        again = [d for d, lk in got.items() if lk.outcome in (Outcome.FAILED, Outcome.UNAVAILABLE)]
        singles = await asyncio.gather(*(get_by_doi(host, d) for d in again))
        for d, lk in zip(again, singles, strict=True):
            got[d] = host.lookup(method, lk.outcome, lk.records, lk.detail, lk.elapsed_ms)
    return got


async def search_title(host: HostClient, title: str, limit: int = 5) -> Lookup:
    """Works whose title matches (``filter=title.search:...``), best first."""
    method = Method.OPENALEX_TITLE_SEARCH
    clean = " ".join(re.sub(r"[,|:!&]", " ", title).split())
    if not clean:
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    result = await host.request(
        "GET", "/works", params={"filter": f"title.search:{clean}", "per-page": max(1, min(limit, 50))}
    )
    if not result.ok:
        return host.failed(method, result)
    data, why = decode_json(result)
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    results = as_dict(data).get("results")
    if status_of(result) != 200 or not isinstance(results, list):
        return host.lookup(
            method, Outcome.FAILED, [], f"HTTP {status_of(result)}: unexpected answer", result.elapsed_ms
        )
    records = [r for r in map(to_record, results) if r][:limit]
    return host.records_found(method, records, result.elapsed_ms)
