"""An entry's fields as plain Unicode and normalised identifiers (:class:`EntryView`).

:func:`entry_view` is what the verifier compares with scholarly records: title,
authors (editors when there are no authors), year, venue, and the identifiers
DOI, arXiv id, PMID and Semantic Scholar id, wherever the entry keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from urllib.parse import unquote

from citelens.core.model import BibEntry, BibField, EntryView
from citelens.documents.bibtex.names import split_names
from citelens.documents.bibtex.parse import crossref_lookup, resolve_crossref
from citelens.documents.latex_text import to_unicode

CrossrefSource = Callable[[str], BibEntry | None] | Mapping[str, BibEntry]

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_DOI_PREFIX = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/|^doi:\s*|^doi\s+|^urn:doi:", re.IGNORECASE
)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_IN_URL = re.compile(r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/(10\.\S+)$", re.IGNORECASE)
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_ID = re.compile(rf"^(?:arxiv:\s*)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"arxiv\.org/(?:abs|pdf|html)/({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?$",
    re.IGNORECASE,
)
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_IN_TEXT = re.compile(
    rf"\barxiv\s*(?:preprint)?\s*(?:arxiv)?\s*[:\s]\s*({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?\b",
    re.IGNORECASE,
)
_S2_ID = re.compile(r"^[0-9a-f]{40}$", re.IGNORECASE)
_ESCAPES = str.maketrans({"{": None, "}": None})
_ESCAPED = re.compile(r"\\([_%&#$~])")
_URL_MACRO = re.compile(r"^\\(?:url|href)\s*\{(.*?)\}", re.DOTALL)

#: Venue fields by entry type, in order of preference.
_VENUE_BY_TYPE: dict[str, tuple[str, ...]] = {
    "article": ("journal", "journaltitle"),
    "inproceedings": ("booktitle", "eventtitle", "series", "organization", "publisher"),
    "conference": ("booktitle", "eventtitle", "series", "organization", "publisher"),
    "incollection": ("booktitle", "series", "publisher"),
    "inbook": ("booktitle", "publisher"),
    "phdthesis": ("school", "institution"),
    "mastersthesis": ("school", "institution"),
    "thesis": ("school", "institution"),
    "techreport": ("institution", "school", "publisher"),
    "report": ("institution", "publisher"),
    "book": ("publisher", "series"),
    "booklet": ("howpublished", "publisher"),
    "manual": ("organization", "publisher", "institution"),
    "misc": ("howpublished", "publisher", "organization"),
    "online": ("organization", "publisher", "howpublished"),
}
_VENUE_FALLBACK = (
    "journal", "journaltitle", "booktitle", "school", "institution", "publisher",
    "howpublished", "organization",
)


def entry_view(entry: BibEntry, crossref: CrossrefSource | None = None) -> EntryView:
    """``entry`` as plain Unicode; ``crossref`` finds parents whose fields are inherited."""
    try:
        fields = _fields(entry, crossref)
        return _view(entry, fields)
    except Exception:  # pragma: no cover - defensive: never raise for odd input
        return EntryView(entry.key, entry.entry_type, "", (), False, None, "", None, None,
                         None, None, None)


def _fields(entry: BibEntry, crossref: CrossrefSource | None) -> dict[str, str]:
    raw: Mapping[str, BibField] = entry.fields
    if crossref is not None and entry.get("crossref"):
        lookup = _mapping_lookup(crossref) if isinstance(crossref, Mapping) else crossref
        raw = resolve_crossref(entry, lookup)
    return {name: f.value for name, f in raw.items()}


def _mapping_lookup(entries: Mapping[str, BibEntry]) -> Callable[[str], BibEntry | None]:
    """Exact keys first; a case-insensitive index is built only when that fails."""
    folded: list[Callable[[str], BibEntry | None]] = []

    def lookup(key: str) -> BibEntry | None:
        found = entries.get(key) or entries.get(key.strip())
        if found is None:
            if not folded:
                folded.append(crossref_lookup(entries))
            found = folded[0](key)
        return found

    return lookup


def _view(entry: BibEntry, f: dict[str, str]) -> EntryView:
    title = to_unicode(f.get("title", ""))
    subtitle = to_unicode(f.get("subtitle", ""))
    if subtitle:
        title = f"{title}: {subtitle}" if title else subtitle
    people = f.get("author") or f.get("editor") or ""
    names, truncated = split_names(people)
    doi = _doi(f)
    return EntryView(
        key=entry.key,
        entry_type=entry.entry_type,
        title=title,
        authors=tuple(names),
        authors_truncated=truncated,
        year=_year(f),
        venue=_venue(entry.entry_type, f),
        doi=doi,
        arxiv_id=_arxiv_id(f, doi),
        pmid=_pmid(f),
        s2_id=_s2_id(f),
        url=_url(f),
    )


def _year(f: Mapping[str, str]) -> int | None:
    """From ``year`` ("2019", "{2019a}"), else biblatex ``date`` ("2019-05-01", "2019/2020")."""
    for name in ("year", "date"):
        m = _YEAR.search(f.get(name, ""))
        if m is not None:
            return int(m.group(1))
    return None


def _venue(entry_type: str, f: Mapping[str, str]) -> str:
    for name in _VENUE_BY_TYPE.get(entry_type, ()) + _VENUE_FALLBACK:
        value = to_unicode(f.get(name, ""))
        if value:
            return value
    return ""


def _plain_id(value: str) -> str:
    """An identifier as written, without braces, escapes or ``\\url{}``."""
    value = value.strip()
    m = _URL_MACRO.match(value)
    if m is not None:
        value = m.group(1)
    return _ESCAPED.sub(r"\1", value).translate(_ESCAPES).strip()


def normalize_doi(value: str) -> str | None:
    """A bare, lower-case DOI (``10.x/y``) from a DOI, ``doi:`` or doi.org URL; else None."""
    doi = _plain_id(value)
    doi = _DOI_PREFIX.sub("", doi).strip()
    if "%" in doi:
        doi = unquote(doi)
    doi = doi.rstrip(".,;").lower()
    return doi if _DOI.match(doi) else None


def _doi(f: Mapping[str, str]) -> str | None:
    value = f.get("doi")
    if value:
        for part in re.split(r"\s+|,", _plain_id(value)):  # some list several DOIs
            doi = normalize_doi(part)
            if doi:
                return doi
    if (f.get("eprinttype") or "").lower() == "doi" and f.get("eprint"):
        doi = normalize_doi(f["eprint"])
        if doi:
            return doi
    for name in ("url", "howpublished", "note"):
        url = _plain_id(f.get(name, ""))
        m = _DOI_IN_URL.match(url)
        if m is not None:
            return normalize_doi(m.group(1))
    return None


def normalize_arxiv_id(value: str) -> str | None:
    """An arXiv id without version from an id, ``arXiv:`` id, arxiv.org URL or arXiv DOI."""
    text = _plain_id(value)
    for pattern in (_ARXIV_ID, _ARXIV_DOI):
        m = pattern.match(text)
        if m is not None:
            return m.group(1)
    m = _ARXIV_URL.search(text)
    return m.group(1) if m is not None else None


def _arxiv_id(f: Mapping[str, str], doi: str | None) -> str | None:
    prefix = (f.get("archiveprefix") or f.get("eprinttype") or "").strip().lower()
    eprint = f.get("eprint")
    if eprint and prefix in ("", "arxiv"):
        found = normalize_arxiv_id(eprint)
        if found:
            return found
    for name in ("arxiv", "arxivid", "arxiv_id"):
        if f.get(name):
            found = normalize_arxiv_id(f[name])
            if found:
                return found
    if doi:
        m = _ARXIV_DOI.match(doi)
        if m is not None:
            return m.group(1)
    for name in ("url", "pdf", "eprint", "howpublished", "note"):
        if f.get(name):
            m = _ARXIV_URL.search(_plain_id(f[name]))
            if m is not None:
                return m.group(1)
    for name in ("journal", "journaltitle", "booktitle", "howpublished", "note", "volume"):
        if f.get(name):
            m = _ARXIV_IN_TEXT.search(_plain_id(f[name]))
            if m is not None:
                return m.group(1)
    return None


def _pmid(f: Mapping[str, str]) -> str | None:
    value = _plain_id(f.get("pmid", ""))
    if value.lower().startswith("pmid:"):
        value = value[5:].strip()
    return value if value.isdigit() else None


def _s2_id(f: Mapping[str, str]) -> str | None:
    for name in ("s2id", "semantic_scholar_id", "s2_id", "s2paperid"):
        value = _plain_id(f.get(name, ""))
        if value:
            return value.lower() if _S2_ID.match(value) else value
    return None


def _url(f: Mapping[str, str]) -> str | None:
    value = _plain_id(f.get("url", ""))
    return value or None
