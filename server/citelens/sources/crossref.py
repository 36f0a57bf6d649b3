"""Crossref REST API: works by DOI and bibliographic search.

Crossref answers an unknown DOI with **404 text/plain** ``Resource not found.``;
that (and an empty ``items`` list) is ``NOT_FOUND``. ``mailto`` (the polite pool)
is added by the host client from Settings.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from citelens.core.identifiers import doi_as_written, normalize_doi
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, full_title, plain_title
from citelens.sources.transport import (
    HostClient,
    as_dict,
    as_list,
    decode_json,
    status_of,
    works_by_doi,
)

_TAG = re.compile(r"<[^>]+>")
_JATS_TITLE = re.compile(r"<jats:title>\s*abstract\s*</jats:title>", re.IGNORECASE)


def strip_jats(text: str | None) -> str | None:
    """Plain text of a JATS abstract (tags removed, entities decoded, spaces collapsed)."""
    if not text:
        return None
    text = _JATS_TITLE.sub(" ", text)
    out = " ".join(html.unescape(_TAG.sub(" ", text)).split())
    return out or None


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    return value.strip() if isinstance(value, str) and value.strip() else None


def year_of(work: dict[str, Any]) -> int | None:
    """Year from ``issued`` (else ``published``, ``published-print``, ``published-online``)."""
    for key in ("issued", "published", "published-print", "published-online"):
        parts = as_dict(work.get(key)).get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            y = parts[0][0]
            if isinstance(y, int):
                return y
            if isinstance(y, str) and y.isdigit():
                return int(y)
    return None


def author_names(authors: Any) -> list[str]:
    """Display names from Crossref/CSL author objects (given + family, or name/literal)."""
    out = []
    for a in authors if isinstance(authors, list) else []:
        a = as_dict(a)
        name = " ".join(str(a[k]).strip() for k in ("given", "family") if a.get(k))
        name = name or str(a.get("name") or a.get("literal") or "").strip()
        if name:
            out.append(name)
    return out


def _date(value: Any) -> str | None:
    """``YYYY[-MM[-DD]]`` from a Crossref date object (``date-parts``, else ``date-time``)."""
    d = as_dict(value)
    parts = d.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        nums = [p for p in parts[0][:3] if isinstance(p, int)]
        if nums and len(nums) == len(parts[0][:3]):
            return "-".join([f"{nums[0]:04d}", *(f"{n:02d}" for n in nums[1:])])
    stamp = d.get("date-time")
    return stamp[:10] if isinstance(stamp, str) and len(stamp) >= 10 else None


def notices_of(work: dict[str, Any]) -> list[dict[str, str]]:
    """Editorial notices from ``updated-by``: ``{updated, DOI, type, source, label[, record-id]}``
    (``source`` is "publisher" or, since 2023, "retraction-watch")."""
    out = []
    for u in as_list(work.get("updated-by")):
        u = as_dict(u)
        kind = str(u.get("type") or "").strip().lower().replace("-", "_").replace(" ", "_")
        if not kind:
            continue
        n = {"kind": kind, "source": str(u.get("source") or Source.PUBLISHER).strip().lower()}
        for key, value in (
            ("doi", normalize_doi(str(u.get("DOI") or "")) or None),
            ("date", _date(u.get("updated"))),
            ("label", str(u.get("label") or "").strip() or None),
            ("record_id", str(u.get("record-id") or "").strip() or None),
        ):
            if value:
                n[key] = value
        out.append(n)
    return out


def to_record(work: Any, source: str = Source.CROSSREF) -> PaperRecord | None:
    """A :class:`PaperRecord` from a Crossref work (``message`` of ``/works/{doi}``)."""
    if not isinstance(work, dict):
        return None
    title, title_cut = plain_title(
        full_title(plain_title(_first(work.get("title")))[0], plain_title(_first(work.get("subtitle")))[0])
    )
    doi = normalize_doi(_first(work.get("DOI")))
    if not title and not doi:
        return None
    typ = str(work.get("type") or "")
    count = work.get("is-referenced-by-count")
    authors, authors_cut = author_list(author_names(work.get("author")))
    return PaperRecord(
        source=source,
        title=title,
        authors=authors,
        authors_truncated=authors_cut,
        title_truncated=title_cut,
        year=year_of(work),
        venue=_first(work.get("container-title")),
        venue_alternates=[v for v in [_first(work.get("short-container-title"))] if v],
        doi=doi,
        doi_written=doi_as_written(_first(work.get("DOI"))),
        url=_first(work.get("URL")),
        abstract=strip_jats(_first(work.get("abstract"))),
        publication_types=[typ] if typ else [],
        volume=_first(work.get("volume")),
        issue=_first(work.get("issue")),
        pages=_first(work.get("page")),
        publisher=_first(work.get("publisher")),
        citation_count=count if isinstance(count, int) else None,
        is_preprint=typ == "posted-content",
        notices=notices_of(work),
    )


async def get_work(host: HostClient, doi: str) -> Lookup:
    """The Crossref work for ``doi`` (any case, with or without https://doi.org/)."""
    method = Method.CROSSREF_DOI
    bare = normalize_doi(doi)
    if bare is None:
        return host.lookup(method, Outcome.NOT_FOUND, [], "not a DOI")
    result = await host.request("GET", "/works/" + quote(bare, safe="/"))
    if not result.ok:
        return host.failed(method, result)
    assert result.response is not None
    status = status_of(result)
    if status == 404 and result.response.text.strip().startswith("Resource not found"):
        return host.lookup(method, Outcome.NOT_FOUND, [], f"{bare} not in Crossref", result.elapsed_ms)
    data, why = decode_json(result)
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    record = to_record(as_dict(data).get("message")) if status == 200 else None
    if record is None:
        return host.lookup(method, Outcome.FAILED, [], f"HTTP {status}: unexpected answer", result.elapsed_ms)
    return host.lookup(method, Outcome.FOUND, [record], "", result.elapsed_ms)


async def search_reference(host: HostClient, text: str, rows: int = 5) -> Lookup:
    """The works a whole printed reference describes (``query.bibliographic`` = the reference
    as printed: authors, title, venue, year in any order and style), best first. What
    Crossref's field is built for; callers must confirm a candidate against the text."""
    return await search(host, text[:1000], rows=rows, method=Method.CROSSREF_REFERENCE)


async def search(
    host: HostClient,
    title: str,
    author: str | None = None,
    rows: int = 5,
    method: Method = Method.CROSSREF_SEARCH,
) -> Lookup:
    """Bibliographic search (``query.bibliographic`` = title, ``query.author``), best first.

    Crossref always ranks *something* first: callers must compare titles.
    """
    if not title.strip():
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    params: dict[str, str | int] = {"query.bibliographic": title, "rows": max(1, min(rows, 50))}
    if author:
        params["query.author"] = author
    result = await host.request("GET", "/works", params=params)
    if not result.ok:
        return host.failed(method, result)
    data, why = decode_json(result)
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    items = as_dict(as_dict(data).get("message")).get("items")
    if status_of(result) != 200 or not isinstance(items, list):
        return host.lookup(
            method, Outcome.FAILED, [], f"HTTP {status_of(result)}: unexpected answer", result.elapsed_ms
        )
    records = [r for r in map(to_record, items) if r]
    return host.records_found(method, records, result.elapsed_ms)


BATCH_SIZE = 50


async def get_works(host: HostClient, dois: list[str]) -> dict[str, Lookup]:
    """Many works at once: ``/works?filter=doi:a,doi:b`` (the filter repeated is an OR),
    50 per request; one Lookup per DOI as given. A DOI absent from the answer is
    ``NOT_FOUND``; a DOI with a comma (which the filter cannot carry) is not asked."""
    return await works_by_doi(
        host,
        Method.CROSSREF_DOIS,
        dois,
        batch=BATCH_SIZE,
        missing="not in Crossref",
        params=lambda chunk: {"filter": ",".join(f"doi:{d}" for d in chunk), "rows": len(chunk)},
        items=lambda data: as_dict(as_dict(data).get("message")).get("items"),
        to_record=to_record,
        refuse=lambda doi: "not asked (comma in the DOI)" if "," in doi else None,
    )
