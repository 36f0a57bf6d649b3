"""NCBI E-utilities for PubMed: records by PMID (efetch XML) and title search.

An unknown PMID is absent from a 200 ``<PubmedArticleSet>`` (``NOT_FOUND``);
E-utilities report errors *inside* a 200 (``<ERROR>...``), which are ``FAILED``.
Structured abstracts are joined as ``LABEL: text`` paragraphs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from citelens.core.identifiers import normalize_doi, normalize_pmid
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, plain_title
from citelens.sources.transport import HostClient, HostResult, status_of

BATCH_SIZE = 200


def _text(el: ET.Element | None) -> str | None:
    if el is None:
        return None
    t = " ".join("".join(el.itertext()).split())
    return t or None


def _year(article: ET.Element) -> int | None:
    date = article.find(".//Journal/JournalIssue/PubDate")
    for t in (
        _text(date.find("Year")) if date is not None else None,
        _text(date.find("MedlineDate")) if date is not None else None,
        _text(article.find(".//ArticleDate/Year")),
    ):
        m = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", t or "")
        if m:
            return int(m.group(1))
    return None


def _abstract(article: ET.Element) -> str | None:
    parts = []
    for el in article.findall(".//Abstract/AbstractText"):
        text = _text(el)
        if text:
            label = el.get("Label")
            parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts) or None


#: ``CommentsCorrections/@RefType`` naming a notice about this article -> notice kind.
_NOTICE_REFS = {
    "RetractionIn": "retraction",
    "ExpressionOfConcernIn": "expression_of_concern",
    "ErratumIn": "erratum",
}


def _notices(item: ET.Element, types: list[str]) -> list[dict[str, str]]:
    """ "Retracted Publication" and the ``CommentsCorrections`` pointing at notices."""
    out = []
    for el in item.findall("MedlineCitation/CommentsCorrectionsList/CommentsCorrections"):
        kind = _NOTICE_REFS.get(el.get("RefType") or "")
        if kind is None:
            continue
        n = {"kind": kind, "source": Source.PUBMED}
        for key, value in (("pmid", _text(el.find("PMID"))), ("label", _text(el.find("RefSource")))):
            if value:
                n[key] = value
        out.append(n)
    if "Retracted Publication" in types and not any(n["kind"] == "retraction" for n in out):
        out.append({"kind": "retraction", "source": Source.PUBMED})
    return out


def to_record(item: ET.Element) -> PaperRecord | None:
    """A :class:`PaperRecord` from one ``<PubmedArticle>``."""
    pmid = _text(item.find("MedlineCitation/PMID"))
    article = item.find("MedlineCitation/Article")
    if pmid is None or article is None:
        return None
    title = _text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle")) or ""
    if title.endswith(".") and not title.endswith(".."):
        title = title[:-1]
    ids = {el.get("IdType"): _text(el) for el in item.findall("PubmedData/ArticleIdList/ArticleId")}
    doi = ids.get("doi") or next(
        (_text(e) for e in article.findall("ELocationID") if e.get("EIdType") == "doi"), None
    )
    authors = []
    for a in article.findall("AuthorList/Author"):
        name = " ".join(x for x in (_text(a.find("ForeName")), _text(a.find("LastName"))) if x)
        name = name or _text(a.find("CollectiveName")) or ""
        if name:
            authors.append(name)
    types = [t for el in article.findall("PublicationTypeList/PublicationType") if (t := _text(el))]
    title, title_cut = plain_title(title)
    authors, authors_cut = author_list(authors)
    return PaperRecord(
        source=Source.PUBMED,
        title=title,
        authors=authors,
        authors_truncated=authors_cut,
        title_truncated=title_cut,
        year=_year(article),
        venue=_text(article.find("Journal/Title")),
        venue_alternates=[v for v in [_text(article.find("Journal/ISOAbbreviation"))] if v],
        doi=normalize_doi(doi),
        pmid=pmid,
        pmcid=ids.get("pmc"),
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        abstract=_abstract(article),
        publication_types=types,
        volume=_text(article.find("Journal/JournalIssue/Volume")),
        issue=_text(article.find("Journal/JournalIssue/Issue")),
        pages=_text(article.find("Pagination/MedlinePgn")),
        notices=_notices(item, types),
    )


def parse_efetch(text: str | bytes) -> tuple[list[PaperRecord] | None, str]:
    """Records of an efetch answer, or ``(None, reason)`` for an error or a foreign body."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None, "unreadable answer (not XML)"
    error = _text(root.find(".//ERROR")) if root.tag != "PubmedArticleSet" else None
    if error or root.find("ERROR") is not None:
        return None, f"PubMed error: {error or 'unknown'}"
    if root.tag != "PubmedArticleSet":
        return None, f"unexpected answer (<{root.tag}>)"
    return [r for el in root.findall("PubmedArticle") if (r := to_record(el))], ""


async def _efetch(host: HostClient, pmids: list[str]) -> tuple[HostResult, list[PaperRecord] | None, str]:
    result = await host.request(
        "GET", "/efetch.fcgi", params={"db": "pubmed", "id": ",".join(pmids), "retmode": "xml"}
    )
    if not result.ok:
        return result, None, result.detail
    assert result.response is not None
    if status_of(result) != 200:
        return result, None, f"HTTP {status_of(result)}: unexpected answer"
    records, why = parse_efetch(result.response.content)
    return result, records, why


async def get_pubmed(host: HostClient, pmids: list[str]) -> dict[str, Lookup]:
    """PubMed records by PMID (200 per request); one Lookup per PMID as given."""
    method = Method.PUBMED_ID
    out: dict[str, Lookup] = {}
    wanted: dict[str, list[str]] = {}
    for given in pmids:
        p = normalize_pmid(given)
        if p is None:
            out[given] = host.lookup(method, Outcome.NOT_FOUND, [], f"{given!r} is not a PMID")
        else:
            wanted.setdefault(p, []).append(given)
    keys = list(wanted)
    for start in range(0, len(keys), BATCH_SIZE):
        chunk = keys[start : start + BATCH_SIZE]
        result, records, why = await _efetch(host, chunk)
        by_id = {r.pmid: r for r in records or [] if r.pmid}
        for p in chunk:
            lookup = host.batch_answer(
                method, result, why if records is None else "", by_id, p, f"PMID {p} not in PubMed"
            )
            for given in wanted[p]:
                out[given] = lookup
    return out


async def search_title(host: HostClient, title: str, limit: int = 5) -> Lookup:
    """PubMed records whose title matches (esearch ``"..."[Title]``, then efetch)."""
    method = Method.PUBMED_TITLE_SEARCH
    clean = " ".join(re.sub(r"[\"\[\]()]", " ", title).split())
    if not clean:
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    result = await host.request(
        "GET",
        "/esearch.fcgi",
        params={"db": "pubmed", "term": f'"{clean}"[Title]', "retmax": max(1, min(limit, 50))},
    )
    if not result.ok:
        return host.failed(method, result)
    assert result.response is not None
    try:
        root = ET.fromstring(result.response.content)
    except ET.ParseError:
        root = None
    if root is None or root.tag != "eSearchResult" or status_of(result) != 200:
        return host.lookup(method, Outcome.FAILED, [], "unreadable esearch answer", result.elapsed_ms)
    error = _text(root.find("ERROR"))
    if error:
        return host.lookup(method, Outcome.FAILED, [], f"PubMed error: {error}", result.elapsed_ms)
    ids = [t for el in root.findall("IdList/Id") if (t := _text(el))][:limit]
    if not ids:
        return host.lookup(method, Outcome.NOT_FOUND, [], "no search results", result.elapsed_ms)
    fetch, records, why = await _efetch(host, ids)
    elapsed = result.elapsed_ms + fetch.elapsed_ms
    if not fetch.ok:
        return host.failed(method, fetch)
    if records is None:
        return host.lookup(method, Outcome.FAILED, [], why, elapsed)
    order = {p: i for i, p in enumerate(ids)}
    records.sort(key=lambda r: order.get(r.pmid or "", len(order)))
    return host.records_found(method, records, elapsed, "no records")
