"""Semantic Scholar Graph API v1: single papers, batches, title match and search.

Every function takes the ``s2`` :class:`~citelens.sources.transport.HostClient` and
returns :class:`Lookup` values; remote problems become ``FAILED``/``UNAVAILABLE``,
and only S2's own "not found" answers (404 JSON ``{"error": ...}``, ``null`` in a
batch, a search without ``data``) become ``NOT_FOUND``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from citelens.core.identifiers import doi_as_written, normalize_arxiv, normalize_doi
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, plain_title
from citelens.sources.transport import HostClient, HostResult, as_dict, as_list, decode_json

FIELDS = (
    "paperId,corpusId,externalIds,title,authors,year,venue,publicationVenue,journal,"
    "publicationTypes,citationCount,openAccessPdf,url"
)
BATCH_SIZE = 500
_ARXIV_VENUES = {"arxiv", "arxiv.org"}


def fields(abstract: bool = False) -> str:
    """The ``fields`` parameter CiteLens asks for (abstract only when needed)."""
    return FIELDS + (",abstract" if abstract else "")


def _method(paper_id: str) -> str:
    kind = paper_id.split(":", 1)[0].lower() if ":" in paper_id else ""
    return {
        "doi": Method.S2_DOI_LOOKUP,
        "arxiv": Method.S2_ARXIV_LOOKUP,
        "pmid": Method.S2_PMID_LOOKUP,
        "pmcid": Method.S2_PMCID_LOOKUP,
        "corpusid": Method.S2_CORPUS_LOOKUP,
    }.get(kind, Method.S2_PAPER_LOOKUP)


_body = decode_json


def _error_text(data: Any) -> str:
    if isinstance(data, dict):
        return str(data.get("error") or data.get("message") or "")[:200]
    return ""


def _str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def to_record(data: Any) -> PaperRecord | None:
    """A :class:`PaperRecord` from one S2 paper object (``None`` if it is not one)."""
    if not isinstance(data, dict) or not data.get("paperId"):
        return None
    ext = as_dict(data.get("externalIds"))
    journal = as_dict(data.get("journal"))
    pv = as_dict(data.get("publicationVenue"))
    names = [n for n in (_str(data.get("venue")), _str(journal.get("name")), _str(pv.get("name"))) if n]
    venue = names[0] if names else None
    alternates: list[str] = []
    for n in [*names[1:], *as_list(pv.get("alternate_names"))]:
        if isinstance(n, str) and n and n != venue and n not in alternates:
            alternates.append(n)
    is_preprint = bool(names) and all(n.lower() in _ARXIV_VENUES for n in names)
    pdf = data.get("openAccessPdf")
    pmc = _str(ext.get("PubMedCentral"))
    corpus = data.get("corpusId", ext.get("CorpusId"))
    authors, authors_cut = author_list(
        [str(a["name"]) for a in as_list(data.get("authors")) if isinstance(a, dict) and a.get("name")]
    )
    title, title_cut = plain_title(str(data.get("title") or ""))
    return PaperRecord(
        source=Source.S2,
        title=title,
        authors=authors,
        authors_truncated=authors_cut,
        title_truncated=title_cut,
        year=data["year"] if isinstance(data.get("year"), int) else None,
        venue=venue,
        venue_alternates=alternates,
        doi=normalize_doi(_str(ext.get("DOI"))),
        doi_written=doi_as_written(_str(ext.get("DOI"))),
        arxiv_id=normalize_arxiv(_str(ext.get("ArXiv"))),
        pmid=_str(ext.get("PubMed")),
        pmcid=f"PMC{pmc}" if pmc and not pmc.upper().startswith("PMC") else pmc,
        s2_paper_id=str(data["paperId"]),
        corpus_id=corpus if isinstance(corpus, int) else None,
        url=_str(data.get("url")),
        abstract=_str(data.get("abstract")),
        publication_types=[str(t) for t in as_list(data.get("publicationTypes"))],
        volume=_str(journal.get("volume")),
        pages=_str(journal.get("pages")),
        citation_count=data.get("citationCount") if isinstance(data.get("citationCount"), int) else None,
        open_access_pdf=_str(pdf.get("url")) if isinstance(pdf, dict) else None,
        is_preprint=is_preprint,
    )


def _unexpected(host: HostClient, method: str, result: HostResult, data: Any) -> Lookup:
    assert result.response is not None
    status = result.response.status_code
    why = _error_text(data) or "unexpected answer"
    if status == 403:
        why = f"forbidden ({why}); is the API key valid?"
    return host.lookup(method, Outcome.FAILED, [], f"HTTP {status}: {why}", result.elapsed_ms)


async def get_paper(host: HostClient, paper_id: str, *, abstract: bool = False) -> Lookup:
    """One paper by id: ``DOI:10.x/..``, ``ARXIV:1706.03762``, ``PMID:..``, ``CorpusId:..``,
    or a bare 40-hex paperId. 404 ``{"error": ...}`` is ``NOT_FOUND``."""
    method = _method(paper_id)
    pid = paper_id.strip()
    if not pid:
        return host.lookup(method, Outcome.FAILED, [], "empty paper id")
    result = await host.request("GET", "/paper/" + quote(pid, safe="/:"), params={"fields": fields(abstract)})
    if not result.ok:
        return host.failed(method, result)
    data, why = _body(result)
    assert result.response is not None
    status = result.response.status_code
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    if status == 404 and isinstance(data, dict) and "error" in data:
        return host.lookup(method, Outcome.NOT_FOUND, [], _error_text(data), result.elapsed_ms)
    record = to_record(data) if status == 200 else None
    if record is None:
        return _unexpected(host, method, result, data)
    return host.lookup(method, Outcome.FOUND, [record], "", result.elapsed_ms)


async def get_batch(host: HostClient, ids: list[str], *, abstract: bool = False) -> dict[str, Lookup]:
    """Many papers at once (``POST /paper/batch``, 500 ids per request).

    Returns one Lookup per id as given; a ``null`` in S2's answer is ``NOT_FOUND``.
    """
    out: dict[str, Lookup] = {}
    unique = list(dict.fromkeys(i for i in ids if i.strip()))
    for start in range(0, len(unique), BATCH_SIZE):
        chunk = unique[start : start + BATCH_SIZE]
        result = await host.request(
            "POST", "/paper/batch", params={"fields": fields(abstract)}, json={"ids": chunk}
        )
        if not result.ok:
            out.update({i: host.failed(Method.S2_BATCH, result) for i in chunk})
            continue
        data, why = _body(result)
        assert result.response is not None
        if not why and (
            result.response.status_code != 200 or not isinstance(data, list) or len(data) != len(chunk)
        ):
            why = f"HTTP {result.response.status_code}: {_error_text(data) or 'unexpected answer'}"
        if why:
            out.update(
                {i: host.lookup(Method.S2_BATCH, Outcome.FAILED, [], why, result.elapsed_ms) for i in chunk}
            )
            continue
        for pid, item in zip(chunk, data, strict=True):
            if item is None:
                out[pid] = host.lookup(
                    Method.S2_BATCH,
                    Outcome.NOT_FOUND,
                    [],
                    f"{pid} not in Semantic Scholar",
                    result.elapsed_ms,
                )
                continue
            record = to_record(item)
            out[pid] = (
                host.lookup(Method.S2_BATCH, Outcome.FOUND, [record], "", result.elapsed_ms)
                if record
                else host.lookup(
                    Method.S2_BATCH, Outcome.FAILED, [], "unexpected item in batch answer", result.elapsed_ms
                )
            )
    return out


async def search_match(host: HostClient, title: str, *, abstract: bool = False) -> Lookup:
    """S2's single best title match (``/paper/search/match``); 404 = ``NOT_FOUND``."""
    method = Method.S2_TITLE_MATCH
    if not title.strip():
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    result = await host.request(
        "GET", "/paper/search/match", params={"query": title, "fields": fields(abstract)}
    )
    if not result.ok:
        return host.failed(method, result)
    data, why = _body(result)
    assert result.response is not None
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    status = result.response.status_code
    if status == 404 and isinstance(data, dict) and "error" in data:
        return host.lookup(method, Outcome.NOT_FOUND, [], _error_text(data), result.elapsed_ms)
    items = data.get("data") if status == 200 and isinstance(data, dict) else None
    if not isinstance(items, list):
        return _unexpected(host, method, result, data)
    records = [r for r in map(to_record, items) if r]
    return host.records_found(method, records, result.elapsed_ms, "")


async def search(host: HostClient, title: str, limit: int = 5, *, abstract: bool = False) -> Lookup:
    """Keyword search (``/paper/search``), best first; zero hits (no ``data``) = ``NOT_FOUND``."""
    method = Method.S2_SEARCH
    if not title.strip():
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    result = await host.request(
        "GET",
        "/paper/search",
        params={"query": title, "limit": max(1, min(limit, 100)), "fields": fields(abstract)},
    )
    if not result.ok:
        return host.failed(method, result)
    data, why = _body(result)
    assert result.response is not None
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    if result.response.status_code != 200 or not isinstance(data, dict):
        return _unexpected(host, method, result, data)
    items = data.get("data") or []
    if not isinstance(items, list):
        return _unexpected(host, method, result, data)
    records = [r for r in map(to_record, items) if r]
    return host.records_found(method, records, result.elapsed_ms)
