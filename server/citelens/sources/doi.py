"""doi.org content negotiation: CSL-JSON for any registered DOI (Crossref, DataCite, ...).

This is the way to check DOIs that Crossref does not know (DataCite: arXiv
``10.48550/arXiv.*``, Zenodo ``10.5281/zenodo.*``). The resolver answers 302 to the
registration agency; an unknown DOI is a **404 HTML** page ("DOI Not Found"),
which is ``NOT_FOUND``; a malformed one is 400 "Not a DOI" (also ``NOT_FOUND``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from citelens.core.identifiers import arxiv_of_doi, doi_as_written, normalize_doi
from citelens.core.source_names import Source
from citelens.sources.crossref import author_names, notices_of, strip_jats, year_of
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, full_title, plain_title
from citelens.sources.transport import HostClient, decode_json, status_of

CSL_JSON = "application/vnd.citationstyles.csl+json"


def _text(value: Any) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if isinstance(value, int | float):
        value = str(value)
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else None


def to_record(csl: Any) -> PaperRecord | None:
    """A :class:`PaperRecord` from a CSL-JSON item."""
    if not isinstance(csl, dict) or not _text(csl.get("title")):
        return None
    doi = normalize_doi(_text(csl.get("DOI")))
    publisher = _text(csl.get("publisher"))
    typ = str(csl.get("type") or "")
    arxiv = arxiv_of_doi(doi)
    preprint = bool(arxiv) or typ in {"posted-content"} or (publisher or "").lower() == "arxiv"
    title, title_cut = plain_title(
        full_title(plain_title(_text(csl.get("title")))[0], plain_title(_text(csl.get("subtitle")))[0])
    )
    authors, authors_cut = author_list(author_names(csl.get("author")))
    return PaperRecord(
        source=Source.DOI,
        title=title,
        authors=authors,
        authors_truncated=authors_cut,
        title_truncated=title_cut,
        year=year_of(csl),
        venue=_text(csl.get("container-title")),
        venue_alternates=[v for v in [_text(csl.get("container-title-short"))] if v],
        doi=doi,
        doi_written=doi_as_written(_text(csl.get("DOI"))),
        arxiv_id=arxiv,
        url=_text(csl.get("URL")),
        abstract=strip_jats(_text(csl.get("abstract"))),
        publication_types=[typ] if typ else [],
        volume=_text(csl.get("volume")),
        issue=_text(csl.get("issue")),
        pages=_text(csl.get("page")),
        publisher=publisher,
        is_preprint=preprint,
        notices=notices_of(csl),
    )


async def resolve_csl(host: HostClient, doi: str) -> Lookup:
    """Resolve ``doi`` through doi.org asking for CSL-JSON (redirects followed)."""
    method = Method.DOI_CSL
    bare = normalize_doi(doi)
    if bare is None:
        return host.lookup(method, Outcome.NOT_FOUND, [], "not a DOI")
    result = await host.request(
        "GET", "/" + quote(bare, safe="/"), headers={"Accept": CSL_JSON}, follow_redirects=True
    )
    if not result.ok:
        return host.failed(method, result)
    assert result.response is not None
    status = status_of(result)
    if status in (404, 410) or (status == 400 and "not a doi" in result.response.text.lower()):
        return host.lookup(method, Outcome.NOT_FOUND, [], f"{bare}: DOI not found", result.elapsed_ms)
    data, why = decode_json(result)
    if why:
        return host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
    record = to_record(data) if status == 200 else None
    if record is None:
        return host.lookup(method, Outcome.FAILED, [], f"HTTP {status}: unexpected answer", result.elapsed_ms)
    if record.doi is None:
        record.doi = bare
    return host.lookup(method, Outcome.FOUND, [record], "", result.elapsed_ms)
